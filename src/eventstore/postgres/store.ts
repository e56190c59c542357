import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { prepared, runOf, type PreparedStatement } from '../../db/prepared';
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
import { AppendNotifier } from './append-notifier';
import { LogTail, type LogPage } from './log-tail';
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
  /**
   * How long subscribers let notified appends gather before they read them (default 2 ms; the
   * gateway's SUBSCRIPTION_BATCH_MS): every consumer pays a read and a transaction per wake-up, so one
   * wake-up for several requests' appends costs a fraction of one each. A reader waiting on a
   * read model cuts the window short (expedite). From 10 ms on, it also spaces this process's
   * notifications of its appends (AppendNotifier).
   */
  readonly batchWindowMs?: number;
  /**
   * Group commit: at most this many append transactions run at once; appends that arrive
   * meanwhile wait and go together, whatever their streams, in the next one. Default 4.
   */
  readonly maxConcurrentCommits?: number;
  /** Most appends one transaction carries. Default 256. */
  readonly maxAppendsPerCommit?: number;
  /** The clock that spaces the appends' notifications (AppendNotifier), in ms; tests stop it. */
  readonly now?: () => number;
}

/** One stream's part of a cross-stream append. */
export interface StreamAppend {
  readonly streamId: string;
  readonly events: readonly NewEvent[];
  readonly expectedVersion: ExpectedVersion;
}

/** What became of one stream's part: appended, or refused alone because its expected version failed. */
export type StreamAppendOutcome = AppendResult | WrongExpectedVersionError;

interface QueuedAppend {
  readonly append: StreamAppend;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (err: unknown) => void;
}

interface AppendRow {
  ok: boolean;
  revision: string;
  tx_id: string | null;
  last_position: string | null;
}

function outcomeOf(append: StreamAppend, row: AppendRow): StreamAppendOutcome {
  if (!row.ok) return new WrongExpectedVersionError(append.streamId, append.expectedVersion, Number(row.revision));
  return { nextExpectedVersion: Number(row.revision), position: { major: BigInt(row.tx_id!), minor: BigInt(row.last_position!) } };
}

/**
 * The events as the appends' parameters: ids and types as arrays, data and metadata as one JSON
 * array each, which the statements split into the functions' jsonb[] (jsonbArray). Sent as
 * jsonb[] literals, each event's JSON was escaped again by the driver (two regular-expression
 * passes and a copy per element): 7.3 µs of client CPU for a one-event append, 2.7 µs this way.
 */
function eventParams(events: readonly NewEvent[]): [string[], string[], string, string] {
  return [
    events.map((e) => e.id ?? randomUUID()),
    events.map((e) => e.type),
    JSON.stringify(events.map((e) => jsonValue(e.data ?? null))),
    JSON.stringify(events.map((e) => e.metadata ?? {})),
  ];
}

/**
 * Data JSON has no text for (a function, a symbol) is refused, as the NOT NULL column refused it
 * when each event was stringified alone; inside an array JSON.stringify would write it as null.
 */
function jsonValue(data: unknown): unknown {
  if (typeof data === 'function' || typeof data === 'symbol') throw new TypeError(`event data must be JSON, got a ${typeof data}`);
  return data;
}

/** The jsonb[] of the elements of JSON array parameter `$n`, in order. */
function jsonbArray(n: number): string {
  return `ARRAY(SELECT e FROM jsonb_array_elements($${n}::jsonb) WITH ORDINALITY AS a(e, i) ORDER BY i)`;
}

/**
 * The appends as named statements: each connection parses them once, not on every append, and
 * after a few runs PostgreSQL may keep one plan for them (in one A/B at one connection, 0.18 ms
 * less per request that appends twice). A migration that changes what es_append or
 * es_append_batch returns needs every running gateway restarted with it: a connection that
 * prepared the old statement would fail every append ("cached plan must not change result type").
 */
const APPEND_ONE: PreparedStatement = {
  name: 'es_append',
  text: `SELECT ok, revision, tx_id::text AS tx_id, last_position FROM es_append($1, $2, $3, $4, $5, ${jsonbArray(6)}, ${jsonbArray(7)}, $8)`,
};
const APPEND_MANY: PreparedStatement = {
  name: 'es_append_batch',
  text: `SELECT entry, ok, revision, tx_id::text AS tx_id, last_position FROM es_append_batch($1, $2, $3, $4, $5, $6, ${jsonbArray(7)}, ${jsonbArray(8)}, $9)`,
};

export class PostgresEventStore implements EventStore {
  readonly kind = 'postgres' as const;
  private readonly pool: Pool;
  private readonly pollIntervalMs: number;
  private readonly listener: NotificationListener;
  private readonly notifier: AppendNotifier;

