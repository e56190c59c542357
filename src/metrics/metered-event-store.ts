import { performance } from 'node:perf_hooks';
import {
  WrongExpectedVersionError,
  type AppendResult,
  type EventStore,
  type ExpectedVersion,
  type GlobalPosition,
  type LogSubscription,
  type NewEvent,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamHead,
  type SubscribeOptions,
} from '../eventstore/port';

type AppendObserver = (streamId: string, events: number, outcome: 'ok' | 'conflict' | 'error', seconds: number) => void;

/** An event store that reports every append (count, outcome, latency) and otherwise just delegates. */
export class MeteredEventStore implements EventStore {
  /** The inner store's count, when it has one (the progress of long commands uses it). */
  readonly countEvents?: (until: GlobalPosition) => Promise<number>;

  constructor(
    private readonly inner: EventStore,
    private readonly observe: AppendObserver,
  ) {
    if (inner.countEvents) this.countEvents = (until) => inner.countEvents!(until);
  }

  get kind(): EventStore['kind'] {
    return this.inner.kind;
  }

  async append(streamId: string, events: readonly NewEvent[], options: { expectedVersion: ExpectedVersion }): Promise<AppendResult> {
    const started = performance.now();
    try {
      const result = await this.inner.append(streamId, events, options);
      this.observe(streamId, events.length, 'ok', (performance.now() - started) / 1000);
      return result;
    } catch (err) {
      this.observe(streamId, events.length, err instanceof WrongExpectedVersionError ? 'conflict' : 'error', (performance.now() - started) / 1000);
      throw err;
    }
  }

  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamId, options);
  }

  streamHead(streamId: string): Promise<StreamHead | null> {
    return this.inner.streamHead(streamId);
  }

  readAll(from: GlobalPosition | null, limit: number): Promise<RecordedEvent[]> {
    return this.inner.readAll(from, limit);
  }

  headPosition(): Promise<GlobalPosition | null> {
    return this.inner.headPosition();
  }

  committedHead(): Promise<GlobalPosition | null> {
    return this.inner.committedHead();
  }

  subscribe(options: SubscribeOptions): LogSubscription {
    return this.inner.subscribe(options);
  }

  expedite<T>(work: () => Promise<T>): Promise<T> {
    return this.inner.expedite(work);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
