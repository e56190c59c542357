import type { ModelEntry } from './catalog';
import { RequestCharge } from './request-charge';
import type { SettlementJournal } from './settlement-journal';
import type { AccountService } from '../accounts/service';
import { authOf, endpointOf, type GatewayContext } from '../http/context';
import { isAbort, upstreamToApiError, UpstreamError } from '../http/upstream-errors';
import type { Config } from '../config';
import type { RateLimiter } from '../http/rate-limit';
import { SseResponse } from '../http/sse';
import type { Channel } from '../upstreams/channel';
import type { Router } from '../upstreams/routing/router';

/** What the billing frame of a metered call uses. */
export interface MeteringDeps {
  readonly rateLimiter: Pick<RateLimiter, 'admit' | 'settleTokens'>;
  readonly accounts: AccountService;
  /** Where a settlement goes, so that the database going away after delivery loses no charge. */
  readonly settlements: Pick<SettlementJournal, 'settle'>;
  readonly config: Pick<Config, 'requestReservationTtlMs'>;
}

/**
 * The billing frame of every synchronous metered call: count the request against the key's rate
 * limit and its `tokens` against the key's tokens-per-minute limit (a 429 when over one, or with
 * `waitForTurnMs` a wait for the key's turn, then 502 `gateway_busy`), freeze the upper-bound estimate (402 when
 * short), run the call, and make sure the reservation is closed exactly once whatever happens:
 * `work` settles actual usage; an upstream failure releases it and answers in the client's terms.
 * The tokens counted at admission are then corrected by the usage settled (none when released).
 *
 * With `early`, `work` starts as soon as the account has accepted the reservation, while its event
 * commits (RequestCharge): for work whose only effect before it settles is the upstream call, so
 * that the call and the commit overlap. The answer still waits for the commit, here, and a stream
 * must not open before `charge.confirmed()` (openClientStream).
 */
export async function metered<T>(
  deps: MeteringDeps,
  ctx: GatewayContext,
  input: {
    model: ModelEntry;
    estimate: number;
    tokens?: number;
    waitForTurnMs?: number;
    early?: boolean;
    /** The router that picks the model's channels: a model none of whose channels it would ask is answered (Router.refusal) before anything is counted or reserved. */
    router?: Pick<Router, 'refusal'>;
  },
  work: (charge: RequestCharge) => Promise<T>,
): Promise<T> {
  const refused = input.router?.refusal(input.model);
  if (refused) throw upstreamToApiError(refused);
  const auth = authOf(ctx);
  const counted = await deps.rateLimiter.admit(auth, input.tokens ?? 0, input.waitForTurnMs === undefined ? null : { waitMs: input.waitForTurnMs });
  let charge: RequestCharge | null = null;
  try {
    charge = await RequestCharge.reserve(
      deps.accounts,
      deps.settlements,
      ctx.state,
      {
        accountId: auth.accountId,
        amount: input.estimate,
        requestId: ctx.state.requestId,
        model: input.model.id,
        actor: auth.keyId,
        endpoint: endpointOf(ctx),
        ttlMs: deps.config.requestReservationTtlMs,
      },
      { early: input.early ?? false, abort: abortOnDisconnect(ctx) },
    );
    return await run(charge, work);
  } finally {
    await deps.rateLimiter.settleTokens(counted, charge?.settledUsage ? usedTokens(charge.settledUsage) : 0);
  }
}

/** Runs `work` and closes `charge` exactly once, whatever happens. */
async function run<T>(charge: RequestCharge, work: (charge: RequestCharge) => Promise<T>): Promise<T> {
  try {
    const result = await work(charge);
    await charge.confirmed();
    return result;
  } catch (err) {
    // Waits for the reservation's commit; when that failed, its failure is the answer (the work
    // only failed because its upstream call was aborted for it, or its outcome does not count).
    const answer = err instanceof UpstreamError ? upstreamToApiError(err) : null;
    // The release's reason is in the account's ledger and request log: the answer's code, never the
    // upstream's words, which may name the operator's channel (docs/auditing.md).
    const reason = answer ? `upstream failed: ${answer.code}` : isAbort(err) ? 'client went away' : 'request failed';
    // A settle that failed for the failed commit left its rejection as the close: that is no news.
    await charge.release(reason).catch((closeFailed: unknown) => {
      if (charge.failure === null) throw closeFailed;
    });
    if (charge.failure !== null) throw charge.failure;
    throw answer ?? err;
  } finally {
    await charge.finish();
  }
}

