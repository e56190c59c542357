import type { Pool } from 'pg';
import type { Snapshot, SnapshotStore } from '../snapshots';

/** Snapshots in es_snapshots (one row per stream, the state as JSON). */
export class PostgresSnapshotStore implements SnapshotStore {
  constructor(private readonly pool: Pool) {}

  async load<State>(streamId: string, schemaVersion: number): Promise<Snapshot<State> | null> {
    const { rows } = await this.pool.query<{ revision: string; state: State }>(
      'SELECT revision, state FROM es_snapshots WHERE stream_id = $1 AND schema_version = $2',
      [streamId, schemaVersion],
    );
    return rows[0] ? { revision: Number(rows[0].revision), state: rows[0].state } : null;
  }

  async save<State>(streamId: string, schemaVersion: number, snapshot: Snapshot<State>): Promise<void> {
    await this.pool.query(
      `INSERT INTO es_snapshots (stream_id, revision, schema_version, state) VALUES ($1, $2, $3, $4)
       ON CONFLICT (stream_id) DO UPDATE SET revision = EXCLUDED.revision, schema_version = EXCLUDED.schema_version, state = EXCLUDED.state
       WHERE es_snapshots.revision < EXCLUDED.revision OR es_snapshots.schema_version <> EXCLUDED.schema_version`,
      [streamId, snapshot.revision, schemaVersion, JSON.stringify(snapshot.state)],
    );
  }
}
