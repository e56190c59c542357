import { randomUUID } from 'node:crypto';
import { recordFact } from '../../domain/facts';
import type { EventStore, GlobalPosition, LogSubscription, RecordedEvent } from '../../eventstore/port';
import type { Logger } from '../../log';
import { CHANNEL_HEALTH_EVENT_TYPES, type ChannelHealthEvent } from './health';

/** The stream of one channel's health transitions. */
export function channelHealthStream(channel: string): string {
  return `channel-health-${channel}`;
}

/**
 * Channel health shared by every gateway process through the log: `record` appends a transition
 * this process decided (metadata `origin`: this process), `follow` hands the router the
 * transitions the others appended, from the log's notifications (as the key cache follows key
 * events), so a circuit one process opened keeps the others away too. A process starts from the
 * log's head: what happened before it started it learns from its own calls.
 *
 * An append that fails is logged and dropped: the transition holds in this process regardless,
 * and the request that caused it never waits for the log.
 */
export class ChannelHealthLog {
  private readonly origin = randomUUID();

  constructor(
    private readonly store: EventStore,
    private readonly logger: Logger,
  ) {}

  /** Appends in the order decided, one after another: a probe's half-open and close come within a millisecond, and two appends in flight together may commit in either order. */
  private appending: Promise<void> = Promise.resolve();

  record(event: ChannelHealthEvent): void {
    this.appending = this.appending.then(() =>
      recordFact(this.store, channelHealthStream(event.data.channel), event, { expected: 'any', metadata: { origin: this.origin } }).then(
        () => undefined,
        (err: unknown) => this.logger.warn({ err, channel: event.data.channel, type: event.type }, 'a channel health transition could not be appended; it holds in this process only'),
      ),
    );
  }

  /** Applies every other process's transition from now on; resubscribes from the last position seen if following fails. */
  follow(apply: (event: ChannelHealthEvent) => void): { readonly started: Promise<void>; close(): Promise<void> } {
    let subscription: LogSubscription | null = null;
    let retry: NodeJS.Timeout | null = null;
    let closed = false;
    const start = async (from: GlobalPosition | null): Promise<void> => {
      let position = from ?? (await this.store.headPosition());
      if (closed) return;
      subscription = this.store.subscribe({
        from: position,
        onBatch: async (events: RecordedEvent[]) => {
          for (const e of events) if (this.isOthers(e)) apply({ type: e.type, data: e.data } as ChannelHealthEvent);
          position = events[events.length - 1]!.position;
        },
      });
      subscription.done.catch((err: unknown) => {
        if (closed) return;
        this.logger.warn({ err }, 'channel health: following the log failed; other processes\' transitions are missed until it resumes');
        retry = setTimeout(() => void start(position).catch(() => undefined), 1000);
        retry.unref();
      });
    };
    const started = start(null).catch((err: unknown) => this.logger.warn({ err }, 'channel health: could not follow the log; this process sees only its own transitions'));
    return {
      started,
      close: async () => {
        closed = true;
        if (retry) clearTimeout(retry);
        await started;
        await subscription?.close();
      },
    };
  }

  private isOthers(e: RecordedEvent): boolean {
    return CHANNEL_HEALTH_EVENT_TYPES.has(e.type) && e.streamId.startsWith('channel-health-') && e.metadata.origin !== this.origin;
  }
}
