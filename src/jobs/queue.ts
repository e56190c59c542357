import type { Pool, PoolClient } from 'pg';
import { isDatabaseUnavailable } from '../db/unavailable';
import { FailureStreak } from './failure-streak';
import type { Logger } from '../log';
import { NotificationListener } from '../eventstore/postgres/notification-listener';

/**
 * Durable timers and side effects. Process managers write due jobs (in the transaction that
 * advances their checkpoint, so a job exists exactly when its cause was folded); workers claim
 * them with FOR UPDATE SKIP LOCKED and a lease, run the side effect outside any transaction, and
 * record its outcome as an event. A worker that dies mid-job leaves it to another once the lease
 * expires, so every handler must be idempotent (keyed by task, attempt or reservation).
 */
export interface Job {
  readonly id: string;
  readonly kind: string;
  readonly key: string;
  readonly payload: Record<string, unknown>;
  /** How many times this job has been claimed, this claim included. */
  readonly attempts: number;
}

/**
 * Done (the row is deleted), or run again at a time (a poll, a retry with backoff). A retry may
 * carry the payload its next run needs (e.g. a poll's count, for its backoff); without one the
 * payload stays as it was.
 */
export type JobOutcome = { done: true } | { retryAt: Date; payload?: Record<string, unknown> };

export type JobHandler = (job: Job) => Promise<JobOutcome>;

/** Inserts or moves a job; used by process managers inside their transaction. */
export async function scheduleJob(tx: PoolClient, kind: string, key: string, payload: Record<string, unknown>, dueAt: Date | string): Promise<void> {
  await tx.query(
    `INSERT INTO jobs (kind, key, payload, due_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (kind, key) DO UPDATE SET payload = EXCLUDED.payload, due_at = EXCLUDED.due_at, attempts = 0, last_error = NULL`,
    [kind, key, JSON.stringify(payload), dueAt],
  );
  await tx.query("SELECT pg_notify('jobs_due', '')");
}

/** The longest pause between claims while the database does not answer. */
const MAX_CLAIM_BACKOFF_MS = 10_000;
/** The longest wait between two tries of writing a run's outcome while the database is away. */
const MAX_OUTCOME_RETRY_MS = 2_000;

export interface WorkerOptions {
  readonly concurrency: number;
  /** A claim this long without an outcome is considered dead and the job is claimed again. */
  readonly leaseMs: number;
  readonly pollMs: number;
  /** Sees the outcome of every run: done (deleted), rescheduled by its handler, or failed (retried with backoff). */
  readonly onRun?: (kind: string, outcome: 'done' | 'rescheduled' | 'failed') => void;
}

