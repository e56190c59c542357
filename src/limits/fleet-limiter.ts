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
  /** How often full buckets and spent polls are deleted from the store. */
  readonly sweepMs: number;
  readonly logger: Pick<Logger, 'warn' | 'info'>;
  /** Told when the store goes out of reach (once an outage) and when it answers again. */
  readonly onStoreState?: (up: boolean) => void;
}

interface Lease {
  /** Units this process holds; negative when usage reported after the fact ran over what it held. */
  units: number;
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
 * rate): said once in the log, counted by `onStoreState`, and asked again every `probeMs` until it
 * answers, when the shared limits take over again.
 */
export class FleetLimiter {
  private readonly leases = new Map<string, Lease>();
  /** The store call under way for a bucket, by bucket. */
  private readonly asking = new Map<string, Promise<void>>();
  private readonly local = new MemoryLimitStore();
  private down = false;
  private probing: NodeJS.Timeout | null = null;
  private readonly sweeping: NodeJS.Timeout;

  constructor(
    private readonly store: LimitStore,
    private readonly options: FleetLimiterOptions,
  ) {
    this.sweeping = setInterval(() => void this.sweep(), options.sweepMs).unref();
    // A connection opened now is one the first request need not wait for.
    void store.probe().catch((err: unknown) => this.outage(err));
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
    if (grant.granted > 0) this.lease(bucket, grant.granted - short, now);
    // Refused: the lease stays as it was (one call at a time asks for a bucket, so nothing replaced it).
    else if (live) this.leases.set(bucket, lease);
    return admission(grant);
  }

  /** Hands `units` back to `bucket` (usage under what was taken), or, negative, charges them (usage over it). */
  async give(bucket: string, rate: number, units: number): Promise<void> {
    if (units === 0) return;
    const now = this.options.now();
    if (this.down) return this.local.give(bucket, rate, units, now);
    const lease = this.leases.get(bucket);
    if (lease !== undefined && lease.until > now) {
      lease.units += units;
      return;
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

  async close(): Promise<void> {
    clearInterval(this.sweeping);
    if (this.probing) clearInterval(this.probing);
    await this.store.close();
  }

  private lease(bucket: string, units: number, now: number): void {
    const current = this.leases.get(bucket);
    const kept = current !== undefined && current.until > now ? current.units : 0;
    this.leases.set(bucket, { units: kept + units, until: now + this.options.leaseMs });
  }

  private outage(err: unknown): void {
    if (this.down) return;
    this.down = true;
    this.leases.clear();
    this.options.logger.warn({ err }, 'the shared limit store is out of reach: each process limits on its own until it answers');
    this.options.onStoreState?.(false);
    this.probing = setInterval(() => void this.probe(), this.options.probeMs).unref();
  }

  /** Asks the store whether it answers again (the probe timer's step; a test calls it instead of waiting for the timer). */
  async probe(): Promise<void> {
    if (!this.down) return;
    try {
      await this.store.probe();
    } catch {
      return;
    }
    if (!this.down) return;
    if (this.probing) clearInterval(this.probing);
    this.probing = null;
    this.down = false;
    // What was counted alone while the store was away is not carried over: the shared buckets count from here.
    await this.local.close();
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

function admission(grant: Grant): Admission {
  return grant.granted > 0 ? { admitted: true, waitMs: grant.waitMs } : { admitted: false, retryAfterMs: grant.waitMs };
}
