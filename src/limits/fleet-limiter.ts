import { isDatabaseUnavailable } from '../db/unavailable';
import type { Logger } from '../log';
import type { Grant } from './bucket';
import { MemoryLimitStore } from './memory-store';
import type { LimitStore } from './store';

/** A take's answer: admitted (after `waitMs`, when it was promised a turn ahead), or refused until `retryAfterMs`. */
export type Admission = { readonly admitted: true; readonly waitMs: number } | { readonly admitted: false; readonly retryAfterMs: number };

export interface FleetLimiterOptions {
  /** The gateway's clock, in milliseconds. */
  readonly now: () => number;
  /**
   * How much of a bucket's rate a process takes from the shared store at once: the units that
   * refill in `leaseMs` (none below one unit, so a slow rate is counted exactly, in the store).
   * Units a process leased and did not use within `leaseMs` go back with its next take.
   */
  readonly leaseMs: number;
  /** How often a process whose store is out of reach asks it again. */
  readonly probeMs: number;
  /**
   * How many probes in a row must answer before the process counts with the fleet again (default
   * 3): a store that fails and answers by turns is not trusted on one answer.
   */
  readonly recoverAfter?: number;
  /** How often expired leases are handed back to the store (default: `leaseMs`, at least a second). */
  readonly flushMs?: number;
  /** How often full buckets and spent polls are deleted from the store. */
  readonly sweepMs: number;
  readonly logger: Pick<Logger, 'warn' | 'info' | 'error'>;
  /**
   * Told when the process stops counting with the fleet (once a time: `outage` when the store was
   * out of reach, `fault` when it answered with an error) and when it counts with it again.
   */
  readonly onStoreState?: (up: boolean, cause?: StoreFailure) => void;
}

/** Why the shared store was left: out of reach (connection, timeout), or an error it answered (a bug or a broken schema). */
export type StoreFailure = 'outage' | 'fault';

interface Lease {
  /** Units this process holds (never below zero: usage over them is charged to the store at once). */
  units: number;
  readonly rate: number;
  readonly until: number;
}

/**
 * The limits of the whole fleet: buckets and polls in a store every gateway process shares, with
 * the hot path kept in the process. A process leases a slice of a bucket (one `leaseMs` of its
 * rate) and admits from it locally until it is spent, so most requests never wait on the store;
 * the fleet together never admits more than the bucket holds, and at worst a lease a process holds
 * and does not use is missing from the others for `leaseMs`.
 *
 * When the store fails, each process limits on its own (the fleet may then admit up to N times a
 * rate): said once in the log (a warning when the store is out of reach, an error when it answered
 * with an error, which no retry mends), told to `onStoreState`, and asked again every `probeMs`
 * until `recoverAfter` probes in a row answer, when the shared limits take over again. What the
 * process counted alone is kept: should the store fail again, the process's own buckets still hold
 * what it admitted, rather than start full.
 */
export class FleetLimiter {
  private readonly leases = new Map<string, Lease>();
  /** The store call under way for a bucket, by bucket. */
  private readonly asking = new Map<string, Promise<void>>();
  private readonly local = new MemoryLimitStore();
  private down = false;
  private closed = false;
  /** Probes answered in a row since the store failed. */
  private answered = 0;
  private probing: NodeJS.Timeout | null = null;
  private readonly sweeping: NodeJS.Timeout;
  private readonly flushing: NodeJS.Timeout;

  constructor(
    private readonly store: LimitStore,
    private readonly options: FleetLimiterOptions,
  ) {
    this.sweeping = setInterval(() => void this.sweep(), options.sweepMs).unref();
    this.flushing = setInterval(() => void this.flush(), options.flushMs ?? Math.max(options.leaseMs, 1_000)).unref();
    // A connection opened now is one the first request need not wait for.
    void store.probe().catch((err: unknown) => this.outage(err));
  }

