import type { Grant, TakeAsk } from './bucket';

/**
 * Where the limits of every gateway process meet: buckets and poll times by name. Each call is
 * one atomic step. `now` is the caller's clock (milliseconds): the in-memory store counts on it,
 * so a test moves time instead of waiting for it; the PostgreSQL store counts on the database's
 * clock unless made to use the caller's (src/limits/postgres-store.ts). A call that fails for want
 * of a connection or in time means the store is out of reach; FleetLimiter then limits per process
 * until `probe` answers again.
 */
export interface LimitStore {
  take(bucket: string, ask: TakeAsk, now: number): Promise<Grant>;
  /** Hands back (or, negative, charges) `units` to a bucket of `rate`. */
  give(bucket: string, rate: number, units: number, now: number): Promise<void>;
  /**
   * Records a poll of `id` when the last one is at least `minIntervalMs` old and answers 0; else
   * records nothing and answers the milliseconds until the next poll is due.
   */
  poll(id: string, minIntervalMs: number, now: number): Promise<number>;
  /** Resolves when the store answers a real call (not merely a connection). */
  probe(): Promise<void>;
  /** Deletes what no longer limits anything (full buckets, polls older than their interval). */
  sweep(now: number): Promise<void>;
  close(): Promise<void>;
}