  private readonly maxConcurrentCommits: number;
  private readonly maxAppendsPerCommit: number;
  private readonly queued: QueuedAppend[] = [];
  private committing = 0;
  /**
   * The latest stretch of the log the subscriptions read (LogTail), up to a default page's worth
   * of events, kept between rounds. The subscriptions it serves are one consumer transaction
   * apart: tens of events under load.
   */
  private readonly tail = new LogTail(500);

  constructor(options: PostgresEventStoreOptions) {
    this.pool = options.pool;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.maxConcurrentCommits = options.maxConcurrentCommits ?? 4;
    this.maxAppendsPerCommit = options.maxAppendsPerCommit ?? 256;
    this.listener = new NotificationListener(this.pool, 'es_appended', options.batchWindowMs, () => this.tail.forget());
    this.notifier = new AppendNotifier(this.pool, this.listener, this.listener.windowMs, options.now);
  }

  /**
   * Group commit across streams: an append goes at once while fewer than maxConcurrentCommits
   * transactions run; otherwise it waits, and the next transaction carries every waiting append
   * (appendMany), so under load one durable commit serves many accounts. An append alone costs
   * what it did before: one es_append call.
   */
  append(streamId: string, events: readonly NewEvent[], options: { expectedVersion: ExpectedVersion }): Promise<AppendResult> {
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    return new Promise((resolve, reject) => {
      this.queued.push({ append: { streamId, events, expectedVersion: options.expectedVersion }, resolve, reject });
      this.commitQueued();
    });
  }

  private commitQueued(): void {
    if (this.committing >= this.maxConcurrentCommits || this.queued.length === 0) return;
    const batch = this.queued.splice(0, this.maxAppendsPerCommit);
    this.committing++;
    void this.commit(batch).finally(() => {
      this.committing--;
      this.commitQueued();
    });
  }

  private async commit(batch: readonly QueuedAppend[]): Promise<void> {
    let outcomes: StreamAppendOutcome[] | null = null;
    if (batch.length > 1) {
      // A batch that fails as a whole (not a version conflict, which fails its stream alone)
      // is retried append by append, so that only the append at fault fails.
      outcomes = await this.appendMany(batch.map((q) => q.append)).catch(() => null);
    }
    if (outcomes) {
      batch.forEach((q, i) => settleWith(q, outcomes[i]!));
      return;
    }
    await Promise.all(
      batch.map((q) =>
        this.appendOne(q.append).then(
          (outcome) => settleWith(q, outcome),
          (err: unknown) => q.reject(err),
        ),
      ),
    );
  }

  private async appendOne(append: StreamAppend): Promise<StreamAppendOutcome> {
    const [kind, expected] = expectedArgs(append.expectedVersion);
    const params = eventParams(append.events);
    const rows = await this.appendWith(APPEND_ONE, [append.streamId, kind, expected, ...params]);
    return outcomeOf(append, rows[0]!);
  }

  /**
   * The appends of many streams in one transaction. Each stream's expected version is checked
   * on its own: a stream that fails it gets its WrongExpectedVersionError and nothing appended,
   * the others commit. Appends to one stream apply in the order given.
   */
  async appendMany(appends: readonly StreamAppend[]): Promise<StreamAppendOutcome[]> {
    if (appends.length === 0) return [];
    if (appends.some((a) => a.events.length === 0)) throw new Error('append needs at least one event');
    const expected = appends.map((a) => expectedArgs(a.expectedVersion));
    const events = eventParams(appends.flatMap((a) => a.events));
    const rows = await this.appendWith<AppendRow & { entry: number }>(APPEND_MANY, [
      appends.map((a) => a.streamId),
      expected.map((e) => e[0]),
      expected.map((e) => e[1]),
      appends.map((a) => a.events.length),
      ...events,
    ]);
    const byEntry = new Map(rows.map((r) => [r.entry, r]));
    return appends.map((a, i) => outcomeOf(a, byEntry.get(i + 1)!));
  }

