import { randomUUID } from 'node:crypto';
import {
  ANY,
  BACKWARDS,
  END,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  DeadlineExceededError,
  KurrentDBClient,
  NotLeaderError,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError as KurrentWrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamSubscription,
  type AppendStreamState,
  type CurrentStreamState,
  type JSONType,
  type Position,
  type RecordedEvent as KurrentRecordedEvent,
} from '@kurrent/kurrentdb-client';
import { DatabaseUnavailableError } from '../../db/unavailable';
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
  comparePositions,
} from '../port';

export interface EventStoreDbEventStoreOptions {
  readonly connectionString: string;
}

function toStreamState(expected: ExpectedVersion): AppendStreamState {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'stream_exists') return STREAM_EXISTS;
  return BigInt(expected);
}

function toRevision(state: CurrentStreamState): number {
  return state === NO_STREAM ? -1 : Number(state);
}

function toGlobal(p: Position): GlobalPosition {
  return { major: p.commit, minor: p.prepare };
}

function isSystem(e: KurrentRecordedEvent): boolean {
  return e.type.startsWith('$') || e.streamId.startsWith('$');
}

function toRecorded(e: KurrentRecordedEvent): RecordedEvent {
  // Servers older than 22.6 omit positions on stream reads; the port cannot do without them.
  if (!e.position) throw new Error(`EventStoreDB returned no position for event ${e.id} (server older than 22.6?)`);
  const m = e.metadata;
  // Binary or non-object metadata was not written by this adapter; expose it as empty rather than lie about its shape.
  const metadata = m !== null && typeof m === 'object' && !Array.isArray(m) && !(m instanceof Uint8Array) ? (m as EventMetadata) : {};
  return {
    id: e.id,
    streamId: e.streamId,
    revision: Number(e.revision),
    type: e.type,
    data: e.data,
    metadata,
    position: toGlobal(e.position),
    recordedAt: e.created,
  };
}

export class EventStoreDbEventStore implements EventStore {
  readonly kind = 'eventstoredb' as const;
  private readonly client: KurrentDBClient;

  constructor(options: EventStoreDbEventStoreOptions) {
    this.client = KurrentDBClient.connectionString(options.connectionString);
  }

