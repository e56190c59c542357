import { given, refilled, take, type Bucket, type Grant, type TakeAsk } from './bucket';
import type { LimitStore } from './store';

/**
 * The limits in this process's memory: what each process counts alone while the shared store is
 * out of reach. Bounded: past `maxEntries` of a kind, those that no longer limit anything go
 * first, then the least recently used.
 */
export class MemoryLimitStore implements LimitStore {
  private readonly buckets = new Map<string, Bucket & { readonly rate: number }>();
  private readonly polls = new Map<string, { readonly at: number; readonly minIntervalMs: number }>();

  constructor(private readonly maxEntries = 100_000) {}

  async take(name: string, ask: TakeAsk, now: number): Promise<Grant> {
    return this.takeNow(name, ask, now);
  }

  /** `take`, answered synchronously. */
  takeNow(name: string, ask: TakeAsk, now: number): Grant {
    const result = take(refilled(this.buckets.get(name), ask.rate, now), ask);
    this.remember(this.buckets, name, { ...result.bucket, rate: ask.rate }, now);
    return result.grant;
  }

  async give(name: string, rate: number, units: number, now: number): Promise<void> {
    this.remember(this.buckets, name, { ...given(refilled(this.buckets.get(name), rate, now), rate, units), rate }, now);
  }

  async poll(id: string, minIntervalMs: number, now: number): Promise<number> {
    const last = this.polls.get(id);
    if (last !== undefined && now - last.at < minIntervalMs) return last.at + minIntervalMs - now;
    this.remember(this.polls, id, { at: now, minIntervalMs }, now);
    return 0;
  }

  async probe(): Promise<void> {}

  async sweep(now: number): Promise<void> {
    for (const [name, b] of this.buckets) if (refilled(b, b.rate, now).tokens >= b.rate) this.buckets.delete(name);
    for (const [id, p] of this.polls) if (now - p.at >= p.minIntervalMs) this.polls.delete(id);
  }

  async close(): Promise<void> {
    this.buckets.clear();
    this.polls.clear();
  }

  /** Re-inserting keeps each map in order of use, so the least recently used entries are the first to go. */
  private remember<V>(map: Map<string, V>, key: string, value: V, now: number): void {
    map.delete(key);
    map.set(key, value);
    if (map.size <= this.maxEntries) return;
    void this.sweep(now);
    for (const oldest of map.keys()) {
      if (map.size <= this.maxEntries) break;
      map.delete(oldest);
    }
  }
}
