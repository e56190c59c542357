import type { Pool, PoolClient } from 'pg';
import { runAudit, type AuditReport } from '../audit/audit';
import type { EventStore } from '../eventstore/port';
import { newId } from '../ids';
import type { Logger } from '../log';
import type { Projection } from '../projections-runtime/consumer';

/**
 * Held (session advisory lock; 7_316_001 to 7_316_003 are taken) by whichever process runs an audit from the admin API, for the
 * whole run: at most one runs at a time across gateway processes, and a run whose process died
 * is told from a live one by nobody holding it.
 */
export const AUDIT_LOCK_KEY = 7_316_004;

/** Connections of the replay pool: runAudit holds one for its replay transaction, and one more serves its short queries. */
const AUDIT_REPLAY_CONNECTIONS = 2;

/** Reservations open longer than this are listed as stale, as `npm run audit` does by default. */
export const AUDIT_STALE_AFTER_MS = 86_400_000;

export type AuditRunStatus = 'running' | 'passed' | 'failed' | 'error' | 'abandoned';

export interface AuditRunView {
  readonly object: 'audit.run';
  readonly id: string;
  readonly status: AuditRunStatus;
  readonly started_at: string;
  /** When it finished; for an abandoned run, when the next start found it abandoned. */
  readonly finished_at: string | null;
  readonly duration_ms: number | null;
  /** The audit's report once finished (the JSON `npm run audit` prints), else null. */
  readonly report: AuditReport | null;
  /** Why the audit could not finish (status `error`). */
  readonly error: string | null;
}

export class AuditAlreadyRunning extends Error {
  override readonly name = 'AuditAlreadyRunning';
}

export interface AuditRunsDeps {
  /** The gateway's pool: the audit_runs rows. */
  readonly pool: Pool;
  /**
   * Opens a pool of its own of `size` connections: one for the replay, which holds several
   * connections for the whole run (the requests served meanwhile keep theirs; runAudit uses all
   * but two of its pool and needs those two), one of a single connection holding the lock.
   * Both are closed when the run ends.
   */
  readonly openPool: (size: number) => Pool;
  readonly store: EventStore;
  readonly projections: readonly Projection[];
  readonly logger: Logger;
  readonly clock: () => Date;
}

interface RunRow {
  id: string;
  status: AuditRunStatus;
  started_at: Date;
  finished_at: Date | null;
  report: AuditReport | null;
  error: string | null;
}

/** `npm run audit`'s audit, run in the background of the gateway on the operator's request, its result kept in audit_runs. */
export class AuditRuns {
  private running: Promise<void> | null = null;

  constructor(private readonly deps: AuditRunsDeps) {}

