import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '../db/migrations';
import type { Projection } from './consumer';

/** What identifies a projection's table definitions: only its DDL counts, not the events it handles. */
export function ddlHash(projection: Projection): string {
  return createHash('sha256').update(projection.ddl).digest('hex');
}

/**
 * Creates each projection's tables in `schema`. A projection whose DDL changed since its tables
 * were created is dropped and its checkpoint reset, so it rebuilds itself from the log: read
 * models are disposable, the log is the truth.
 */
export async function ensureProjectionTables(pool: Pool, projections: readonly Projection[], schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await inTransaction(client, async () => {
      await client.query('SELECT pg_advisory_xact_lock(7316002)');
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.projection_versions (name text PRIMARY KEY, ddl_hash text NOT NULL)`);
      const { rows } = await client.query<{ name: string; ddl_hash: string }>(`SELECT name, ddl_hash FROM ${schema}.projection_versions`);
      const created = new Map(rows.map((r) => [r.name, r.ddl_hash]));
      for (const projection of projections) {
        const hash = ddlHash(projection);
        if (created.get(projection.name) === hash) continue;
        await dropTables(client, projection, schema);
        await createTables(client, projection, schema);
        await client.query(
          `INSERT INTO ${schema}.projection_versions (name, ddl_hash) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET ddl_hash = $2`,
          [projection.name, hash],
        );
        if (schema === 'rm') await client.query('DELETE FROM consumer_checkpoints WHERE name = $1', [projection.name]);
      }
    });
  } finally {
    client.release();
  }
}

async function createTables(client: PoolClient, projection: Projection, schema: string): Promise<void> {
  await client.query(`SET LOCAL search_path TO ${schema}`);
  await client.query(projection.ddl);
  await client.query('SET LOCAL search_path TO DEFAULT');
}

async function dropTables(client: PoolClient, projection: Projection, schema: string): Promise<void> {
  for (const table of projection.tables) await client.query(`DROP TABLE IF EXISTS ${schema}.${table} CASCADE`);
}

/** Empties a projection's tables and resets its checkpoint in one transaction: it replays from zero. */
export async function resetProjection(pool: Pool, projection: Projection, schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await inTransaction(client, async () => {
      // Taking the checkpoint row lock first waits for a batch in flight on a live gateway.
      await client.query('SELECT 1 FROM consumer_checkpoints WHERE name = $1 FOR UPDATE', [projection.name]);
      for (const table of projection.tables) await client.query(`TRUNCATE ${schema}.${table}`);
      await client.query('UPDATE consumer_checkpoints SET major = NULL, minor = NULL, updated_at = now() WHERE name = $1', [projection.name]);
    });
  } finally {
    client.release();
  }
}
