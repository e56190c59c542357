/**
 * The token bucket every limit of the gateway counts with: `rate` units a minute, refilled
 * continuously, holding at most one minute's worth (so a quiet key may burst up to its rate).
 * A unit is a request (the request rate) or a token (the tokens-per-minute limit). The shared
 * store runs the same rule in SQL (src/limits/postgres-store.ts); test/unit/limits-bucket.test.ts
 * holds the two to the same answers.
 */
export interface Bucket {
  /** Units free now; below zero when units were promised ahead (a waiting caller, or usage over its estimate). */
  readonly tokens: number;
  /** When `tokens` was counted (milliseconds, the gateway's clock). */
  readonly at: number;
}

/** What one take asks for: `need` units now (or within `maxWaitMs`), and up to `want` when they are free (a lease). */
export interface TakeAsk {
  readonly rate: number;
  /** Units handed back with this take (a process's expired lease: negative when its usage ran over). */
  readonly returned: number;
  readonly need: number;
  readonly want: number;
  readonly maxWaitMs: number;
}

/** Units granted (0: refused, nothing taken) and how long until the first of them is due. */
export interface Grant {
  readonly granted: number;
  readonly waitMs: number;
}

/** `bucket` (a new one is full) refilled up to `rate` at `now`; a clock that went back refills nothing. */
export function refilled(bucket: Bucket | undefined, rate: number, now: number): Bucket {
  if (!bucket) return { tokens: rate, at: now };
  const elapsed = Math.max(0, now - bucket.at);
  return { tokens: Math.min(rate, bucket.tokens + (elapsed * rate) / 60_000), at: Math.max(bucket.at, now) };
}

/**
 * Takes from a refilled bucket: `want` when that many are free, else every whole free unit when
 * that covers `need`, else `need` promised ahead when it falls due within `maxWaitMs` (the bucket
 * goes below zero, so callers after it wait behind it), else nothing.
 */
export function take(bucket: Bucket, ask: TakeAsk): { bucket: Bucket; grant: Grant } {
  const free = given(bucket, ask.rate, ask.returned).tokens;
  let granted = 0;
  let waitMs = 0;
  if (free >= ask.want) granted = ask.want;
  else if (free >= ask.need) granted = Math.max(ask.need, Math.floor(free));
  else {
    waitMs = msUntil(free, ask.need, ask.rate);
    if (waitMs <= ask.maxWaitMs) granted = ask.need;
  }
  if (granted === 0) return { bucket: { tokens: free, at: bucket.at }, grant: { granted: 0, waitMs } };
  return { bucket: { tokens: free - granted, at: bucket.at }, grant: { granted, waitMs } };
}

/** Units handed back (unused lease, usage under its estimate) or charged after the fact (usage over it: negative tokens). */
export function given(bucket: Bucket, rate: number, units: number): Bucket {
  return { tokens: Math.min(rate, bucket.tokens + units), at: bucket.at };
}

/** Milliseconds until a bucket holding `free` units holds `need` (to the microsecond first: a refill's rounding error is no extra millisecond). */
export function msUntil(free: number, need: number, rate: number): number {
  return free >= need ? 0 : Math.ceil(Math.round(((need - free) * 60_000 * 1000) / rate) / 1000);
}