  /** Starts an audit and answers its row at once; AuditAlreadyRunning when one runs (in any process). */
  async start(requestId: string): Promise<AuditRunView> {
    const lockPool = this.deps.openPool(1);
    let lockHolder: PoolClient | null = null;
    try {
      lockHolder = await lockPool.connect();
      const { rows } = await lockHolder.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [AUDIT_LOCK_KEY]);
      if (!rows[0]!.locked) throw new AuditAlreadyRunning('an audit is already running');
      // Rows left running by a process that died are closed as abandoned: nobody held the lock.
      await this.deps.pool.query(`UPDATE audit_runs SET status = 'abandoned', finished_at = $1 WHERE status = 'running'`, [this.deps.clock()]);
      const id = newId('aud');
      const { rows: inserted } = await this.deps.pool.query<RunRow>(
        `INSERT INTO audit_runs (id, started_at, status, request_id) VALUES ($1, $2, 'running', $3) RETURNING id, status, started_at, finished_at, report, error`,
        [id, this.deps.clock(), requestId],
      );
      const holder = lockHolder;
      lockHolder = null;
      this.running = this.complete(id, lockPool, holder).finally(() => (this.running = null));
      return view(inserted[0]!);
    } catch (err) {
      // Closing the pool ends the session, and with it the lock if it was taken.
      lockHolder?.release();
      await lockPool.end();
      throw err;
    }
  }

  /** The audit running now, if any, and the last one that finished. */
  async status(): Promise<{ running: AuditRunView | null; last: AuditRunView | null }> {
    const { rows } = await this.deps.pool.query<RunRow & { held: boolean }>(
      `SELECT id, status, started_at, finished_at, report, error,
              EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 AND objid = $1 AND objsubid = 1 AND granted
                      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS held
       FROM (SELECT * FROM audit_runs WHERE status = 'running' ORDER BY started_at DESC LIMIT 1) r
       UNION ALL
       SELECT id, status, started_at, finished_at, report, error, false
       FROM (SELECT * FROM audit_runs WHERE status <> 'running' ORDER BY finished_at DESC NULLS LAST, started_at DESC LIMIT 1) f`,
      [AUDIT_LOCK_KEY],
    );
    // A running row nobody holds the lock for belongs to a process that died mid-audit: not running
    // (the next start closes it as abandoned).
    const open = rows.find((r) => r.status === 'running' && r.held) ?? null;
    const last = rows.find((r) => r.status !== 'running') ?? null;
    return { running: open ? view(open) : null, last: last ? view(last) : null };
  }

  /** Waits for an audit this process runs to end (shutdown: the replay pool closes with it). */
  async stop(): Promise<void> {
    await this.running;
  }

  /** `lockHolder` (of `lockPool`) stays checked out, so its session, holding the lock, lives until the run ends. */
  private async complete(id: string, lockPool: Pool, lockHolder: PoolClient): Promise<void> {
    const log = this.deps.logger.child({ auditRun: id });
    const replayPool = this.deps.openPool(AUDIT_REPLAY_CONNECTIONS);
    let outcome: { status: 'passed' | 'failed'; report: AuditReport } | { status: 'error'; error: string };
    try {
      const report = await runAudit(replayPool, this.deps.store, this.deps.projections, { staleAfterMs: AUDIT_STALE_AFTER_MS });
      outcome = { status: report.ok ? 'passed' : 'failed', report };
      log[report.ok ? 'info' : 'error']({ mismatches: report.mismatches, invariantViolations: report.invariantViolations }, `audit ${outcome.status}`);
    } catch (err) {
      outcome = { status: 'error', error: (err as Error).message };
      log.error({ err }, 'audit could not finish');
    }
    try {
      // On the session holding the lock, which is given up inside the transaction that records the
      // result: once a reader sees the run finished, the lock is free, so the next start it asks
      // for is not refused; a start that takes the lock before this commits waits for the row in
      // its sweep of abandoned runs, and then finds it finished.
      await lockHolder.query('BEGIN');
      await lockHolder.query(`UPDATE audit_runs SET status = $2, finished_at = $3, report = $4, error = $5 WHERE id = $1`, [
        id,
        outcome.status,
        this.deps.clock(),
        'report' in outcome ? JSON.stringify(outcome.report) : null,
        'error' in outcome ? outcome.error : null,
      ]);
      await lockHolder.query('SELECT pg_advisory_unlock($1)', [AUDIT_LOCK_KEY]);
      await lockHolder.query('COMMIT');
    } catch (err) {
      await lockHolder.query('ROLLBACK').catch(() => undefined);
      log.error({ err }, 'the audit result could not be recorded');
    } finally {
      lockHolder.release();
      for (const pool of [replayPool, lockPool]) await pool.end().catch((err: unknown) => log.warn({ err }, 'closing an audit pool failed'));
    }
  }
}

function view(row: RunRow): AuditRunView {
  return {
    object: 'audit.run',
    id: row.id,
    status: row.status,
    started_at: row.started_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
    duration_ms: row.finished_at ? row.finished_at.getTime() - row.started_at.getTime() : null,
    report: row.report,
    error: row.error,
  };
}
