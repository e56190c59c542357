import Router from '@koa/router';
import type { DeliveryView, TaskRow } from '../../tasks/view-row';
import { authOf, type GatewayState } from '../context';
import { ApiError } from '../errors';
import { listBody, pageParams } from '../pagination';
import { validator } from '../validation';

/** GET /v1/videos/generations/{id}/webhook/deliveries: only the page. */
export const DELIVERY_LIST_QUERY_SCHEMA = {
  type: 'object',
  properties: { after: { type: 'string' }, limit: { type: 'string' } },
  additionalProperties: false,
} as const;
const parseQuery = validator<{ after?: string; limit?: string }>(DELIVERY_LIST_QUERY_SCHEMA);

export interface DeliveryListDeps {
  /** The caller's video task, as fresh as its stream; null for unknown ids and other accounts' tasks. */
  readonly readVideo: (taskId: string, accountId: string) => Promise<TaskRow | null>;
}

/**
 * A video task's webhook deliveries, newest first, each with every attempt: when, the HTTP status
 * or the error, how long it took, and the signature headers it carried. Next to the redeliver
 * route, so the owner can see why a receiver refused a callback and send it again.
 */
export function webhookDeliveriesRouter(deps: DeliveryListDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ sensitive: true });

  router.get('/v1/videos/generations/:id/webhook/deliveries', async (ctx) => {
    parseQuery(ctx.query);
    const row = await deps.readVideo(ctx.params.id!, authOf(ctx).accountId);
    if (!row) throw new ApiError(404, 'task_not_found', `video task ${ctx.params.id} not found`);
    const newestFirst = [...row.deliveries].reverse();
    const { after, limit } = pageParams(ctx.query, (raw) => newestFirst.some((d) => d.id === raw));
    const start = after === null ? 0 : newestFirst.findIndex((d) => d.id === after) + 1;
    const page = newestFirst.slice(start, start + limit);
    ctx.body = {
      ...listBody(page.map(deliveryView), start + limit < newestFirst.length, (d) => d.id),
      callback_url: row.callback?.url ?? null,
      signed: row.callback?.signed ?? false,
    };
  });

  return router;
}

/** A delivery as the API shows it (attempts recorded before signatures were kept show them as null). */
export function deliveryView(d: DeliveryView) {
  return {
    object: 'webhook.delivery' as const,
    id: d.id,
    reason: d.reason,
    status: d.status,
    requested_at: d.requested_at,
    attempts: d.attempts.map((a) => ({
      attempt: a.attempt,
      at: a.at,
      ok: a.ok,
      status_code: a.status_code,
      error: a.error,
      duration_ms: a.duration_ms,
      timestamp: a.timestamp ?? null,
      signature: a.signature ?? null,
    })),
  };
}
