import type { Pool } from 'pg';

/** One answer of GET /readyz: ready, or the first reason it is not. */
export interface Readiness {
  readonly ready: boolean;
  readonly reason?: string;
}

export interface ReadinessSources {
  readonly pool: Pool;
  /** Versions every migration of this build; all must be recorded in schema_migrations. */
  readonly migrationVersions: readonly number[];
  /** Null while serving; otherwise why the process does not take traffic (starting, shutting down). */
  readonly lifecycle: () => string | null;
  /** Null while the consumers run; otherwise what keeps them from running. */
  readonly consumersProblem: () => string | null;
  /** Null while the job workers claim jobs; otherwise what keeps them from it. */
  readonly jobsProblem: () => string | null;
}

/** A database that does not answer within this is as good as gone for a load balancer. */
const DATABASE_CHECK_TIMEOUT_MS = 2000;

/**
 * Whether this gateway can serve: it is not starting or stopping, its database answers with
 * every migration applied, and its consumers and job workers run. The database is asked on
 * every call (a load balancer polls every few seconds), with a short deadline.
 */
export async function checkReadiness(sources: ReadinessSources): Promise<Readiness> {
  const lifecycle = sources.lifecycle();
  if (lifecycle) return { ready: false, reason: lifecycle };
  try {
    const applied = await withTimeout(
      sources.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations WHERE version = ANY($1)', [[...sources.migrationVersions]]),
      DATABASE_CHECK_TIMEOUT_MS,
    );
    const missing = sources.migrationVersions.length - (applied.rows[0]?.n ?? 0);
    if (missing > 0) return { ready: false, reason: `migrations: ${missing} not applied` };
  } catch (err) {
    return { ready: false, reason: `database: ${(err as Error).message}` };
  }
  const consumers = sources.consumersProblem();
  if (consumers) return { ready: false, reason: `consumers: ${consumers}` };
  const jobs = sources.jobsProblem();
  if (jobs) return { ready: false, reason: `jobs: ${jobs}` };
  return { ready: true };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  // The query may still finish (or fail) after the deadline: nobody waits for it then.
  work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
