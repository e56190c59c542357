import type { Pool } from 'pg';
import type { TaskRow } from './view-row';

const COLUMNS = `task_id, kind, account_id, model, status, request, upstream_id, upstream_channel, upstream_status, progress, result, usage, artifacts,
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

/**
 * Up to `limit` unfinished tasks whose provider task lives on the channel (it accepted them: their
 * polls and cancels go there only), oldest first: the channel must not be deleted under them.
 */
export async function unfinishedTasksOn(pool: Pick<Pool, 'query'>, channel: string, limit: number): Promise<string[]> {
  const { rows } = await pool.query<{ task_id: string }>('SELECT task_id FROM rm.tasks WHERE upstream_channel = $1 AND finished_at IS NULL ORDER BY task_id LIMIT $2', [channel, limit]);
  return rows.map((r) => r.task_id);
}
