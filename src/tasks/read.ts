import type { Pool } from 'pg';
import type { TaskRow } from './view-row';

const COLUMNS = `task_id, kind, account_id, model, status, request, upstream_id, upstream_status, progress, result, usage, artifacts,
  archived, archive_error, error, reserved_amount, billing_status, billed_amount, callback, deliveries, created_at, updated_at, finished_at`;

export async function readTask(pool: Pool, kind: string, taskId: string, accountId: string): Promise<TaskRow | null> {
  const { rows } = await pool.query<TaskRow>(`SELECT ${COLUMNS} FROM rm.tasks WHERE task_id = $1 AND kind = $2 AND account_id = $3`, [taskId, kind, accountId]);
  return rows[0] ?? null;
}

/** Newest first; `after` is the id of the last task of the previous page (ids sort by creation time). */
export async function listTasks(pool: Pool, kind: string, accountId: string, page: { after: string | null; limit: number }): Promise<{ rows: TaskRow[]; hasMore: boolean }> {
  const { rows } = await pool.query<TaskRow>(
    `SELECT ${COLUMNS} FROM rm.tasks WHERE account_id = $1 AND kind = $2 AND ($3::text IS NULL OR task_id < $3) ORDER BY task_id DESC LIMIT $4`,
    [accountId, kind, page.after, page.limit + 1],
  );
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}
