import type { UpstreamOutcome } from '../channel';

/** What GET /admin/v1/channels shows of a channel's recent calls in the answering process. */
export interface RecentCalls {
  /** The window the counts cover: the current minute and the whole minutes before it, this long in all. */
  readonly window_seconds: number;
  /** Calls that ended with an answer or a failure (a client that left is not counted). */
  readonly calls: number;
  /** Calls with no answer (timeout, network) or a 5xx answer. */
  readonly errors: number;
  /** The provider's 4xx answers (429 and refused credentials among them). */
  readonly client_errors: number;
  /** errors ÷ calls, four decimals; null with no calls. */
  readonly error_rate: number | null;
  /** Time to the response headers of the calls that answered (any status), whole milliseconds; null when none answered. */
  readonly latency_ms: { readonly mean: number; readonly max: number } | null;
}

/** One minute of a channel's calls. */
interface Bucket {
  minute: number;
  calls: number;
  errors: number;
  clientErrors: number;
  answered: number;
  latencySumMs: number;
  latencyMaxMs: number;
}

const MINUTE_MS = 60_000;

/** The window the admin API's `recent_calls` covers (docs/operations.md, The channels API). */
export const CHANNEL_CALLS_WINDOW_MINUTES = 15;

/**
 * Rolling per-process counts of each channel's upstream calls, fed by the channel's observer (the
 * same one /metrics is): a ring of one bucket per minute per channel, so a call costs a map lookup
 * and a few additions, and nothing is kept beyond the window. Not shared between processes: each
 * gateway answers for the calls it made itself.
 */
export class ChannelCallStats {
  private readonly rings = new Map<string, Bucket[]>();
  private readonly minutes: number;

  constructor(
    windowMinutes: number,
    private readonly now: () => number,
  ) {
    if (!Number.isInteger(windowMinutes) || windowMinutes < 1) throw new RangeError(`windowMinutes must be a positive integer, not ${windowMinutes}`);
    this.minutes = windowMinutes;
  }

  observe(channel: string, outcome: UpstreamOutcome, seconds: number): void {
    if (outcome === 'aborted') return;
    const minute = Math.floor(this.now() / MINUTE_MS);
    let ring = this.rings.get(channel);
    if (!ring) {
      ring = Array.from({ length: this.minutes }, () => emptyBucket(-1));
      this.rings.set(channel, ring);
    }
    let bucket = ring[minute % this.minutes]!;
    if (bucket.minute !== minute) {
      bucket = emptyBucket(minute);
      ring[minute % this.minutes] = bucket;
    }
    bucket.calls++;
    if (outcome === 'server_error' || outcome === 'timeout' || outcome === 'network') bucket.errors++;
    if (outcome === 'client_error') bucket.clientErrors++;
    if (outcome === 'ok' || outcome === 'client_error' || outcome === 'server_error') {
      const ms = seconds * 1000;
      bucket.answered++;
      bucket.latencySumMs += ms;
      if (ms > bucket.latencyMaxMs) bucket.latencyMaxMs = ms;
    }
  }

  summary(channel: string): RecentCalls {
    const oldest = Math.floor(this.now() / MINUTE_MS) - this.minutes + 1;
    let calls = 0;
    let errors = 0;
    let clientErrors = 0;
    let answered = 0;
    let latencySumMs = 0;
    let latencyMaxMs = 0;
    for (const b of this.rings.get(channel) ?? []) {
      if (b.minute < oldest) continue;
      calls += b.calls;
      errors += b.errors;
      clientErrors += b.clientErrors;
      answered += b.answered;
      latencySumMs += b.latencySumMs;
      latencyMaxMs = Math.max(latencyMaxMs, b.latencyMaxMs);
    }
    return {
      window_seconds: this.minutes * 60,
      calls,
      errors,
      client_errors: clientErrors,
      error_rate: calls === 0 ? null : Math.round((errors / calls) * 10_000) / 10_000,
      latency_ms: answered === 0 ? null : { mean: Math.round(latencySumMs / answered), max: Math.round(latencyMaxMs) },
    };
  }
}

function emptyBucket(minute: number): Bucket {
  return { minute, calls: 0, errors: 0, clientErrors: 0, answered: 0, latencySumMs: 0, latencyMaxMs: 0 };
}