  /**
   * Runs an append statement with `values` and, as its last parameter, whether it notifies
   * (AppendNotifier), and tells the notifier what came of it.
   */
  private async appendWith<R extends AppendRow>(statement: PreparedStatement, values: readonly unknown[]): Promise<R[]> {
    const notify = this.notifier.shouldNotify();
    let appended = false;
    try {
      const { rows } = await this.pool.query<R>(runOf(statement, [...values, notify]));
      appended = rows.some((row) => row.ok);
      return rows;
    } finally {
      if (notify && !appended) this.notifier.notUsed();
      else if (!notify && appended) this.notifier.quietCommitted();
    }
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

  /**
   * readPageWith for a subscription: what the subscriptions have already read after `from` comes
   * from memory (LogTail), and only what lies past it is read, in a query shared among the
   * subscriptions of one notification round.
   */
  readPageForSubscription(from: GlobalPosition | null, limit: number): Promise<LogPage> {
    return this.tail.page(from, limit, (after, max) => this.readPageShared(after, max));
  }

  private readPageShared(from: GlobalPosition | null, limit: number): Promise<LogPage> {
    return this.shared(`readPage ${from ? `${from.major}/${from.minor}` : '-'} ${limit}`, async () => {
      const era = this.tail.era;
      try {
        const page = await readPageWith(this.pool, from, limit);
        this.tail.remember(from, page.events, era);
        return page;
      } catch (err) {
        this.tail.forget();
        throw err;
      }
    });
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
   * Unlike headPosition, not held back by open transactions: an event committed by a transaction
   * younger than one still open is past the readable head until that one ends, and a read-your-
   * writes wait on the readable head would return before the reader's view had it.
   */
  async committedHead(): Promise<GlobalPosition | null> {
    const { rows } = await this.pool.query<{ tx_text: string; position: string }>(
      'SELECT tx_id::text AS tx_text, position FROM es_events ORDER BY tx_id DESC, position DESC LIMIT 1',
    );
    return rows.length === 0 ? null : { major: BigInt(rows[0]!.tx_text), minor: BigInt(rows[0]!.position) };
  }

  async countEvents(until: GlobalPosition): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM es_events WHERE (tx_id, position) <= ($1::text::xid8, $2::bigint)`, [
      until.major.toString(),
      until.minor.toString(),
    ]);
    return Number(rows[0]!.n);
  }

  /**
   * Someone waits on the consumers: this process's appends left quiet are notified to the others
   * now (their consumers may be the ones waited on), and this process's deliveries come at once.
   */
  async expedite<T>(work: () => Promise<T>): Promise<T> {
    await this.notifier.flush();
    return this.listener.expedite(work);
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    return new PollingSubscription(this, this.listener, this.pollIntervalMs, options);
  }

  async close(): Promise<void> {
    await this.notifier.flush();
    await this.listener.close();
  }
}

export async function readAllWith(db: Pool | PoolClient, from: GlobalPosition | null, limit: number): Promise<RecordedEvent[]> {
  return (await readPageWith(db, from, limit)).events;
}

/**
 * The events after `from` whose tx_id is below xmin (null: from the start), in global order, and
 * in the same statement, and so the same snapshot, whether any committed event lies at or past xmin.
 */
export async function readPageWith(db: Pool | PoolClient, from: GlobalPosition | null, limit: number): Promise<LogPage> {
  const xmin = 'pg_snapshot_xmin(pg_current_snapshot())';
  const after = from ? '(tx_id, position) > ($2::text::xid8, $3::bigint) AND ' : '';
  // max() walks the global-order index from its end; the one row of `snap` carries the flag when
  // the page is empty.
  const { rows } = await db.query<Partial<EventRow> & { held_back: boolean | null }>(
    prepared(
      `SELECT page.*, snap.held_back
       FROM (SELECT max(tx_id) >= ${xmin} AS held_back FROM es_events) AS snap
       LEFT JOIN LATERAL (
         SELECT ${EVENT_COLUMNS}, tx_id FROM es_events WHERE ${after}tx_id < ${xmin} ORDER BY tx_id, position LIMIT $1
       ) AS page ON true
       ORDER BY page.tx_id, page.position`,
      from ? [limit, from.major.toString(), from.minor.toString()] : [limit],
    ),
  );
  const events = rows.filter((row): row is EventRow & { held_back: boolean | null } => row.event_id != null).map(toRecorded);
  return { events, heldBack: rows[0]?.held_back === true };
}

function settleWith(queued: QueuedAppend, outcome: StreamAppendOutcome): void {
  if (outcome instanceof WrongExpectedVersionError) queued.reject(outcome);
  else queued.resolve(outcome);
}

const HELD_BACK_RETRY_MS = 5;
/**
 * The longest pause between re-reads behind a long transaction, whatever the poll interval: the
 * fallback poll is for notifications lost, and may be long; an event held back is already known
 * to exist, and waits only for that transaction (anywhere on the server) to end.
 */
const MAX_HELD_BACK_RETRY_MS = 250;

/** The pause before the next re-read behind a long transaction, after a pause of `lastMs`. */
export function nextHeldBackRetryMs(lastMs: number, pollIntervalMs: number): number {
  return Math.min(lastMs * 2, pollIntervalMs, MAX_HELD_BACK_RETRY_MS);
}

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
    let heldBackDelay = HELD_BACK_RETRY_MS;
    try {
      while (!this.closed) {
        this.notified = false;
        const page = await this.store.readPageForSubscription(position, batchSize);
        const batch = page.events;
        if (this.closed) return;
        if (batch.length > 0) {
          heldBackDelay = HELD_BACK_RETRY_MS;
          await this.options.onBatch(batch);
          position = batch[batch.length - 1]!.position;
          if (batch.length === batchSize) continue;
        }
        if (page.heldBack) {
          await this.sleep(heldBackDelay);
          heldBackDelay = nextHeldBackRetryMs(heldBackDelay, this.pollIntervalMs);
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
