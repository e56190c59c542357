import type { Migration } from '../db/migrations';

/** Tables of the consumer runtime (checkpoints) and of the durable job queue. */
export const runtimeMigrations: readonly Migration[] = [
  {
    version: 100,
    name: 'consumer checkpoints and jobs',
    sql: `
      CREATE TABLE consumer_checkpoints (
        name text PRIMARY KEY,
        major numeric(20, 0),
        minor numeric(20, 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- Due side effects written by process managers in the same transaction as their checkpoint.
      -- Workers claim rows with FOR UPDATE SKIP LOCKED; a claim is a lease that expires, so a
      -- worker that dies mid-job leaves the job to another worker.
      CREATE TABLE jobs (
        id bigserial PRIMARY KEY,
        kind text NOT NULL,
        key text NOT NULL,
        payload jsonb NOT NULL,
        due_at timestamptz NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        locked_until timestamptz,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (kind, key)
      );
      CREATE INDEX jobs_due ON jobs (due_at);
      CREATE SCHEMA IF NOT EXISTS rm;
    `,
  },
];
