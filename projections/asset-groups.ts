import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import { taskIdOfStream, type TaskEvent } from '../src/tasks/events';

/** Streams of verification sessions (the `asset_session` task kind, src/assets/session-kind.ts). */
const SESSION_STREAM_PREFIX = 'asset_session-';

/**
 * One row per asset group: whose it is, whether a person verified it (and the provider's id of the
 * group, which its images are added to, and the channel, the provider account, that holds it), and
 * its latest session. A group comes into being with
 * its first verification session and is verified by the first session that succeeds; later
 * sessions that fail leave it verified.
 */
export const assetGroupsProjection: Projection = defineProjection<TaskEvent>()({
  name: 'asset-groups',
  tables: ['asset_groups', 'asset_group_sessions'],
  ddl: `
    CREATE TABLE asset_groups (
      group_id text PRIMARY KEY,
      account_id text NOT NULL,
      name text,
      status text NOT NULL,
      upstream_group_id text,
      upstream_channel text,
      last_session_id text NOT NULL,
      created_at timestamptz NOT NULL,
      verified_at timestamptz
    );
    CREATE TABLE asset_group_sessions (
      session_id text PRIMARY KEY,
      group_id text NOT NULL,
      channel text
    );`,
  handles: ['TaskSubmitted', 'TaskUpstreamAccepted', 'TaskUpstreamSucceeded'],
  async apply(tx, event) {
    if (!event.streamId.startsWith(SESSION_STREAM_PREFIX)) return;
    const sessionId = taskIdOfStream(event.streamId);
    switch (event.type) {
      case 'TaskSubmitted': {
        const d = event.data;
        const request = d.request as { group_id: string; name: string | null };
        await tx.query('INSERT INTO asset_group_sessions (session_id, group_id) VALUES ($1, $2)', [sessionId, request.group_id]);
        await tx.query(
          `INSERT INTO asset_groups (group_id, account_id, name, status, last_session_id, created_at) VALUES ($1, $2, $3, 'unverified', $4, $5)
           ON CONFLICT (group_id) DO UPDATE SET last_session_id = EXCLUDED.last_session_id`,
          [request.group_id, d.accountId, request.name, sessionId, d.at],
        );
        return;
      }
      case 'TaskUpstreamAccepted':
        // The channel that opened the session names the group it verifies (absent before routing recorded it).
        await tx.query('UPDATE asset_group_sessions SET channel = $2 WHERE session_id = $1', [sessionId, event.data.channel ?? null]);
        return;
      case 'TaskUpstreamSucceeded': {
        const upstreamGroupId = (event.data.result as { upstream_group_id?: string }).upstream_group_id ?? null;
        await tx.query(
          `UPDATE asset_groups g SET status = 'verified', upstream_group_id = $2, upstream_channel = s.channel, verified_at = COALESCE(g.verified_at, $3)
           FROM asset_group_sessions s WHERE s.session_id = $1 AND g.group_id = s.group_id`,
          [sessionId, upstreamGroupId, event.data.at],
        );
        return;
      }
    }
  },
});
