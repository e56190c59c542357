import { ApiError } from './errors';
import type { Admission, FleetLimiter } from '../limits/fleet-limiter';

/** The limits of the key a request came with (a null limit: the gateway's rate; no tokens-per-minute limit). */
export interface KeyRates {
  readonly keyId: string;
  readonly rateLimitPerMinute: number | null;
  readonly tokensPerMinute: number | null;
}

/** How a request over a limit is answered: a 429 (`null`), or by waiting up to `waitMs` for its turn, then a 502 `gateway_busy`. */
export type OverLimit = { readonly waitMs: number } | null;

/** The tokens a request counted against its key's tokens-per-minute limit at admission, corrected once its usage is known. */
export interface CountedTokens {
  readonly keyId: string;
  readonly tokensPerMinute: number;
  readonly counted: number;
}

/**
 * The per-key limits of metered requests, held across every gateway process (FleetLimiter): a
 * request rate (`perMinute`, or the key's own) and, for keys that set one, tokens per minute.
 * Over a limit a request gets a 429 with Retry-After, or, for endpoints whose contract has no 429
 * (web Q&A), waits for its turn (holding it, so waiters go in arrival order) up to a limit, then
 * gets a 502 `gateway_busy` (SDKs retry a 502 with backoff).
 */
export class RateLimiter {
  constructor(
    private readonly perMinute: number,
    private readonly limits: Pick<FleetLimiter, 'take' | 'give'>,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** Counts one request against the key's rate, or throws 429 with Retry-After. */
  take(key: string, ownRate: number | null = null): Promise<void> {
    return this.takeRequest(key, ownRate, null);
  }

  /** Counts one request against the key's rate, waiting up to `maxWaitMs` for its turn, else 502 `gateway_busy`. */
  waitTurn(key: string, maxWaitMs: number, ownRate: number | null = null): Promise<void> {
    return this.takeRequest(key, ownRate, { waitMs: maxWaitMs });
  }

  /**
   * Admits a metered request: one request against the key's rate, then, when the key has a
   * tokens-per-minute limit, the request's token estimate (at most the whole limit: a request
   * larger than it still runs, alone in its minute). Answers what was counted, for `settleTokens`.
   */
  async admit(key: KeyRates, tokens: number, over: OverLimit): Promise<CountedTokens | null> {
    await this.takeRequest(key.keyId, key.rateLimitPerMinute, over);
    const limit = key.tokensPerMinute;
    if (limit === null || tokens <= 0) return null;
    const counted = Math.min(tokens, limit);
    try {
      const named = `tokens-per-minute limit of ${limit}`;
      await this.pass(await this.limits.take(tokenBucket(key.keyId), limit, counted, over?.waitMs ?? 0), over, { limit: named, over: named });
    } catch (err) {
      // A request refused for its tokens was not made: its turn goes back to the key's rate.
      const rate = key.rateLimitPerMinute ?? this.perMinute;
      if (rate > 0) await this.limits.give(requestBucket(key.keyId), rate, 1);
      throw err;
    }
    return { keyId: key.keyId, tokensPerMinute: limit, counted };
  }

  /** Gives back what a request counted beyond the tokens it used, or charges what it used beyond it. */
  async settleTokens(count: CountedTokens | null, used: number): Promise<void> {
    if (count === null) return;
    await this.limits.give(tokenBucket(count.keyId), count.tokensPerMinute, count.counted - used);
  }

  private async takeRequest(key: string, ownRate: number | null, over: OverLimit): Promise<void> {
    const rate = ownRate ?? this.perMinute;
    if (rate <= 0) return;
    await this.pass(await this.limits.take(requestBucket(key), rate, 1, over?.waitMs ?? 0), over, { limit: `rate limit of ${rate} requests per minute`, over: `rate of ${rate} requests per minute` });
  }

  /** Sleeps out an admission's wait, or throws its refusal naming the limit (`limit` in a 429, what the key is `over` in a 502). */
  private async pass(admission: Admission, over: OverLimit, named: { limit: string; over: string }): Promise<void> {
    if (admission.admitted) {
      if (admission.waitMs > 0) await this.sleep(admission.waitMs);
      return;
    }
    const headers = { 'retry-after': String(Math.max(1, Math.ceil(admission.retryAfterMs / 1000))) };
    if (over === null) throw new ApiError(429, 'rate_limit_exceeded', `${named.limit} exceeded for this key`, { headers });
    throw new ApiError(502, 'gateway_busy', `this key is over its ${named.over} and no turn came within ${over.waitMs} ms; retry later`, { type: 'upstream_error', headers });
  }
}

function tokenBucket(keyId: string): string {
  return `tpm:${keyId}`;
}

function requestBucket(keyId: string): string {
  return `rpm:${keyId}`;
}
