import { EventEmitter } from 'node:events';
import type { Pool } from 'pg';
import { comparePositions, type EventStore, type GlobalPosition, type LogSubscription, type RecordedEvent } from '../eventstore/port';
import type { Logger } from '../log';
import { CheckpointMoved, oneTransactionEach, readCheckpoints, samePosition, type CheckpointCommitter } from './checkpoint-commit';
import type { Consumer } from './consumer';
import type { LeaseHolder } from './leases';

/** The wait before restarting a failed consumer, doubling with each failed restart up to the longest. */
const FIRST_RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 10_000;

/** How long the checkpoint row may trail a position reached through foreign events only. */
const CHECKPOINT_FLUSH_MS = 100;

export interface ConsumerRunnerOptions {
  /**
   * Default CHECKPOINT_FLUSH_MS; tests set it long to observe the checkpoint before the flush. A
   * checkpoint that has trailed a quarter of it is stored with the next batch instead (applyBatch).
   */
  readonly checkpointFlushMs?: number;
  /** The clock that times how long a checkpoint trails (Date.now by default; tests move their own). */
  readonly now?: () => number;
  /**
   * How batches and checkpoints are committed; by default a transaction each. The gateway's runners
   * share a GroupCommitter (one transaction for the consumers woken together).
   */
  readonly committer?: CheckpointCommitter;
  /** The first wait before a restart after a failure (FIRST_RESTART_DELAY_MS); tests set it beyond their length, which also lifts the longest. */
  readonly restartDelayMs?: number;
}

export async function readCheckpoint(db: Pool, name: string): Promise<GlobalPosition | null> {
  return (await readCheckpoints(db, [name])).get(name)!;
}

/**
 * Runs one consumer: while this process holds its lease, subscribes to the log from the stored
 * checkpoint and applies each batch plus the new checkpoint in one transaction.
 */
export class ConsumerRunner extends EventEmitter {
  private subscription: LogSubscription | null = null;
  /** Position folded (in memory). */
  private position: GlobalPosition | null = null;
  /** Position stored in the checkpoint row; behind `position` while only foreign events were seen. */
  private committed: GlobalPosition | null = null;
  /** Batches and checkpoint flushes run one at a time. */
  private serial: Promise<void> = Promise.resolve();
  private flushTimer: NodeJS.Timeout | null = null;
  /** When `position` last moved ahead of `committed` (through foreign events); null while they agree. */
  private trailingSince: number | null = null;
  /** A flush is queued or running: batches meanwhile leave the row to it, and to what follows it. */
  private flushing = false;
  /** Starts of the subscription: one that a later restart overtook while it opened its checkpoint subscribes nothing. */
  private starts = 0;
  /** Checkpoint flushes that failed in a row (a database outage): only the first one warns. */
  private flushFailures = 0;
  private active = false;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | null = null;
  /** Restarts that failed in a row, for the backoff. */
  private failures = 0;
  private readonly committer: CheckpointCommitter;

  constructor(
    pool: Pool,
    private readonly store: EventStore,
    readonly consumer: Consumer,
    private readonly logger: Logger,
    schema: string,
    private readonly options: ConsumerRunnerOptions = {},
  ) {
    super();
    this.setMaxListeners(0);
    this.committer = options.committer ?? oneTransactionEach(pool, schema);
  }

  /** Position this process has committed, while it is the active instance; otherwise null. */
  get localPosition(): GlobalPosition | null {
    return this.active ? this.position : null;
  }

  get isActive(): boolean {
    return this.active;
  }

  /** Its last restart failed (the database is away, or the consumer throws): it does not run now. */
  get isFailing(): boolean {
    return this.failures > 0;
  }

  start(leases: LeaseHolder): void {
    leases.want(this.consumer.name, (held) => {
      if (held) void this.activate();
      else void this.deactivate();
    });
  }

  /**
   * Catching up without a lease, for CLIs (rebuild), driven from outside so that one read of the
   * log feeds several consumers: startCatchUp, then foldPage with consecutive pages of the log
   * from `caughtUpTo`. Throws CheckpointMoved when another instance moved the checkpoint.
   */
  async startCatchUp(): Promise<void> {
    this.position = this.committed = await this.committer.openCheckpoint(this.consumer.name);
  }

  get caughtUpTo(): GlobalPosition | null {
    return this.position;
  }

  /** Folds the next page of the log (it must start right after caughtUpTo) and commits its checkpoint. */
  async foldPage(page: readonly RecordedEvent[]): Promise<void> {
    if (page.length > 0) await this.commit(page, page[page.length - 1]!.position);
  }

  private async activate(): Promise<void> {
    if (this.stopped || this.active) return;
    this.active = true;
    await this.subscribeFromCheckpoint();
  }

  private async subscribeFromCheckpoint(): Promise<void> {
    const start = ++this.starts;
    try {
      const checkpoint = await this.committer.openCheckpoint(this.consumer.name);
      if (start !== this.starts) return;
      this.position = this.committed = checkpoint;
      this.trailingSince = null;
    } catch (err) {
      if (start === this.starts) this.scheduleRestart(err);
      return;
    }
    if (this.failures > 0) this.logger.info({ consumer: this.consumer.name }, 'consumer running again');
    this.failures = 0;
    if (!this.active || this.stopped) return;
    const subscription = this.store.subscribe({ from: this.position, onBatch: (batch) => this.applyBatch(batch) });
    this.subscription = subscription;
    subscription.done.then(
      () => undefined,
      (err: unknown) => {
        if (this.subscription === subscription) this.scheduleRestart(err);
      },
    );
  }

