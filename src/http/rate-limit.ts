import { ApiError } from './errors';

/**
 * A token bucket per API key, in this process's memory: `perMinute` requests, refilled
 * continuously. Several gateway processes each enforce it, so the cluster-wide limit is a
 * multiple of it; a shared limiter belongs in front of the fleet (see README).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** Takes one request from the key's bucket, or throws 429 with Retry-After. */
  take(key: string): void {
    const wait = this.reserve(key, 0);
    if (wait !== null) return;
    const retryAfter = Math.max(1, Math.ceil(this.msUntilFree(key) / 1000));
    throw new ApiError(429, 'rate_limit_exceeded', `rate limit of ${this.perMinute} requests per minute exceeded for this key`, {
      headers: { 'retry-after': String(retryAfter) },
    });
  }

  /**
   * For endpoints whose contract has no 429 (web Q&A): waits up to `maxWaitMs` for the key's turn,
   * then runs; a turn further away is a 502 `gateway_busy` (SDKs retry a 502 with backoff).
   * A waiting request holds its token, so waiters are served in arrival order.
   */
  async waitTurn(key: string, maxWaitMs: number): Promise<void> {
    const wait = this.reserve(key, maxWaitMs);
    if (wait === null) {
      throw new ApiError(502, 'gateway_busy', `this key is over its rate of ${this.perMinute} requests per minute and no turn came within ${maxWaitMs} ms; retry later`, {
        type: 'upstream_error',
        headers: { 'retry-after': String(Math.max(1, Math.ceil(this.msUntilFree(key) / 1000))) },
      });
    }
    if (wait > 0) await this.sleep(wait);
  }

  /**
   * Takes a token if one is free within `maxWaitMs` (the bucket may go below zero: the token is
   * promised to this caller) and says how long until it is due; null, taking nothing, when it is
   * further away.
   */
  private reserve(key: string, maxWaitMs: number): number | null {
    if (this.perMinute <= 0) return 0;
    const now = this.now();
    const bucket = this.refilled(key, now);
    this.buckets.set(key, bucket);
    const wait = bucket.tokens >= 1 ? 0 : Math.ceil(((1 - bucket.tokens) * 60_000) / this.perMinute);
    if (wait > maxWaitMs) return null;
    bucket.tokens -= 1;
    if (this.buckets.size > 100_000) this.evictFull(now);
    return wait;
  }

  /** Milliseconds until the key's bucket holds a whole token again. */
  private msUntilFree(key: string): number {
    const bucket = this.refilled(key, this.now());
    return bucket.tokens >= 1 ? 0 : ((1 - bucket.tokens) * 60_000) / this.perMinute;
  }

  private refilled(key: string, now: number): { tokens: number; at: number } {
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    return { tokens: Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000), at: now };
  }

  private evictFull(now: number): void {
    for (const [key, b] of this.buckets) if (b.tokens + ((now - b.at) * this.perMinute) / 60_000 >= this.perMinute) this.buckets.delete(key);
  }
}
