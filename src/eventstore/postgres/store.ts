import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import {
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedVersion,
  type GlobalPosition,
  type LogSubscription,
  type NewEvent,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamHead,
  type SubscribeOptions,
  WrongExpectedVersionError,
} from '../port';
import { NotificationListener } from './notification-listener';

interface EventRow {
  position: string;
  tx_text: string;
  stream_id: string;
  revision: string;
  event_id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  recorded_at: Date;
}

const EVENT_COLUMNS = 'position, tx_id::text AS tx_text, stream_id, revision, event_id, type, data, metadata, recorded_at';

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: Number(row.revision),
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    position: { major: BigInt(row.tx_text), minor: BigInt(row.position) },
    recordedAt: row.recorded_at,
  };
}

function expectedArgs(expected: ExpectedVersion): [string, number | null] {
  return typeof expected === 'number' ? ['exact', expected] : [expected, null];
}

export interface PostgresEventStoreOptions {
  readonly pool: Pool;
  /** Fallback poll for subscribers when no notification arrives (a notification may be missed). */
  readonly pollIntervalMs?: number;
}

export class PostgresEventStore implements EventStore {
  readonly kind = 'postgres' as const;
  private readonly pool: Pool;
  private readonly pollIntervalMs: number;
  private readonly listener: NotificationListener;

  constructor(options: PostgresEventStoreOptions) {
    this.pool = options.pool;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.listener = new NotificationListener(this.pool, 'es_appended');
  }

  async append(streamId: string, events: readonly NewEvent[], options: { expectedVersion: ExpectedVersion }): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    const [kind, expected] = expectedArgs(options.expectedVersion);
    const { rows } = await this.pool.query<{ ok: boolean; revision: string; tx_id: string | null; last_position: string | null }>(
      'SELECT ok, revision, tx_id::text AS tx_id, last_position FROM es_append($1, $2, $3, $4, $5, $6, $7)',
      [
        streamId,
        kind,
        expected,
        events.map((e) => e.id ?? randomUUID()),
        events.map((e) => e.type),
        events.map((e) => JSON.stringify(e.data ?? null)),
        events.map((e) => JSON.stringify(e.metadata ?? {})),
      ],
    );
    const row = rows[0]!;
    if (!row.ok) throw new WrongExpectedVersionError(streamId, options.expectedVersion, Number(row.revision));
    return {
      nextExpectedVersion: Number(row.revision),
      position: { major: BigInt(row.tx_id!), minor: BigInt(row.last_position!) },
    };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM es_events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision LIMIT $3`,
      [streamId, options.fromRevision ?? 0, options.maxCount ?? null],
    );
    return rows.map(toRecorded);
  }

  async streamHead(streamId: string): Promise<StreamHead | null> {
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM es_events WHERE stream_id = $1 ORDER BY revision DESC LIMIT 1`,
      [streamId],
    );
    if (rows.length === 0) return null;
    const last = toRecorded(rows[0]!);
    return { revision: last.revision, position: last.position };
  }

  async readAll(from: GlobalPosition | null, limit: number): Promise<RecordedEvent[]> {
    return readAllWith(this.pool, from, limit);
  }

  private readonly inFlight = new Map<string, Promise<unknown>>();

  /**
   * For subscriptions: identical reads in flight at once share one query. Every consumer of this
   * process wakes on the same notification and asks for the same page of the log (and whether
   * anything is held back); without sharing, each of them queried on every wake-up, most of the
   * database's work under load. A query is shared only within one notification round, so a
   * subscriber woken for an append never gets a query that started before that append was
   * notified; and a page read below xmin is final, so a shared page is as good as a fresh one.
   * (Direct callers of readAll are not shared: they must see their own appends.)
   */
  private shared<T>(what: string, query: () => Promise<T>): Promise<T> {
    const key = `${this.listener.generation} ${what}`;
    const existing = this.inFlight.get(key) as Promise<T> | undefined;
    if (existing) return existing;
    const started = query().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, started);
    return started;
  }

  /** readAll, shared among the subscriptions of one notification round. */
  readAllForSubscription(from: GlobalPosition | null, limit: number): Promise<RecordedEvent[]> {
    return this.shared(`readAll ${from ? `${from.major}/${from.minor}` : '-'} ${limit}`, () => readAllWith(this.pool, from, limit));
  }

  /** hasHeldBackEvents, shared among the subscriptions of one notification round. */
  hasHeldBackEventsForSubscription(): Promise<boolean> {
    return this.shared('hasHeldBackEvents', () => this.hasHeldBackEvents());
  }

  async headPosition(): Promise<GlobalPosition | null> {
    const { rows } = await this.pool.query<{ tx_text: string; position: string }>(
      `SELECT tx_id::text AS tx_text, position FROM es_events
       WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot())
       ORDER BY tx_id DESC, position DESC LIMIT 1`,
    );
    return rows.length === 0 ? null : { major: BigInt(rows[0]!.tx_text), minor: BigInt(rows[0]!.position) };
  }

  /**
   * Whether committed events exist that readers cannot see yet because an older transaction is
   * still open (their tx_id is not below xmin). A subscriber that was woken for them re-reads
   * soon instead of waiting for the next notification, which the older transaction may never send.
   */
  async hasHeldBackEvents(): Promise<boolean> {
    // max() walks the global-order index from its end; a plain `WHERE tx_id >= xmin LIMIT 1` was
    // planned as a sequential scan, reading the whole log whenever nothing is held back.
    const { rows } = await this.pool.query<{ held: boolean | null }>(
      'SELECT max(tx_id) >= pg_snapshot_xmin(pg_current_snapshot()) AS held FROM es_events',
    );
    return rows[0]?.held === true;
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    return new PollingSubscription(this, this.listener, this.pollIntervalMs, options);
  }

  async close(): Promise<void> {
    await this.listener.close();
  }
}