  /** How many buckets this process holds a lease of (expired ones included, until the flush). */
  get leasesHeld(): number {
    return this.leases.size;
  }

  /** Whether the shared store answered its last call. */
  get shared(): boolean {
    return !this.down;
  }

  /**
   * Takes `need` units of `bucket` (refilling at `rate` a minute): now, or promised within
   * `maxWaitMs`. A refusal takes nothing. One call at a time asks the store for a bucket: the
   * others of this process wait for its lease rather than each asking, and being refused, while
   * it is on its way.
   */
  async take(bucket: string, rate: number, need: number, maxWaitMs: number): Promise<Admission> {
    for (let asking = this.asking.get(bucket); asking !== undefined && !this.down; asking = this.asking.get(bucket)) await asking;
    const now = this.options.now();
    if (this.down) return admission(this.local.takeNow(bucket, { rate, need, want: need, maxWaitMs, returned: 0 }, now));
    const lease = this.leases.get(bucket);
    if (lease !== undefined && lease.until > now && lease.units >= need) {
      lease.units -= need;
      return { admitted: true, waitMs: 0 };
    }
    const asked = this.askStore(bucket, rate, need, maxWaitMs, now);
    const settled = asked.then(
      () => undefined,
      () => undefined,
    );
    this.asking.set(bucket, settled);
    try {
      return await asked;
    } finally {
      if (this.asking.get(bucket) === settled) this.asking.delete(bucket);
    }
  }

  private async askStore(bucket: string, rate: number, need: number, maxWaitMs: number, now: number): Promise<Admission> {
    // The lease goes into this take: what it still holds counts towards `need`, an expired one goes back.
    const lease = this.leases.get(bucket);
    const live = lease !== undefined && lease.until > now;
    const held = live ? lease.units : 0;
    this.leases.delete(bucket);
    const short = need - held;
    const spare = Math.floor((rate * this.options.leaseMs) / 60_000);
    let grant: Grant;
    try {
      grant = await this.store.take(bucket, { rate, need: short, want: short + spare, maxWaitMs, returned: live ? 0 : (lease?.units ?? 0) }, now);
    } catch (err) {
      this.outage(err);
      return admission(this.local.takeNow(bucket, { rate, need, want: need, maxWaitMs, returned: 0 }, now));
    }
    if (grant.granted > 0) this.lease(bucket, rate, grant.granted - short, now);
    // Refused: the lease stays as it was (one call at a time asks for a bucket, so nothing replaced it).
    else if (live) this.leases.set(bucket, lease);
    return admission(grant);
  }

  /**
   * Hands `units` back to `bucket` (usage under what was taken), or, negative, charges them (usage
   * over it). A live lease keeps units handed back, and pays a charge from what it holds; the rest
   * of a charge goes to the store at once, where every process sees it (in a lease it would reach
   * the store only once this process took from the bucket again, which it may never do).
   */
  async give(bucket: string, rate: number, units: number): Promise<void> {
    if (units === 0) return;
    const now = this.options.now();
    if (this.down) return this.local.give(bucket, rate, units, now);
    const lease = this.leases.get(bucket);
    if (lease !== undefined && lease.until > now) {
      const paid = Math.max(units, -lease.units);
      lease.units += paid;
      units -= paid;
      if (units === 0) return;
    }
    try {
      await this.store.give(bucket, rate, units, now);
    } catch (err) {
      this.outage(err);
      await this.local.give(bucket, rate, units, now);
    }
  }

  /** Records a poll of `id` when the last was at least `minIntervalMs` ago (answers 0), else the milliseconds until one is due. */
  async poll(id: string, minIntervalMs: number): Promise<number> {
    const now = this.options.now();
    if (this.down) return this.local.poll(id, minIntervalMs, now);
    try {
      return await this.store.poll(id, minIntervalMs, now);
    } catch (err) {
      this.outage(err);
      return this.local.poll(id, minIntervalMs, now);
    }
  }