  /** The checkpoint moved (a rebuild reset it): start again from it. */
  private async resubscribe(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.close();
    this.scheduleRestart(new CheckpointMoved());
  }

  private scheduleRestart(err: unknown): void {
    this.subscription = null;
    // One restart at a time: a second cause (a failed flush beside a failed batch) changes nothing,
    // and two would leave two subscriptions folding the same events.
    if (this.stopped || !this.active || this.restartTimer) return;
    let delay = 0;
    if (!(err instanceof CheckpointMoved)) {
      // While the database is away every restart fails too: one error, then quieter and slower retries.
      if (this.failures++ === 0) this.logger.error({ err, consumer: this.consumer.name }, 'consumer failed; restarting from its checkpoint');
      else this.logger.debug({ err, consumer: this.consumer.name, failures: this.failures }, 'consumer restart failed; retrying');
      const first = this.options.restartDelayMs ?? FIRST_RESTART_DELAY_MS;
      delay = Math.min(Math.max(MAX_RESTART_DELAY_MS, first), first * 2 ** Math.min(this.failures - 1, 10));
    }
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      void this.subscribeFromCheckpoint();
    }, delay);
  }

  /**
   * A batch with events of the consumer's types is folded and checkpointed in one transaction. A
   * batch without any only moves the position in memory (what this process's readers wait on);
   * the checkpoint row follows within CHECKPOINT_FLUSH_MS. Under load most consumers see mostly
   * foreign events, and a transaction per wake-up for each of them was most of the database's
   * work. Re-reading foreign events after a crash costs nothing but the read.
   *
   * Under load the row follows sooner and costs no transaction of its own: once it has trailed a
   * quarter of the flush delay, the next batch asks for the flush in its own turn, where the
   * GroupCommitter puts it in the transaction of the consumers that fold that batch (or of the
   * other trailing ones). A timer flush was a transaction on its own every 100 ms, with its own
   * durable commit, and these slowed the requests served beside them (docs/benchmarks.md, "Where
   * the one-connection tail comes from"). A quarter leaves the batching window (50 ms by
   * default) room to vary before the timer fires first.
   */
  private applyBatch(batch: readonly RecordedEvent[]): Promise<void> {
    const last = batch[batch.length - 1]!.position;
    if (!batch.some((event) => this.consumer.eventTypes.has(event.type))) {
      this.position = last;
      this.emit('advanced', last);
      const now = this.now();
      this.trailingSince ??= now;
      if (now - this.trailingSince >= this.flushMs / 4) this.flushNow();
      else this.flushSoon();
      return Promise.resolve();
    }
    return this.inSerial(() => this.commit(batch, last));
  }

  private get flushMs(): number {
    return this.options.checkpointFlushMs ?? CHECKPOINT_FLUSH_MS;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private inSerial(work: () => Promise<void>): Promise<void> {
    const run = this.serial.then(work);
    this.serial = run.catch(() => undefined);
    return run;
  }

  private flushSoon(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => this.flushNow(), this.flushMs);
  }

  /**
   * Stores the position now: the commit is asked for in this turn, since nothing else of this
   * consumer's is under way when the flush starts (one flush at a time, and a subscription hands
   * over no batch while the last one commits). Retries later if it fails.
   */
  private flushNow(): void {
    this.clearFlushTimer();
    if (this.flushing) return;
    this.flushing = true;
    void this.flush()
      .then(
        () => {
          this.flushFailures = 0;
        },
        (err: unknown) => {
          if (err instanceof CheckpointMoved) return void this.resubscribe();
          // Try again: no further batch may come to carry the position into the row. One warning
          // per streak of failures (a database outage), not one per retry.
          if (this.flushFailures++ === 0) this.logger.warn({ err, consumer: this.consumer.name }, 'could not store a consumer checkpoint');
          else this.logger.debug({ err, consumer: this.consumer.name, failures: this.flushFailures }, 'could not store a consumer checkpoint yet');
        },
      )
      .finally(() => {
        this.flushing = false;
        // What came while it ran: the next batch takes it along, or the timer stores it.
        if (this.subscription && !samePosition(this.position, this.committed)) this.flushSoon();
      });
  }

  private clearFlushTimer(): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
  }

  /** Stores the in-memory position when only foreign events moved it. */
  private flush(): Promise<void> {
    return this.inSerial(async () => {
      const position = this.position;
      if (position && !samePosition(position, this.committed)) await this.commit([], position);
    });
  }

  /** Folds `batch` and stores `last` as the checkpoint in one transaction (see CheckpointCommitter). */
  private async commit(batch: readonly RecordedEvent[], last: GlobalPosition): Promise<void> {
    await this.committer.commit({ consumer: this.consumer, expected: this.committed, batch, last });
    this.committed = last;
    if (!this.position || comparePositions(last, this.position) > 0) this.position = last;
    // A position reached while this commit ran trails from now on.
    this.trailingSince = samePosition(this.position, this.committed) ? null : this.now();
    this.emit('advanced', last);
  }

  private async deactivate(): Promise<void> {
    this.active = false;
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.close();
    this.clearFlushTimer();
    // Best effort, after any flush under way: the next holder of the lease would otherwise re-read
    // the foreign events. Nothing to do when the row holds the position.
    await this.flush().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    await this.deactivate();
  }
}
