import { EventEmitter } from 'node:events';
import type { Pool } from 'pg';
import { inTransaction } from '../db/migrations';
import { comparePositions, type EventStore, type GlobalPosition, type LogSubscription, type RecordedEvent } from '../eventstore/port';
import type { Logger } from '../log';
import { applyEvents, type Consumer } from './consumer';
import type { LeaseHolder } from './leases';

/** The checkpoint moved under us (a rebuild reset it, or another instance advanced it). */
class CheckpointMoved extends Error {}

export async function readCheckpoint(db: Pool, name: string): Promise<GlobalPosition | null> {
  const { rows } = await db.query<{ major: string | null; minor: string | null }>(
    'SELECT major::text, minor::text FROM consumer_checkpoints WHERE name = $1',
    [name],
  );
  const row = rows[0];
  return row?.major != null && row.minor != null ? { major: BigInt(row.major), minor: BigInt(row.minor) } : null;
}

function samePosition(a: GlobalPosition | null, b: GlobalPosition | null): boolean {
  return a === null || b === null ? a === b : comparePositions(a, b) === 0;
}

/**
 * Runs one consumer: while this process holds its lease, subscribes to the log from the stored
 * checkpoint and applies each batch plus the new checkpoint in one transaction.
 */
export class ConsumerRunner extends EventEmitter {
  private subscription: LogSubscription | null = null;
  private position: GlobalPosition | null = null;
  private active = false;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
    readonly consumer: Consumer,
    private readonly logger: Logger,
    private readonly schema: string,
  ) {
    super();
    this.setMaxListeners(0);
  }

  /** Position this process has committed, while it is the active instance; otherwise null. */
  get localPosition(): GlobalPosition | null {
    return this.active ? this.position : null;
  }

  get isActive(): boolean {
    return this.active;
  }

  start(leases: LeaseHolder): void {
    leases.want(this.consumer.name, (held) => {
      if (held) void this.activate();
      else void this.deactivate();
    });
  }

  /** Runs without a lease until the log head is reached: for CLIs (rebuild, audit). */
  async catchUp(): Promise<void> {
    await this.ensureCheckpointRow();
    this.position = await readCheckpoint(this.pool, this.consumer.name);
    for (;;) {
      const batch = await this.store.readAll(this.position, 1000);
      if (batch.length === 0) return;
      await this.applyBatch(batch);
    }
  }

  private async activate(): Promise<void> {
    if (this.stopped || this.active) return;
    this.active = true;
    await this.subscribeFromCheckpoint();
  }

  private async subscribeFromCheckpoint(): Promise<void> {
    try {
      await this.ensureCheckpointRow();
      this.position = await readCheckpoint(this.pool, this.consumer.name);
    } catch (err) {
      this.scheduleRestart(err);
      return;
    }
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

  private scheduleRestart(err: unknown): void {
    this.subscription = null;
    if (this.stopped || !this.active) return;
    if (!(err instanceof CheckpointMoved)) this.logger.error({ err, consumer: this.consumer.name }, 'consumer failed; restarting from its checkpoint');
    const delay = err instanceof CheckpointMoved ? 0 : 1000;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      void this.subscribeFromCheckpoint();
    }, delay);
  }

  private async ensureCheckpointRow(): Promise<void> {
    await this.pool.query('INSERT INTO consumer_checkpoints (name) VALUES ($1) ON CONFLICT DO NOTHING', [this.consumer.name]);
  }

  private async applyBatch(batch: readonly RecordedEvent[]): Promise<void> {
    const last = batch[batch.length - 1]!.position;
    const client = await this.pool.connect();
    try {
      await inTransaction(client, async () => {
        const { rows } = await client.query<{ major: string | null; minor: string | null }>(
          'SELECT major::text, minor::text FROM consumer_checkpoints WHERE name = $1 FOR UPDATE',
          [this.consumer.name],
        );
        const stored = rows[0]?.major != null ? { major: BigInt(rows[0].major), minor: BigInt(rows[0].minor!) } : null;
        if (!samePosition(stored, this.position)) throw new CheckpointMoved();
        await client.query(`SET LOCAL search_path TO ${this.schema}, public`);
        await applyEvents(this.consumer, client, batch);
        await client.query('UPDATE consumer_checkpoints SET major = $2, minor = $3, updated_at = now() WHERE name = $1', [
          this.consumer.name,
          last.major.toString(),
          last.minor.toString(),
        ]);
      });
    } finally {
      client.release();
    }
    this.position = last;
    this.emit('advanced', last);
  }

  private async deactivate(): Promise<void> {
    this.active = false;
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.close();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    await this.deactivate();
  }
}
