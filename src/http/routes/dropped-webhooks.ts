import Router from '@koa/router';
import type { Pool } from 'pg';
import { listDroppedDeliveries } from '../../read/dropped-webhooks';
import type { GatewayState } from '../context';
import { listBody, pageParams } from '../pagination';
import { validator } from '../validation';
import { deliveryView } from './webhook-deliveries';

/** GET /admin/v1/webhooks/dropped: an optional account and the page. */
export const DROPPED_WEBHOOKS_QUERY_SCHEMA = {
  type: 'object',
  properties: {
    account_id: { type: 'string', minLength: 1, maxLength: 200 },
    after: { type: 'string' },
    limit: { type: 'string' },
  },
  additionalProperties: false,
} as const;
const parseQuery = validator<{ account_id?: string }>(DROPPED_WEBHOOKS_QUERY_SCHEMA);

/** The cursor is opaque to clients: the last delivery's request time and id. */
function encodeCursor(requestedAt: string, deliveryId: string): string {
  return Buffer.from(JSON.stringify([requestedAt, deliveryId])).toString('base64url');
}

function decodeCursor(raw: string): { requestedAt: string; deliveryId: string } | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2 || !value.every((v) => typeof v === 'string' && /^[\w:.+-]{1,200}$/.test(v))) return null;
    return { requestedAt: value[0], deliveryId: value[1] };
  } catch {
    return null;
  }
}

/**
 * The operator's list of webhook deliveries that were dropped after their last failed attempt,
 * with the task they belong to: the receivers that need a look. The owner can redeliver.
 */
export function droppedWebhooksRouter(pool: Pool): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1', sensitive: true });

  router.get('/webhooks/dropped', async (ctx) => {
    const q = parseQuery(ctx.query);
    const { after, limit } = pageParams(ctx.query, (raw) => decodeCursor(raw) !== null);
    const { rows, hasMore } = await listDroppedDeliveries(pool, { accountId: q.account_id ?? null }, { after: after === null ? null : decodeCursor(after), limit });
    ctx.body = listBody(
      rows.map((r) => ({ ...deliveryView(r.delivery), task_id: r.task_id, kind: r.kind, account_id: r.account_id, callback_url: r.callback_url })),
      hasMore,
      (d) => encodeCursor(d.requested_at, d.id),
    );
  });

  return router;
}
