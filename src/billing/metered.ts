import type { ModelEntry } from './catalog';
import { RequestCharge } from './request-charge';
import type { AuthenticatedKey } from '../accounts/service';
import type { Core } from '../gateway';
import { authOf, endpointOf, type GatewayContext } from '../http/context';
import { isAbort, upstreamToApiError, UpstreamError } from '../http/upstream-errors';

/**
 * The billing frame of every synchronous metered call: count the request against the key's rate
 * limit (`admit`; by default a 429 when over it), freeze the upper-bound estimate (402 when
 * short), run the call, and make sure the reservation is closed exactly once whatever happens: `work` settles actual usage; an upstream
 * failure releases it and answers in the client's terms.
 */
export async function metered<T>(
  core: Core,
  ctx: GatewayContext,
  input: { model: ModelEntry; estimate: number; admit?: (auth: AuthenticatedKey) => Promise<void> },
  work: (charge: RequestCharge) => Promise<T>,
): Promise<T> {
  const auth = authOf(ctx);
  if (input.admit) await input.admit(auth);
  else core.rateLimiter.take(auth.keyId, auth.rateLimitPerMinute);
  const charge = await RequestCharge.reserve(core.accounts, ctx.state.logger, {
    accountId: auth.accountId,
    amount: input.estimate,
    requestId: ctx.state.requestId,
    model: input.model.id,
    actor: auth.keyId,
    endpoint: endpointOf(ctx),
    ttlMs: core.config.requestReservationTtlMs,
  });
  try {
    return await work(charge);
  } catch (err) {
    await charge.release(err instanceof UpstreamError ? `upstream failed: ${err.message}` : isAbort(err) ? 'client went away' : 'request failed');
    if (err instanceof UpstreamError) throw upstreamToApiError(err);
    throw err;
  } finally {
    await charge.finish();
  }
}

/**
 * Aborts an upstream call when the client disconnects before its answer was written. It watches
 * the response, not the request: by the time a handler has read the body, the request stream has
 * already ended (and on Node 20 emitted its own 'close'), so only the response's 'close' tells a
 * client that left from one that is still waiting. A 'close' after the answer was fully written
 * (`writableEnded`) is the normal end of the exchange and aborts nothing.
 */
export function abortOnDisconnect(ctx: GatewayContext): AbortSignal {
  const controller = new AbortController();
  const res = ctx.res;
  const onClose = (): void => {
    if (!res.writableEnded) controller.abort();
  };
  // The client may have left already (while the body was read or the funds reserved): 'close'
  // will not come again, so abort now.
  if (res.destroyed) onClose();
  else res.once('close', onClose);
  return controller.signal;
}
