import type { Pool } from 'pg';
import type { AccountService } from '../accounts/service';
import type { EventStore } from '../eventstore/port';
import type { Logger } from '../log';

/**
 * Closes reservations whose owner died, so that no money stays frozen forever:
 * - a `request` reservation (one synchronous HTTP call) still open `settlementHorizonMs` after its
 *   expiry: the process that made it crashed before settling, and kept no settlement for it in its
 *   journal (src/billing/settlement-journal.ts), or kept one and stayed down that long; released.
 * - a `task` reservation whose task stream still does not exist after a grace period, or whose
 *   task was recorded with another reservation: the process crashed between reserving and
 *   recording the task (or lost its Idempotency-Key to a takeover that recorded it); released. A
 *   task that exists owns the reservation it recorded and its process manager closes it.
 * Runs in one gateway process at a time (an advisory lock); releasing is idempotent anyway.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
    private readonly accounts: AccountService,
    private readonly logger: Logger,
    private readonly options: {
      intervalMs: number;
      orphanGraceMs: number;
      /** How long past its expiry a request's reservation waits for a journaled settlement (SETTLEMENT_JOURNAL_HORIZON_MS). */
      settlementHorizonMs: number;
      clock?: () => Date;
      /** Candidates read a query (500). */
      pageSize?: number;
    },
  ) {}

  start(): void {
    const tick = (): void => {
      this.timer = setTimeout(() => {
        void this.runOnce()
          .catch((err: unknown) => this.logger.error({ err }, 'reconciler failed'))
          .finally(() => this.timer && tick());
      }, this.options.intervalMs);
      this.timer.unref();
    };
    tick();
  }

  /** One pass; returns how many reservations it released. */
  runOnce(): Promise<number> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    const client = await this.pool.connect();
    try {
      const { rows: lock } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(7316003) AS ok');
      if (!lock[0]!.ok) return 0;
      try {
        return await this.releaseDead();
      } finally {
        await client.query('SELECT pg_advisory_unlock(7316003)');
      }
    } finally {
      client.release();
    }
  }

  /**
   * Every candidate, page by page in reservation id order (a cursor that is exact, where the times
   * are microseconds that JavaScript dates round). A task reservation its task owns is skipped
   * here, in code, so one page can hold nothing but those: a pass that read one page (500 rows)
   * left the dead reservations behind 500 live tasks open for as long as those ran. A pass costs a
   * read of the task's first event per live task reservation older than the grace.
   */
  private async releaseDead(): Promise<number> {
    const now = this.options.clock?.() ?? new Date();
    const orphanBefore = new Date(now.getTime() - this.options.orphanGraceMs);
    const expiredBefore = new Date(now.getTime() - this.options.settlementHorizonMs);
    const pageSize = Math.max(1, this.options.pageSize ?? 500);
    let released = 0;
    let after = '';
    for (;;) {
      const { rows } = await this.pool.query<{ reservation_id: string; account_id: string; purpose_kind: string; purpose_ref: string }>(
        `SELECT reservation_id, account_id, purpose_kind, purpose_ref FROM rm.reservations
         WHERE status = 'open' AND reservation_id > $3 AND (
           (purpose_kind = 'request' AND expires_at < $1) OR
           (purpose_kind = 'task' AND reserved_at < $2))
         ORDER BY reservation_id LIMIT ${pageSize}`,
        [expiredBefore, orphanBefore, after],
      );
      for (const row of rows) {
        let reason = 'expired: the request never settled';
        if (row.purpose_kind === 'task') {
          const owner = await this.taskReservation(row.purpose_ref);
          if (owner === 'unknown' || owner === row.reservation_id) continue;
          reason = owner === null ? 'orphaned: the task was never recorded' : 'orphaned: the task was recorded with another reservation';
        }
        await this.accounts.release(row.account_id, row.reservation_id, reason, { actor: 'reconciler' });
        this.logger.warn({ reservationId: row.reservation_id, accountId: row.account_id, reason }, 'released a dead reservation');
        released++;
      }
      if (rows.length < pageSize) return released;
      after = rows[rows.length - 1]!.reservation_id;
    }
  }

  /**
   * The reservation the task recorded (TaskSubmitted), null when its stream does not exist. A
   * task records one: a request that reserved for an Idempotency-Key's task and crashed, or lost
   * the key to a takeover whose request recorded the task, left its own behind.
   */
  private async taskReservation(stream: string): Promise<string | null | 'unknown'> {
    const [first] = await this.store.readStream(stream, { maxCount: 1 });
    if (!first) return null;
    const reservationId = first.type === 'TaskSubmitted' ? (first.data as { reservationId?: unknown }).reservationId : undefined;
    // A stream that does not open as a task does is left alone, as every existing stream was.
    return typeof reservationId === 'string' ? reservationId : 'unknown';
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }
}