  async append(streamId: string, events: readonly NewEvent[], options: { expectedVersion: ExpectedVersion }): Promise<AppendResult> {
    // Same contract as the PostgreSQL adapter; ESDB would also return no position to report.
    if (events.length === 0) throw new Error('append needs at least one event');
    const expected = options.expectedVersion;
    const data = events.map((e) =>
      jsonEvent({
        id: e.id ?? randomUUID(),
        type: e.type,
        // The client JSON.stringify()s data, so any JSON value works despite the narrower JSONType.
        data: (e.data ?? null) as JSONType,
        metadata: { ...e.metadata },
      }),
    );
    try {
      const result = await this.client.appendToStream(streamId, data, { streamState: toStreamState(expected) });
      // Only reachable with throwOnAppendFailure=false in the connection string.
      if (!result.success) throw new WrongExpectedVersionError(streamId, expected, Number(result.nextExpectedRevision));
      if (!result.position) throw new Error(`EventStoreDB returned no position for the append to ${streamId}`);
      return { nextExpectedVersion: Number(result.nextExpectedRevision), position: toGlobal(result.position) };
    } catch (err) {
      if (err instanceof KurrentWrongExpectedVersionError) throw new WrongExpectedVersionError(streamId, expected, toRevision(err.actualState));
      throw translated(err);
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      for await (const r of this.client.readStream(streamId, { fromRevision: BigInt(options.fromRevision ?? 0), maxCount: options.maxCount })) {
        if (r.event) out.push(toRecorded(r.event));
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return [];
      throw translated(err);
    }
    return out;
  }

  async streamHead(streamId: string): Promise<StreamHead | null> {
    try {
      for await (const r of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
        if (r.event) {
          const last = toRecorded(r.event);
          return { revision: last.revision, position: last.position };
        }
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return null;
      throw translated(err);
    }
    return null;
  }

  readAll(from: GlobalPosition | null, limit: number): Promise<RecordedEvent[]> {
    return this.readAllPages(from, limit).catch((err: unknown) => {
      throw translated(err);
    });
  }

  private async readAllPages(from: GlobalPosition | null, limit: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    let cursor = from;
    while (out.length < limit) {
      // +1 because fromPosition is inclusive and the event at the cursor is skipped.
      const want = limit - out.length + 1;
      let got = 0;
      let last: GlobalPosition | null = null;
      for await (const r of this.client.readAll({
        fromPosition: cursor ? { commit: cursor.major, prepare: cursor.minor } : START,
        maxCount: want,
        filter: excludeSystemEvents(),
      })) {
        got++;
        const e = r.event;
        if (!e) continue;
        const pos = toGlobal(e.position);
        last = pos;
        if (cursor && comparePositions(pos, cursor) <= 0) continue;
        // The server filter only looks at event types; user-typed events in system streams remain.
        if (isSystem(e)) continue;
        out.push(toRecorded(e));
        if (out.length === limit) break;
      }
      // A short page means the end of the log; a full page that yielded too little is re-read from its last event.
      if (got < want || last === null) break;
      cursor = last;
    }
    return out;
  }

  async headPosition(): Promise<GlobalPosition | null> {
    try {
      for await (const r of this.client.readAll({ direction: BACKWARDS, fromPosition: END, filter: excludeSystemEvents() })) {
        if (r.event && !isSystem(r.event)) return toGlobal(r.event.position);
      }
    } catch (err) {
      throw translated(err);
    }
    return null;
  }

  /** The server orders the log by commit: the readable head is the newest committed event. */
  committedHead(): Promise<GlobalPosition | null> {
    return this.headPosition();
  }

  /** Subscriptions here are pushed by the server as it commits: there is no window to cut short. */
  expedite<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    return new CatchUpSubscription(this.client, options);
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}

/**
 * The client's errors of a server out of reach (no connection, no answer within the deadline, no
 * leader to write to) become DatabaseUnavailableError, which the gateway answers 503 and the
 * settlement journal keeps its settlements for; any other error is the server's answer.
 */
function translated(err: unknown): unknown {
  if (err instanceof UnavailableError || err instanceof DeadlineExceededError || err instanceof NotLeaderError || isGrpcUnavailable(err)) {
    return new DatabaseUnavailableError(`the event store cannot be reached: ${err.message}`, { cause: err });
  }
  return err;
}

/** gRPC's UNAVAILABLE (14) or DEADLINE_EXCEEDED (4), which the client passes on unconverted where no connection was made. */
function isGrpcUnavailable(err: unknown): err is Error {
  if (!(err instanceof Error) || !('metadata' in err)) return false;
  const { code } = err as { code?: unknown };
  return code === 14 || code === 4;
}

/**
 * A catch-up subscription to $all that survives dropped connections: each (re)subscription starts at
 * the last position handed to onBatch, so delivery is at-least-once and never reordered.
 */
class CatchUpSubscription implements LogSubscription {
  readonly done: Promise<void>;
  private closed = false;
  private current: AllStreamSubscription | null = null;
  private wake: (() => void) | null = null;

  constructor(
    private readonly client: KurrentDBClient,
    private readonly options: SubscribeOptions,
  ) {
    this.done = this.run();
  }

  private async run(): Promise<void> {
    const batchSize = Math.max(1, this.options.batchSize ?? 500);
    let last = this.options.from;
    let backoffMs = 500;
    while (!this.closed) {
      const sub = this.client.subscribeToAll(
        { fromPosition: last ? { commit: last.major, prepare: last.minor } : START, filter: excludeSystemEvents() },
        // Lets the buffer fill up to a full batch while the handler is busy.
        { highWaterMark: Math.max(16, batchSize) },
      );
      this.current = sub;
      let pending: RecordedEvent[] = [];
      try {
        for await (const r of sub) {
          const e = r.event;
          // <= rather than ===: the start position is inclusive, and a resubscription may replay what we already saw.
          if (e && !isSystem(e) && !(last && comparePositions(toGlobal(e.position), last) <= 0)) pending.push(toRecorded(e));
          // Deliver when a batch is full or nothing more is buffered, so live events are not held back.
          if (pending.length > 0 && (pending.length >= batchSize || sub.readableLength === 0)) {
            const batch = pending;
            pending = [];
            try {
              await this.options.onBatch(batch);
            } catch (handlerError) {
              throw new HandlerFailure(handlerError);
            }
            last = batch[batch.length - 1]!.position;
            backoffMs = 500;
          }
          if (this.closed) break;
        }
      } catch (err) {
        if (err instanceof HandlerFailure) {
          this.closed = true;
          throw err.cause;
        }
        // Errors after close() are the cancellation itself; other errors are a drop and retried below.
      } finally {
        this.current = null;
        await sub.unsubscribe().catch(() => undefined);
        sub.destroy();
      }
      if (this.closed) return;
      // Events still in `pending` are dropped on purpose: they lie after `last` and will be re-read.
      await this.sleep(backoffMs);
      backoffMs = Math.min(backoffMs * 2, 5000);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wake = finish;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    const sub = this.current;
    if (sub) {
      await sub.unsubscribe().catch(() => undefined);
      // Cancelling the gRPC call does not end the stream, so the for-await above would wait forever.
      sub.destroy();
    }
    await this.done.catch(() => undefined);
  }
}

/** Tells a handler's rejection apart from a dropped connection inside the subscription loop. */
class HandlerFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('onBatch rejected');
  }
}