  /** Hands every lease back (units this process will not use), then closes the store; no timer runs after. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeping);
    clearInterval(this.flushing);
    if (this.probing) clearInterval(this.probing);
    this.probing = null;
    if (!this.down) await this.handBack(() => true);
    await this.store.close();
  }

  /**
   * Hands the expired leases' units back to the store and forgets them, so the units return to the
   * fleet without waiting for this process's next take of the bucket, and a key not seen again
   * leaves nothing behind (the flush timer's step; a test calls it instead of waiting).
   */
  async flush(): Promise<void> {
    if (this.down || this.closed) return;
    const now = this.options.now();
    await this.handBack((lease) => lease.until <= now);
  }

  private async handBack(which: (lease: Lease) => boolean): Promise<void> {
    const now = this.options.now();
    const gone: [string, Lease][] = [];
    for (const [bucket, lease] of this.leases) {
      // A take under way decides about its bucket's lease itself.
      if (!which(lease) || this.asking.has(bucket)) continue;
      this.leases.delete(bucket);
      if (lease.units !== 0) gone.push([bucket, lease]);
    }
    try {
      for (const [bucket, lease] of gone) await this.store.give(bucket, lease.rate, lease.units, now);
    } catch (err) {
      this.outage(err);
    }
  }

  private lease(bucket: string, rate: number, units: number, now: number): void {
    const current = this.leases.get(bucket);
    const kept = current !== undefined && current.until > now ? current.units : 0;
    this.leases.set(bucket, { units: kept + units, rate, until: now + this.options.leaseMs });
  }

  private outage(err: unknown): void {
    if (this.down || this.closed) return;
    this.down = true;
    this.answered = 0;
    this.leases.clear();
    const cause = storeFailure(err);
    if (cause === 'outage') this.options.logger.warn({ err }, 'the shared limit store is out of reach: each process limits on its own until it answers');
    else this.options.logger.error({ err }, 'the shared limit store answered with an error: each process limits on its own until its calls succeed again');
    this.options.onStoreState?.(false, cause);
    this.probing = setInterval(() => void this.probe(), this.options.probeMs).unref();
  }

  /**
   * Asks the store whether it answers again (the probe timer's step; a test calls it instead of
   * waiting for the timer). The process counts with the fleet again after `recoverAfter` answers in
   * a row; one failure starts the count again.
   */
  async probe(): Promise<void> {
    if (!this.down || this.closed) return;
    try {
      await this.store.probe();
    } catch {
      this.answered = 0;
      return;
    }
    if (!this.down || this.closed) return;
    this.answered++;
    if (this.answered < (this.options.recoverAfter ?? 3)) return;
    if (this.probing) clearInterval(this.probing);
    this.probing = null;
    this.down = false;
    // The buckets counted alone are kept (swept once full): a store that fails again finds them as they were.
    this.options.logger.info({}, 'the shared limit store answers again: limits hold across the fleet');
    this.options.onStoreState?.(true);
  }

  private async sweep(): Promise<void> {
    const now = this.options.now();
    await this.local.sweep(now);
    if (this.down) return;
    await this.store.sweep(now).catch((err: unknown) => this.outage(err));
  }
}

/**
 * A store out of reach (no connection, a timeout) is an outage, which time mends; any other error
 * (a missing function, a bad statement) is a fault, which a retry does not mend.
 */
export function storeFailure(err: unknown): StoreFailure {
  if (isDatabaseUnavailable(err)) return 'outage';
  if (!(err instanceof Error)) return 'fault';
  const { code } = err as { code?: unknown };
  // 57014: the server cancelled the statement (statement_timeout); node-postgres' own query_timeout says so by message.
  return code === '57014' || err.message === 'Query read timeout' ? 'outage' : 'fault';
}

function admission(grant: Grant): Admission {
  return grant.granted > 0 ? { admitted: true, waitMs: grant.waitMs } : { admitted: false, retryAfterMs: grant.waitMs };
}
