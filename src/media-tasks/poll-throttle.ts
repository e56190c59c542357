import { ApiError } from '../http/errors';
import type { FleetLimiter } from '../limits/fleet-limiter';

/**
 * The polling limit of a status endpoint: one API key may read one task at most once per
 * `minIntervalMs`, across every gateway process (FleetLimiter); a faster poll is answered 429
 * with `Retry-After` (whole seconds, at least 1) and does not count as a poll. The published
 * intervals (podcasts 10 to 15 s, erase and async images 3 to 5 s) are recommendations; the
 * enforced minimum is configurable and deliberately lenient (POLL_MIN_INTERVAL_MS_*).
 */
export class PollThrottle {
  constructor(
    /** The task kind, so that one key's polls of two kinds' tasks never share an entry. */
    private readonly kind: string,
    private readonly minIntervalMs: number,
    private readonly limits: Pick<FleetLimiter, 'poll'>,
  ) {}

  /** Records a poll of `taskId` by `keyId`, or throws 429 when it comes too soon after the last one. */
  async take(keyId: string, taskId: string): Promise<void> {
    if (this.minIntervalMs <= 0) return;
    const waitMs = await this.limits.poll(`poll:${this.kind}:${keyId}:${taskId}`, this.minIntervalMs);
    if (waitMs <= 0) return;
    throw new ApiError(429, 'polling_too_fast', `poll this task at most once every ${this.minIntervalMs / 1000} s; retry in ${Math.ceil(waitMs / 1000)} s`, {
      headers: { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) },
    });
  }
}
