import type { EventStore, GlobalPosition, LogSubscription, RecordedEvent } from './port';
import type { Logger } from '../log';

/** How long a follower waits before starting again after following failed. */
const RETRY_MS = 1000;

export interface LogFollowing {
  /** Names the follower in its log lines (`key cache`, `channel directory`, …). */
  readonly name: string;
  /** What this process misses while following fails, for the outage's warning. */
  readonly meanwhile: string;
  readonly logger: Logger;
  /** Every batch of the log after the start position, in order. */
  readonly onBatch: (events: RecordedEvent[]) => Promise<void>;
  /**
   * Called at each start, the first and every resumption, with the position the subscription
   * starts after (the log's head the first time, the last position seen afterwards).
   */
  readonly onStart?: (from: GlobalPosition | null) => void;
  /**
   * Called once, after the first subscription is in place, with the head it started after: for
   * what the log held before (its read model once it has folded the head). Until it succeeds the
   * first start is not over: when it fails, the follower starts again from a new head.
   */
  readonly catchUp?: (head: GlobalPosition | null) => Promise<void>;
  /** Called whenever following fails (the first start included), before the retry is scheduled. */
  readonly onFailure?: () => void;
  readonly retryMs?: number;
  /** The follower's own teardown, run by close() once the subscription is closed. */
  readonly onClose?: () => Promise<void>;
}

export interface LogFollower {
  /** Resolves once the first start (its catch-up included) has succeeded, or on close. */
  readonly started: Promise<void>;
  /** Whether following fails now (between a failure and the next successful start). */
  readonly failing: boolean;
  close(): Promise<void>;
}

/**
 * Follows the global log from its head with a non-durable, in-memory subscription, for a cache
 * of this process that other processes' events must reach. A failure, whether of the first start
 * (the log's head cannot be read while the database is away) or of a running subscription, is
 * retried every second from the last position seen, for as long as it takes; it is said once per
 * outage (a warning, then `following the log again`), the retries in between at debug level.
 */
export function followLog(store: EventStore, following: LogFollowing): LogFollower {
  const { name, logger } = following;
  const retryMs = following.retryMs ?? RETRY_MS;
  let subscription: LogSubscription | null = null;
  let retry: NodeJS.Timeout | null = null;
  let closed = false;
  let failing = false;
  let caughtUp = following.catchUp === undefined;
  /** The last position handed on (or the start position), where a resumption starts. */
  let position: GlobalPosition | null = null;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));

  const failed = (err: unknown, what: string): void => {
    if (closed) return;
    if (failing) logger.debug({ err }, `${name}: ${what} again; retrying`);
    else logger.warn({ err }, `${name}: ${what}; ${following.meanwhile} until it resumes`);
    failing = true;
    following.onFailure?.();
    retry = setTimeout(() => void start(), retryMs);
    retry.unref();
  };

  const start = async (): Promise<void> => {
    retry = null;
    if (closed) return;
    let current: LogSubscription | null = null;
    try {
      // Read even when resuming from a known position: a database still away fails here, quietly,
      // rather than in a subscription that would seem to resume and then fail again.
      const head = await store.headPosition();
      if (closed) return;
      // Until the catch-up has succeeded, every start is a first start: from the head, caught up again.
      const from = caughtUp ? position : head;
      position = from;
      following.onStart?.(from);
      current = subscription = store.subscribe({
        from,
        onBatch: async (events) => {
          await following.onBatch(events);
          position = events[events.length - 1]!.position;
        },
      });
      const mine = current;
      mine.done.catch((err: unknown) => {
        if (subscription !== mine) return;
        subscription = null;
        failed(err, 'following the log failed');
      });
      if (!caughtUp) {
        await following.catchUp!(from);
        caughtUp = true;
      }
    } catch (err) {
      if (current) {
        // Its subscription failed too, and that failure has scheduled the retry already.
        if (subscription !== current) return;
        // Replaced by the next start's subscription, which catches up again.
        subscription = null;
        await current.close().catch(() => undefined);
      }
      failed(err, 'could not follow the log');
      return;
    }
    markStarted();
    // A subscription that failed during the catch-up has its retry scheduled already.
    if (subscription !== current || closed) return;
    if (failing) logger.info(`${name}: following the log again`);
    failing = false;
  };

  void start();
  return {
    started,
    get failing() {
      return failing;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      markStarted();
      const current = subscription;
      subscription = null;
      await current?.close();
      await following.onClose?.();
    },
  };
}
