import type Router from '@koa/router';
import type { Clock } from '../../feature-types';
import { authOf, type GatewayContext, type GatewayState } from '../../http/context';
import { ApiError } from '../../http/errors';
import { upstreamToApiError, UpstreamError } from '../../http/upstream-errors';
import type { Upstreams } from '../../upstreams/registry';
import type { StoredResponse, StoredResponses } from './service';

export interface StoredResponseRouteDeps {
  readonly upstreams: Pick<Upstreams, 'channel' | 'hasChannel'>;
  readonly clock: Clock;
}

/** The one answer for every id the caller may not use: unknown, forged, another account's, deleted, made with `store: false`. */
export function responseNotFound(id: string, param: string | null = null): ApiError {
  return new ApiError(404, 'not_found', `No response with id '${id}' found`, { param });
}

/** A relayed call to the channel that made the Response; a provider's refusal in the client's terms (its 404 stays a 404). */
async function relay<T>(deps: StoredResponseRouteDeps, ctx: GatewayContext, stored: StoredResponse, method: 'GET' | 'DELETE', suffix: string): Promise<T> {
  const query = ctx.querystring ? `?${ctx.querystring}` : '';
  // Its channel was deleted or left out of CHANNELS: the provider account holding it is out of reach for good.
  if (!deps.upstreams.hasChannel(stored.channel)) throw responseNotFound(stored.responseId);
  try {
    return await deps.upstreams.channel(stored.channel).json<T>(method, `/responses/${encodeURIComponent(stored.responseId)}${suffix}${query}`);
  } catch (err) {
    if (err instanceof UpstreamError && err.status === 404) throw responseNotFound(stored.responseId);
    if (err instanceof UpstreamError) throw upstreamToApiError(err);
    throw err;
  }
}

/**
 * GET /v1/responses/{id}, DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items: the
 * caller's account's own Responses, relayed to the channel that made each. Any other id is 404
 * without reaching a provider. A Response keeps the gateway's model id, as when it was created.
 */
export function addStoredResponseRoutes(router: Router<GatewayState>, deps: StoredResponseRouteDeps, stored: StoredResponses): void {
  const own = async (ctx: GatewayContext): Promise<StoredResponse> => {
    const found = await stored.find(authOf(ctx).accountId, ctx.params.id!);
    if (!found) throw responseNotFound(ctx.params.id!);
    return found;
  };

  router.get('/v1/responses/:id', async (ctx) => {
    // Only an absent or `false` stream is a whole read: any other value (`1`, `True`, repeated) would ask the provider for a stream.
    if (ctx.query.stream !== undefined && ctx.query.stream !== 'false') throw new ApiError(400, 'unsupported_parameter', 'stream: a stored response is read whole, not streamed', { param: 'stream' });
    const response = await own(ctx);
    ctx.body = { ...(await relay<Record<string, unknown>>(deps, ctx, response, 'GET', '')), model: response.model };
  });

  router.get('/v1/responses/:id/input_items', async (ctx) => {
    ctx.body = await relay<Record<string, unknown>>(deps, ctx, await own(ctx), 'GET', '/input_items');
  });

  router.delete('/v1/responses/:id', async (ctx) => {
    const response = await own(ctx);
    const answer = await relay<Record<string, unknown>>(deps, ctx, response, 'DELETE', '');
    // A concurrent delete recorded first: this one found it gone.
    if (!(await stored.deleted(response, deps.clock().toISOString(), ctx.state.requestId))) throw responseNotFound(response.responseId);
    ctx.body = answer;
  });
}