export async function readAllWith(db: Pool | PoolClient, from: GlobalPosition | null, limit: number): Promise<RecordedEvent[]> {
  const visible = 'tx_id < pg_snapshot_xmin(pg_current_snapshot())';
  const { rows } = from
    ? await db.query<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM es_events
         WHERE (tx_id, position) > ($1::text::xid8, $2::bigint) AND ${visible}
         ORDER BY tx_id, position LIMIT $3`,
        [from.major.toString(), from.minor.toString(), limit],
      )
    : await db.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM es_events WHERE ${visible} ORDER BY tx_id, position LIMIT $1`, [limit]);
  return rows.map(toRecorded);
}

const HELD_BACK_RETRY_MS = 5;

/**
 * Reads the log after the last delivered position; when caught up, sleeps until a NOTIFY from an
 * append (debounced by the listener) or the fallback poll interval, whichever comes first.
 */
class PollingSubscription implements LogSubscription {
  readonly done: Promise<void>;
  private closed = false;
  private wake: (() => void) | null = null;
  /**
   * A notification came since the last read began. One that arrives while the subscription reads
   * or applies a batch (no `wake` to call) must not be lost, or the event waits a whole poll interval.
   */
  private notified = false;

  constructor(
    private readonly store: PostgresEventStore,
    private readonly listener: NotificationListener,
    private readonly pollIntervalMs: number,
    private readonly options: SubscribeOptions,
  ) {
    this.done = this.run();
  }

  private async run(): Promise<void> {
    let position = this.options.from;
    const batchSize = this.options.batchSize ?? 500;
    const unlisten = this.listener.onNotify(() => {
      this.notified = true;
      this.wake?.();
    });
    // Re-reads behind a long transaction back off from a few milliseconds to the poll interval.
    let heldBackDelay = HELD_BACK_RETRY_MS;
    try {
      while (!this.closed) {
        this.notified = false;
        const batch = await this.store.readAllForSubscription(position, batchSize);
        if (this.closed) return;
        if (batch.length > 0) {
          heldBackDelay = HELD_BACK_RETRY_MS;
          await this.options.onBatch(batch);
          position = batch[batch.length - 1]!.position;
          if (batch.length === batchSize) continue;
        }
        if (await this.store.hasHeldBackEventsForSubscription()) {
          await this.sleep(heldBackDelay);
          heldBackDelay = Math.min(heldBackDelay * 2, this.pollIntervalMs);
        } else {
          await this.sleep(this.pollIntervalMs);
        }
      }
    } finally {
      unlisten();
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.notified || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.wake = null;
        resolve();
      }
      this.wake = done;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.done.catch(() => undefined);
  }
}
