import type { Pool } from 'pg';
import type { TaskRow } from '../tasks/view-row';
import { ASSET_KIND } from './asset-kind';

/** A row of the `asset_groups` read model (projections/asset-groups.ts). */
export interface AssetGroupRow {
  readonly group_id: string;
  readonly account_id: string;
  readonly name: string | null;
  readonly status: 'unverified' | 'verified';
  readonly upstream_group_id: string | null;
  /** The channel (provider account) holding the verified group: its images and re-verifications go there only; null before, and for groups verified before it was recorded. */
  readonly upstream_channel: string | null;
  readonly last_session_id: string;
  readonly created_at: Date;
  readonly verified_at: Date | null;
}

/** The account's group; null for unknown ids and other accounts' groups alike. */
export async function readGroup(pool: Pool, groupId: string, accountId: string): Promise<AssetGroupRow | null> {
  const { rows } = await pool.query<AssetGroupRow>('SELECT * FROM rm.asset_groups WHERE group_id = $1 AND account_id = $2', [groupId, accountId]);
  return rows[0] ?? null;
}

/** The group's assets, newest first; `after` is the id of the last asset of the previous page. */
export async function listGroupAssets(pool: Pool, groupId: string, accountId: string, page: { after: string | null; limit: number }): Promise<{ rows: TaskRow[]; hasMore: boolean }> {
  const { rows } = await pool.query<TaskRow>(
    `SELECT * FROM rm.tasks WHERE kind = $1 AND account_id = $2 AND request->>'group_id' = $3 AND ($4::text IS NULL OR task_id < $4)
     ORDER BY task_id DESC LIMIT $5`,
    [ASSET_KIND, accountId, groupId, page.after, page.limit + 1],
  );
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

export function renderGroup(group: AssetGroupRow): Record<string, unknown> {
  return {
    id: group.group_id,
    object: 'asset_group',
    name: group.name,
    status: group.status,
    last_session_id: group.last_session_id,
    created_at: group.created_at.toISOString(),
    verified_at: group.verified_at?.toISOString() ?? null,
  };
}
