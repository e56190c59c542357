/**
 * The event store port. Both adapters (PostgreSQL, EventStoreDB) implement it and pass one
 * conformance suite (test/integration/eventstore-conformance.test.ts).
 *
 * Stream revisions are 0-based, as in EventStoreDB: the first event of a stream has revision 0 and
 * a stream that does not exist has no revision.
 */

/**
 * A point in the global log. Compared lexicographically by (major, minor).
 * PostgreSQL: (transaction id, sequence position); EventStoreDB: (commit, prepare).
 */
export interface GlobalPosition {
  readonly major: bigint;
  readonly minor: bigint;
}

export type ExpectedVersion = 'any' | 'no_stream' | 'stream_exists' | number;

export interface EventMetadata {
  /** The HTTP request or job that caused this event. */
  readonly requestId?: string;
  readonly correlationId?: string;
  readonly causationId?: string;
  readonly [key: string]: unknown;
}

export interface NewEvent {
  /** A UUID. Generated when omitted. */
  readonly id?: string;
  readonly type: string;
  readonly data: unknown;
  readonly metadata?: EventMetadata;
}

/**
 * An event as read from the log. Never to be changed, its data and metadata included: the
 * subscriptions of a process are handed the same objects, and the PostgreSQL store keeps the
 * latest of them for the subscriptions that read later (LogTail).
 */
export interface RecordedEvent<T = unknown> {
  readonly id: string;
  readonly streamId: string;
  readonly revision: number;
  readonly type: string;
  readonly data: T;
  readonly metadata: EventMetadata;
  readonly position: GlobalPosition;
  readonly recordedAt: Date;
}

export interface AppendResult {
  /** Revision of the last appended event: pass it as expectedVersion for the next append. */
  readonly nextExpectedVersion: number;
  /** Global position of the last appended event. */
  readonly position: GlobalPosition;
}

export interface StreamHead {
  readonly revision: number;
  readonly position: GlobalPosition;
}

export interface ReadStreamOptions {
  /** First revision to return (inclusive). Default 0. */
  readonly fromRevision?: number;
  readonly maxCount?: number;
}

export interface SubscribeOptions {
  /** Deliver events strictly after this position; null means from the start of the log. */
  readonly from: GlobalPosition | null;
  readonly batchSize?: number;
  /**
   * Called with consecutive batches in global order. The next batch is not delivered before the
   * returned promise settles. If it rejects, the subscription stops with that error.
   */
  readonly onBatch: (events: RecordedEvent[]) => Promise<void>;
}

export interface LogSubscription {
  /** Settles when the subscription stops: resolves on close(), rejects when a handler throws. */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

export interface EventStore {
  readonly kind: 'postgres' | 'eventstoredb';
  append(streamId: string, events: readonly NewEvent[], options: { expectedVersion: ExpectedVersion }): Promise<AppendResult>;
  /** Events of one stream in revision order; an empty array when the stream does not exist. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Revision and global position of a stream's last event; null when the stream does not exist. */
  streamHead(streamId: string): Promise<StreamHead | null>;
  /** Events of the global log strictly after `from` (null: from the start), in global order. */
  readAll(from: GlobalPosition | null, limit: number): Promise<RecordedEvent[]>;
  /** Position of the newest event a reader of the global log can see now (null: empty log). */
  headPosition(): Promise<GlobalPosition | null>;
  /**
   * Position of the newest event committed now (null: empty log): every event that committed
   * before the call is at or before it, which the readable head (headPosition) does not promise
   * while an older transaction is open. What a read that must see every write made so far waits
   * for (ConsumerProgress.waitForCommitted).
   */
  committedHead(): Promise<GlobalPosition | null>;
  /**
   * How many events the global log holds up to and including `until`, for the progress of long
   * commands; a store that cannot count cheaply leaves it out (the progress then has no total).
   */
  countEvents?(until: GlobalPosition): Promise<number>;
  /** At-least-once, in-order delivery of the global log from a position the caller keeps. */
  subscribe(options: SubscribeOptions): LogSubscription;
  /**
   * Runs `work` while this process's subscriptions take new events at once, without the batching
   * window a store may keep to fold many appends in one pass: for a reader waiting on a read model
   * (read-your-writes), who must not wait for the window meant for throughput.
   */
  expedite<T>(work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export class WrongExpectedVersionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    /** Current revision of the stream; -1 when it does not exist. */
    readonly actual: number,
  ) {
    super(`wrong expected version for stream ${streamId}: expected ${String(expected)}, actual ${actual}`);
    this.name = 'WrongExpectedVersionError';
  }
}

export function comparePositions(a: GlobalPosition, b: GlobalPosition): number {
  if (a.major !== b.major) return a.major < b.major ? -1 : 1;
  if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1;
  return 0;
}

/** Serialised form used in checkpoints, HTTP headers and logs: "major/minor". */
export function formatPosition(p: GlobalPosition): string {
  return `${p.major}/${p.minor}`;
}

export function parsePosition(s: string): GlobalPosition {
  const m = /^(\d+)\/(\d+)$/.exec(s);
  if (!m) throw new Error(`not a global position: ${s}`);
  return { major: BigInt(m[1]!), minor: BigInt(m[2]!) };
}

export function satisfiesExpected(expected: ExpectedVersion, actual: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return actual === -1;
  if (expected === 'stream_exists') return actual >= 0;
  return expected === actual;
}
