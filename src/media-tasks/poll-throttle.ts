import { ApiError } from '../http/errors';

/**
 * The polling limit of a status endpoint: one API key may read one task at most once per
 * `minIntervalMs`; a faster poll is answered 429 with `Retry-After` (whole seconds, at least 1)
 * and does not count as a poll. The published intervals (podcasts 10 to 15 s, erase and async
 * images 3 to 5 s) are recommendations; the enforced minimum is configurable and deliberately
 * lenient (POLL_MIN_INTERVAL_MS_*). Like the per-key rate limit, it lives in this process's memory,
 * so behind several gateway processes a client could poll each of them once per interval.
 */
export class PollThrottle {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly minIntervalMs: number,
    /** The gateway's clock (so tests move it instead of waiting out the interval). */
    private readonly now: () => number,
    private readonly maxEntries = 100_000,
  ) {}

  /** Records a poll of `taskId` by `keyId`, or throws 429 when it comes too soon after the last one. */
  take(keyId: string, taskId: string): void {
    if (this.minIntervalMs <= 0) return;
    const now = this.now();
    const id = `${keyId}\n${taskId}`;
    const previous = this.last.get(id);
    if (previous !== undefined && now - previous < this.minIntervalMs) {
      const waitMs = this.minIntervalMs - (now - previous);
      throw new ApiError(429, 'polling_too_fast', `poll this task at most once every ${this.minIntervalMs / 1000} s; retry in ${Math.ceil(waitMs / 1000)} s`, {
        headers: { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) },
      });
    }
    // Re-inserting keeps the map in poll order, so the oldest entries are the first to go.
    this.last.delete(id);
    this.last.set(id, now);
    if (this.last.size > this.maxEntries) this.evict(now);
  }

  private evict(now: number): void {
    for (const [id, at] of this.last) {
      if (now - at < this.minIntervalMs && this.last.size <= this.maxEntries) break;
      this.last.delete(id);
    }
  }
}