/** The tokens a settlement's usage names: chat's prompt and completion tokens, or Responses' input and output tokens. */
function usedTokens(usage: Readonly<Record<string, unknown>>): number {
  const count = (name: string): number => (typeof usage[name] === 'number' ? (usage[name] as number) : 0);
  return count('prompt_tokens') + count('completion_tokens') + count('input_tokens') + count('output_tokens');
}

/**
 * The client's event stream, opened only once the request's reservation is durable, and the
 * upstream's events to relay on it. The first upstream event is pulled while the reservation
 * commits, so that it is read and parsed by the time the stream opens: the client's first byte
 * waits for the longer of the two, not for both in turn.
 */
export async function openClientStream<T>(
  charge: RequestCharge,
  ctx: GatewayContext,
  pingMs: number,
  upstream: AsyncGenerator<T>,
): Promise<{ sse: SseResponse; events: AsyncGenerator<T> }> {
  const first = upstream.next();
  // Read by the relay; a commit that fails comes first, and has aborted the upstream call.
  first.catch(() => undefined);
  try {
    await charge.confirmed();
    return { sse: new SseResponse(ctx, pingMs), events: startingWith(first, upstream) };
  } catch (err) {
    // Nothing will be relayed: let the upstream's events go (not awaited: its first may still be on its way).
    upstream.return(undefined).catch(() => undefined);
    throw err;
  }
}

/** `rest`'s items, the first of them already asked for (`first`); closes `rest` when the relay stops early. */
async function* startingWith<T>(first: Promise<IteratorResult<T>>, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    for (let next = await first; !next.done; next = await rest.next()) yield next.value;
  } finally {
    await rest.return(undefined);
  }
}

/**
 * The text a stream's relay delivered to its client. Text relayed once the client left (the
 * charge's signal aborted: events pulled while the reservation committed, or buffered with those
 * the client did get) reached no one: it is not counted, and the stream is cut short, to be settled
 * by what was delivered rather than by the upstream's usage. A client that left after the last
 * text still has its stream settled by the usage the upstream reported.
 */
export class Delivery {
  private delivered = '';
  private missed = false;

  constructor(private readonly signal: AbortSignal) {}

  add(text: string): void {
    if (this.signal.aborted) this.missed ||= text !== '';
    else this.delivered += text;
  }

  get text(): string {
    return this.delivered;
  }

  /** Throws the client's abort when text reached no one: the relay then settles what was delivered. */
  assertWhole(): void {
    if (this.missed) this.signal.throwIfAborted();
  }
}

/**
 * The request's abort controller, aborted when the client disconnects before its answer was
 * written (and by RequestCharge when the reservation fails to commit). It watches
 * the response, not the request: by the time a handler has read the body, the request stream has
 * already ended (and on Node 20 emitted its own 'close'), so only the response's 'close' tells a
 * client that left from one that is still waiting. A 'close' after the answer was fully written
 * (`writableEnded`) is the normal end of the exchange and aborts nothing.
 */
function abortOnDisconnect(ctx: GatewayContext): AbortController {
  const controller = new AbortController();
  const res = ctx.res;
  const onClose = (): void => {
    if (!res.writableEnded) controller.abort();
  };
  // The client may have left already (while the body was read or the funds reserved): 'close'
  // will not come again, so abort now.
  if (res.destroyed) onClose();
  else res.once('close', onClose);
  return controller;
}

/** What a metered call that picks its channel uses. */
export interface RoutingDeps {
  /** Picks the model's channel for each attempt, failing over before the first byte (src/upstreams/routing). */
  readonly router: Pick<Router, 'attempt' | 'refusal'>;
}

/**
 * metered's `router` for a call that may be pinned: a call continuing provider state goes to the
 * channel holding it whatever the others' state, so only an unpinned one is refused up front.
 */
export function unlessPinned(deps: RoutingDeps, only: string | undefined): { router?: RoutingDeps['router'] } {
  return only === undefined ? { router: deps.router } : {};
}

/**
 * Runs `call` on the model's channels as the router orders them (failover before the first byte)
 * and names the channel that served on the request's one charge: however many channels were
 * tried, the request holds one reservation, settled once, by the channel that served.
 */
export async function routedCall<T>(
  deps: RoutingDeps,
  model: ModelEntry,
  charge: RequestCharge,
  call: (channel: Channel) => Promise<T>,
  /** The channel holding the provider state the call continues (AttemptOptions.only). */
  only?: string,
): Promise<{ readonly value: T; readonly channel: string }> {
  const served = await deps.router.attempt(model, call, only === undefined ? { signal: charge.signal } : { signal: charge.signal, only });
  charge.servedBy(served.channel);
  return served;
}