export class JobWorker {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly listener: NotificationListener;
  private running = false;
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();
  /** Whether an idle loop is watching the queue (polling, timed to the next due job) for all of them. */
  private watching = false;
  private unlisten: (() => void) | null = null;
  private readonly claims = new FailureStreak();
  private claimError: string | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
    private readonly options: WorkerOptions,
  ) {
    this.listener = new NotificationListener(pool, 'jobs_due');
  }

  register(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  start(): void {
    this.running = true;
    this.unlisten = this.listener.onNotify(() => this.wakeOne());
    // One loop claims at start and, finding a job, wakes the next, as in steady state: every loop
    // claiming at once took a pooled connection each, mostly to find an empty queue.
    this.loops = Array.from({ length: this.options.concurrency }, (_, i) => this.loop(i === 0));
  }

  private wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }

  private wakeOne(): void {
    const [wake] = this.wakers;
    wake?.();
  }

  private async loop(claimAtOnce: boolean): Promise<void> {
    if (!claimAtOnce) await this.idle(null);
    while (this.running) {
      let job: (Job & { lease: string }) | null;
      const attempt = this.claims.begin();
      try {
        job = await this.claim();
      } catch (err) {
        this.claimFailed(err, attempt);
        await this.idle(this.backoffMs());
        continue;
      }
      this.claimSucceeded(attempt);
      if (job) {
        // More may be due: another loop looks while this one runs, and so on down the idle loops.
        this.wakeOne();
        await this.run(job);
      } else await this.waitForWork();
    }
  }

  /**
   * An idle loop waits for work. One of them watches the queue, timed to the next due job (at
   * most the poll interval); the others sleep until woken, by a job claimed (more may be due) or
   * a notification. Idle, a gateway polls once per interval, not once per loop.
   */
  private async waitForWork(): Promise<void> {
    if (this.watching) return this.idle(null);
    this.watching = true;
    try {
      await this.idle(await this.untilNextDue().catch(() => this.options.pollMs));
    } finally {
      this.watching = false;
    }
  }

  /** Null while claims succeed; otherwise the error that keeps the workers from claiming. */
  get problem(): string | null {
    if (!this.running) return 'stopped';
    return this.claimError;
  }

  /**
   * While the database is away every loop fails its claims: one warning for the outage (not one
   * per loop and poll), and the loops back off until a claim succeeds again (or the notification
   * listener, reconnected, wakes them).
   */
  private claimFailed(err: unknown, attempt: number): void {
    if (!this.running) return;
    const streak = this.claims.failed(attempt);
    if (streak === 'stale') return;
    if (streak === 'first') this.logger.warn({ err }, 'job claims failing; retrying with backoff until the database answers');
    this.claimError = (err as Error).message ?? String(err);
  }

  private claimSucceeded(attempt: number): void {
    const failedClaims = this.claims.succeeded(attempt);
    if (failedClaims === 0) return;
    this.logger.info({ failedClaims }, 'job claims succeed again');
    this.claimError = null;
  }

  /**
   * From the poll interval, doubling with every `concurrency` failed claims (a round of all the
   * loops, or as many retries of the one that claims while the others sleep), up to
   * MAX_CLAIM_BACKOFF_MS: a database that is away sees one claim per interval at most per loop.
   */
  private backoffMs(): number {
    const rounds = Math.floor(this.claims.count / this.options.concurrency);
    return Math.min(MAX_CLAIM_BACKOFF_MS, this.options.pollMs * 2 ** Math.min(rounds, 10));
  }

  /** Milliseconds until the earliest job becomes due (bounded by the poll interval), so timers fire on time. */
  private async untilNextDue(): Promise<number> {
    const { rows } = await this.pool.query<{ ms: number | null }>(
      `SELECT (extract(epoch FROM min(due_at) - now()) * 1000)::float8 AS ms FROM jobs
       WHERE kind = ANY($1) AND (locked_until IS NULL OR locked_until < now())`,
      [[...this.handlers.keys()]],
    );
    const ms = rows[0]?.ms;
    return ms === null || ms === undefined ? this.options.pollMs : Math.max(1, Math.min(this.options.pollMs, Math.ceil(ms)));
  }

  /** Until woken, or until `ms` have passed (null: only until woken). */
  private idle(ms: number | null): Promise<void> {
    // stop() wakes the loops idle at that moment; a loop whose claim was in flight comes here
    // after, and would sleep through the stop (forever, if another loop was watching the queue).
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = ms === null ? undefined : setTimeout(done, ms);
      const wakers = this.wakers;
      function done(): void {
        clearTimeout(timer);
        wakers.delete(done);
        resolve();
      }
      wakers.add(done);
    });
  }

  private async claim(): Promise<(Job & { lease: string }) | null> {
    const kinds = [...this.handlers.keys()];
    const { rows } = await this.pool.query<{ id: string; kind: string; key: string; payload: Record<string, unknown>; attempts: number; lease: string }>(
      `UPDATE jobs SET locked_until = now() + make_interval(secs => $1::double precision / 1000), attempts = attempts + 1
       WHERE id = (
         SELECT id FROM jobs
         WHERE due_at <= now() AND (locked_until IS NULL OR locked_until < now()) AND kind = ANY($2)
         ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING id, kind, key, payload, attempts, locked_until::text AS lease`,
      [this.options.leaseMs, kinds],
    );
    return rows[0] ?? null;
  }

  private async run(job: Job & { lease: string }): Promise<void> {
    const handler = this.handlers.get(job.kind)!;
    // The lease value fences the outcome: if our lease expired and another worker re-claimed the
    // job, our late outcome must not delete or move its claim.
    const lease = this.keepLeased(job);
    let outcome: JobOutcome;
    try {
      outcome = await handler(job);
    } catch (err) {
      const held = await lease.stop();
      this.options.onRun?.(job.kind, 'failed');
      const delayMs = Math.min(60_000, 200 * 2 ** Math.min(job.attempts, 10));
      this.logger.warn({ err, job: { kind: job.kind, key: job.key, attempts: job.attempts } }, 'job failed; retrying');
      await this.recordOutcome(() =>
        this.pool.query(
          `UPDATE jobs SET due_at = now() + make_interval(secs => $3::double precision / 1000), locked_until = NULL, last_error = $4
           WHERE id = $1 AND locked_until = $2::timestamptz`,
          [job.id, held, delayMs, String((err as Error).message ?? err).slice(0, 1000)],
        ),
      ).catch((e: unknown) => this.logger.error({ err: e }, 'could not reschedule a failed job'));
      return;
    }
    const held = await lease.stop();
    this.options.onRun?.(job.kind, 'done' in outcome ? 'done' : 'rescheduled');
    const done = outcome;
    await this.recordOutcome(() =>
      'done' in done
        ? this.pool.query('DELETE FROM jobs WHERE id = $1 AND locked_until = $2::timestamptz', [job.id, held])
        : this.pool.query(
            `UPDATE jobs SET due_at = $3, payload = COALESCE($4::jsonb, payload), locked_until = NULL, attempts = 0
             WHERE id = $1 AND locked_until = $2::timestamptz`,
            [job.id, held, done.retryAt, done.payload === undefined ? null : JSON.stringify(done.payload)],
          ),
    ).catch((e: unknown) => this.logger.error({ err: e, job: { kind: job.kind, key: job.key } }, 'could not record a job\'s outcome; it runs again once its lease runs out'));
  }

  /**
   * Writes a run's outcome. While the database cannot be reached (it went away while the job ran)
   * the write is tried again, until it lands or this worker stops: otherwise the job would wait
   * out its whole lease (JOB_LEASE_MS) once the database is back. A late write is safe: the lease
   * value fences it, so it changes nothing once another worker has claimed the job.
   */
  private async recordOutcome(write: () => Promise<unknown>): Promise<void> {
    for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, MAX_OUTCOME_RETRY_MS)) {
      try {
        await write();
        return;
      } catch (err) {
        if (!this.running || !isDatabaseUnavailable(err)) throw err;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  }

  /**
   * Renews the claim every third of the lease while the handler runs, so a long side effect (a
   * summary may take minutes) is not claimed and repeated by another worker; a dead process stops
   * renewing and its jobs are taken over once the lease runs out. `stop()` waits for a renewal in
   * flight and returns the lease value now held, the fence for recording the outcome.
   */
  private keepLeased(job: Job & { lease: string }): { stop(): Promise<string> } {
    let held = job.lease;
    let renewing: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      renewing = renewing.then(async () => {
        try {
          const { rows } = await this.pool.query<{ lease: string }>(
            `UPDATE jobs SET locked_until = now() + make_interval(secs => $3::double precision / 1000)
             WHERE id = $1 AND locked_until = $2::timestamptz RETURNING locked_until::text AS lease`,
            [job.id, held, this.options.leaseMs],
          );
          if (rows[0]) held = rows[0].lease;
          else this.logger.warn({ job: { kind: job.kind, key: job.key } }, 'job lease lost to another worker while running');
        } catch (err) {
          this.logger.warn({ err, job: { kind: job.kind, key: job.key } }, 'could not renew a job lease');
        }
      });
    }, Math.max(1, Math.floor(this.options.leaseMs / 3)));
    return {
      async stop() {
        clearInterval(timer);
        await renewing;
        return held;
      },
    };
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unlisten?.();
    this.wakeAll();
    await Promise.all(this.loops);
    await this.listener.close();
  }
}
