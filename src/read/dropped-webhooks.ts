import type { Pool } from 'pg';
import type { DeliveryView } from '../tasks/view-row';

export interface DroppedDelivery {
  readonly task_id: string;
  readonly kind: string;
  readonly account_id: string;
  readonly callback_url: string | null;
  readonly delivery: DeliveryView;
}

/**
 * Webhook deliveries that gave up (every attempt failed), across accounts, newest request first
 * (ties by delivery id). The tasks read model keeps each task's deliveries as a JSON array; a
 * partial index holds the tasks that have a dropped one, so this does not scan every task.
 */
export async function listDroppedDeliveries(
  pool: Pool,
  filter: { accountId: string | null },
  page: { after: { requestedAt: string; deliveryId: string } | null; limit: number },
): Promise<{ rows: DroppedDelivery[]; hasMore: boolean }> {
  const { rows } = await pool.query<DroppedDelivery>(
    `SELECT t.task_id, t.kind, t.account_id, t.callback->>'url' AS callback_url, d AS delivery
     FROM rm.tasks t CROSS JOIN LATERAL jsonb_array_elements(t.deliveries) d
     WHERE t.deliveries @> '[{"status":"dropped"}]' AND d->>'status' = 'dropped'
       AND ($1::text IS NULL OR t.account_id = $1)
       AND ($2::text IS NULL OR (d->>'requested_at', d->>'id') < ($2::text, $3::text))
     ORDER BY d->>'requested_at' DESC, d->>'id' DESC
     LIMIT $4`,
    [filter.accountId, page.after?.requestedAt ?? null, page.after?.deliveryId ?? null, page.limit + 1],
  );
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}
