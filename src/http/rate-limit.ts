import { ApiError } from './errors';

/**
 * A token bucket per API key, in this process's memory: `perMinute` requests (or the key's own
 * rate, when it has one), refilled continuously. Several gateway processes each enforce it, so
 * the cluster-wide limit is a multiple of it; a shared limiter belongs in front of the fleet (see
 * README).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number; rate: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** Takes one request from the key's bucket, or throws 429 with Retry-After. */
  take(key: string, ownRate: number | null = null): void {
    const rate = ownRate ?? this.perMinute;
    const wait = this.reserve(key, rate, 0);
    if (wait !== null) return;
    const retryAfter = Math.max(1, Math.ceil(this.msUntilFree(key, rate) / 1000));
    throw new ApiError(429, 'rate_limit_exceeded', `rate limit of ${rate} requests per minute exceeded for this key`, {
      headers: { 'retry-after': String(retryAfter) },
    });
  }

  /**
   * For endpoints whose contract has no 429 (web Q&A): waits up to `maxWaitMs` for the key's turn,
   * then runs; a turn further away is a 502 `gateway_busy` (SDKs retry a 502 with backoff).
   * A waiting request holds its token, so waiters are served in arrival order.
   */
  async waitTurn(key: string, maxWaitMs: number, ownRate: number | null = null): Promise<void> {
    const rate = ownRate ?? this.perMinute;
    const wait = this.reserve(key, rate, maxWaitMs);
    if (wait === null) {
      throw new ApiError(502, 'gateway_busy', `this key is over its rate of ${rate} requests per minute and no turn came within ${maxWaitMs} ms; retry later`, {
        type: 'upstream_error',
        headers: { 'retry-after': String(Math.max(1, Math.ceil(this.msUntilFree(key, rate) / 1000))) },
      });
    }
    if (wait > 0) await this.sleep(wait);
  }

  /**
   * Takes a token if one is free within `maxWaitMs` (the bucket may go below zero: the token is
   * promised to this caller) and says how long until it is due; null, taking nothing, when it is
   * further away.
   */
  private reserve(key: string, rate: number, maxWaitMs: number): number | null {
    if (rate <= 0) return 0;
    const now = this.now();
    const bucket = this.refilled(key, rate, now);
    this.buckets.set(key, bucket);
    const wait = bucket.tokens >= 1 ? 0 : Math.ceil(((1 - bucket.tokens) * 60_000) / rate);
    if (wait > maxWaitMs) return null;
    bucket.tokens -= 1;
    if (this.buckets.size > 100_000) this.evictFull(now);
    return wait;
  }

  /** Milliseconds until the key's bucket holds a whole token again. */
  private msUntilFree(key: string, rate: number): number {
    const bucket = this.refilled(key, rate, this.now());
    return bucket.tokens >= 1 ? 0 : ((1 - bucket.tokens) * 60_000) / rate;
  }

  /** The key's bucket refilled at `rate` up to `rate` tokens; it remembers the rate for eviction. */
  private refilled(key: string, rate: number, now: number): { tokens: number; at: number; rate: number } {
    const bucket = this.buckets.get(key) ?? { tokens: rate, at: now, rate };
    return { tokens: Math.min(rate, bucket.tokens + ((now - bucket.at) * rate) / 60_000), at: now, rate };
  }

  private evictFull(now: number): void {
    for (const [key, b] of this.buckets) if (b.tokens + ((now - b.at) * b.rate) / 60_000 >= b.rate) this.buckets.delete(key);
  }
}
