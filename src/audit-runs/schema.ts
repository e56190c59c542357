import type { Migration } from '../db/migrations';

/** The audits run from the admin API: one row each, so the operator sees the last result and whether one runs. */
export const auditRunMigrations: readonly Migration[] = [
  {
    version: 300,
    name: 'audit runs',
    sql: `
      CREATE TABLE audit_runs (
        id text PRIMARY KEY,
        started_at timestamptz NOT NULL,
        finished_at timestamptz,
        -- running, passed, failed (mismatches or invariant violations), error (the audit could not finish)
        status text NOT NULL,
        report jsonb,
        error text,
        request_id text
      );
      CREATE INDEX audit_runs_started ON audit_runs (started_at);
    `,
  },
];
