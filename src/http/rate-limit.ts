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
  ) {}

  /** Takes one request from the key's bucket, or throws 429 with Retry-After. */
  take(key: string): void {
    if (this.perMinute <= 0) return;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000);
    bucket.at = now;
    if (bucket.tokens < 1) {
      this.buckets.set(key, bucket);
      const retryAfter = Math.max(1, Math.ceil(((1 - bucket.tokens) * 60_000) / this.perMinute / 1000));
      throw new ApiError(429, 'rate_limit_exceeded', `rate limit of ${this.perMinute} requests per minute exceeded for this key`, {
        headers: { 'retry-after': String(retryAfter) },
      });
    }
    bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    if (this.buckets.size > 100_000) this.evictFull(now);
  }

  private evictFull(now: number): void {
    for (const [key, b] of this.buckets) if (b.tokens + ((now - b.at) * this.perMinute) / 60_000 >= this.perMinute) this.buckets.delete(key);
  }
}
