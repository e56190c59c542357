import type { Pool } from 'pg';
import type { TaskRow } from '../tasks/view-row';

/** What `GET /v1/tasks` may filter on; every member optional, each list an OR. */
export interface TaskListFilter {
  readonly kinds?: readonly string[];
  readonly statuses?: readonly string[];
  readonly from?: Date;
  readonly to?: Date;
}

/** Where a page starts: the creation time (microseconds since the epoch) and id of the last task of the previous page. */
export interface TaskCursor {
  readonly createdMicros: bigint;
  readonly taskId: string;
}

const COLUMNS = `task_id, kind, account_id, model, status, request, upstream_id, upstream_status, progress, result, usage, artifacts,
  archived, archive_error, error, reserved_amount, billing_status, billed_amount, callback, deliveries, created_at, updated_at, finished_at`;

/**
 * An account's tasks of every kind, newest first by creation time (ties by id, so the order is
 * total and a cursor never skips or repeats a task). Reads the `tasks` read model as it stands:
 * a task created a moment ago may show up a moment later.
 */
export async function listAccountTasks(
  pool: Pool,
  accountId: string,
  filter: TaskListFilter,
  page: { after: TaskCursor | null; limit: number },
): Promise<{ rows: (TaskRow & { created_micros: string })[]; hasMore: boolean }> {
  const { rows } = await pool.query<TaskRow & { created_micros: string }>(
    `SELECT ${COLUMNS}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS created_micros
     FROM rm.tasks
     WHERE account_id = $1
       AND ($2::text[] IS NULL OR kind = ANY($2))
       AND ($3::text[] IS NULL OR status = ANY($3))
       AND ($4::timestamptz IS NULL OR created_at >= $4)
       AND ($5::timestamptz IS NULL OR created_at < $5)
       AND ($6::bigint IS NULL OR (created_at, task_id) < (timestamptz 'epoch' + $6::bigint * interval '1 microsecond', $7::text))
     ORDER BY created_at DESC, task_id DESC
     LIMIT $8`,
    [
      accountId,
      filter.kinds ?? null,
      filter.statuses ?? null,
      filter.from ?? null,
      filter.to ?? null,
      page.after ? page.after.createdMicros.toString() : null,
      page.after?.taskId ?? null,
      page.limit + 1,
    ],
  );
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/**
 * What was refunded of each of these tasks' charges (a refund is an account event: the task's own
 * record never hears of it), by task stream; tasks with no refund are absent. From the request log
 * (indexed by account and task), not the ledger view's reservations, which it would scan.
 */
export async function refundedByTask(pool: Pool, accountId: string, taskStreams: readonly string[]): Promise<Map<string, number>> {
  if (taskStreams.length === 0) return new Map();
  const { rows } = await pool.query<{ purpose_ref: string; refunded: string }>(
    `SELECT ref AS purpose_ref, sum(refunded)::text AS refunded FROM rm.request_log
     WHERE account_id = $1 AND ref = ANY($2) AND ref_kind = 'task' AND refunded > 0
     GROUP BY ref`,
    [accountId, taskStreams],
  );
  return new Map(rows.map((r) => [r.purpose_ref, Number(r.refunded)]));
}
