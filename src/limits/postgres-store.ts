import type { Pool } from 'pg';
import { createPool } from '../db/database';
import { migrate, type Migration } from '../db/migrations';
import type { Grant, TakeAsk } from './bucket';
import type { LimitStore } from './store';

/**
 * The shared limits in PostgreSQL: UNLOGGED tables (no write-ahead log, so a take costs about
 * what a `SELECT 1` does; a crash of the server empties them, which only refills every bucket)
 * and one function call per step, so that a step is one round trip and atomic under the row's
 * lock. `limit_take` and `limit_give` are src/limits/bucket.ts's `refilled` then `take` or `given`, in SQL.
 */
/** `take`'s rule (src/limits/bucket.ts) on a refilled bucket's `free` units, as `limit_take` runs it in every version. */
const GRANT_FROM_FREE = `        granted := 0;
        wait_ms := 0;
        IF free >= p_want THEN
          granted := p_want;
        ELSIF free >= p_need THEN
          granted := GREATEST(p_need, floor(free));
        ELSE
          wait_ms := ceil(round((p_need - free) * 60000.0 * 1000 / p_rate) / 1000);
          IF wait_ms <= p_max_wait_ms THEN granted := p_need; END IF;
        END IF;`;

export const limitStoreMigrations: readonly Migration[] = [
  {
    version: 470,
    name: 'limits shared by every gateway process',
    sql: `
      CREATE UNLOGGED TABLE limit_buckets (
        bucket text PRIMARY KEY,
        tokens double precision NOT NULL,
        at bigint NOT NULL,
        rate double precision NOT NULL
      );
      CREATE UNLOGGED TABLE limit_polls (
        id text PRIMARY KEY,
        at bigint NOT NULL,
        min_interval_ms bigint NOT NULL
      );
      CREATE FUNCTION limit_take(p_bucket text, p_rate double precision, p_returned double precision, p_need double precision, p_want double precision, p_max_wait_ms double precision, p_now bigint,
                                 OUT granted double precision, OUT wait_ms double precision)
      LANGUAGE plpgsql AS $$
      DECLARE
        free double precision;
        last bigint;
      BEGIN
        INSERT INTO limit_buckets (bucket, tokens, at, rate) VALUES (p_bucket, p_rate, p_now, p_rate) ON CONFLICT (bucket) DO NOTHING;
        SELECT b.tokens, b.at INTO free, last FROM limit_buckets b WHERE b.bucket = p_bucket FOR UPDATE;
        free := LEAST(p_rate, LEAST(p_rate, free + GREATEST(0, p_now - last) * p_rate / 60000.0) + p_returned);
${GRANT_FROM_FREE}
        UPDATE limit_buckets SET tokens = free - granted, at = GREATEST(last, p_now), rate = p_rate WHERE bucket = p_bucket;
      END $$;
      CREATE FUNCTION limit_give(p_bucket text, p_rate double precision, p_units double precision, p_now bigint) RETURNS void
      LANGUAGE sql AS $$
        INSERT INTO limit_buckets AS b (bucket, tokens, at, rate) VALUES (p_bucket, LEAST(p_rate, p_rate + p_units), p_now, p_rate)
        ON CONFLICT (bucket) DO UPDATE
          SET tokens = LEAST(p_rate, LEAST(p_rate, b.tokens + GREATEST(0, p_now - b.at) * p_rate / 60000.0) + p_units), at = GREATEST(b.at, p_now), rate = p_rate;
      $$;
      CREATE FUNCTION limit_poll(p_id text, p_min_interval_ms bigint, p_now bigint) RETURNS bigint
      LANGUAGE plpgsql AS $$
      DECLARE
        last bigint;
      BEGIN
        INSERT INTO limit_polls (id, at, min_interval_ms) VALUES (p_id, p_now, p_min_interval_ms)
          ON CONFLICT (id) DO UPDATE SET at = p_now, min_interval_ms = p_min_interval_ms
          WHERE limit_polls.at <= p_now - p_min_interval_ms;
        IF FOUND THEN RETURN 0; END IF;
        SELECT p.at INTO last FROM limit_polls p WHERE p.id = p_id;
        RETURN last + p_min_interval_ms - p_now;
      END $$;
    `,
  },
  {
    version: 471,
    name: 'limits: one atomic upsert per take and poll, on the database clock',
    // A take or poll locks (or creates) its row in the same statement that reads it: a sweep that
    // deletes the row in between can no longer leave the read with nothing (NULLs that granted a
    // full bucket and recorded nothing). `p_now` NULL counts on the database's clock, so every
    // host of the fleet refills a bucket from one clock; a caller's clock is still accepted
    // (tests, and a process of the previous version during a rolling deploy).
    sql: `
      CREATE FUNCTION limit_now_ms() RETURNS bigint
      LANGUAGE sql VOLATILE AS $$ SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;
      CREATE OR REPLACE FUNCTION limit_take(p_bucket text, p_rate double precision, p_returned double precision, p_need double precision, p_want double precision, p_max_wait_ms double precision, p_now bigint,
                                            OUT granted double precision, OUT wait_ms double precision)
      LANGUAGE plpgsql AS $$
      DECLARE
        t bigint := COALESCE(p_now, limit_now_ms());
        free double precision;
        last bigint;
      BEGIN
        INSERT INTO limit_buckets AS b (bucket, tokens, at, rate) VALUES (p_bucket, p_rate, t, p_rate)
          ON CONFLICT (bucket) DO UPDATE SET rate = EXCLUDED.rate
          RETURNING b.tokens, b.at INTO free, last;
        free := LEAST(p_rate, LEAST(p_rate, free + GREATEST(0, t - last) * p_rate / 60000.0) + p_returned);
${GRANT_FROM_FREE}
        UPDATE limit_buckets SET tokens = free - granted, at = GREATEST(last, t) WHERE bucket = p_bucket;
      END $$;
      CREATE OR REPLACE FUNCTION limit_give(p_bucket text, p_rate double precision, p_units double precision, p_now bigint) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        t bigint := COALESCE(p_now, limit_now_ms());
      BEGIN
        INSERT INTO limit_buckets AS b (bucket, tokens, at, rate) VALUES (p_bucket, LEAST(p_rate, p_rate + p_units), t, p_rate)
        ON CONFLICT (bucket) DO UPDATE
          SET tokens = LEAST(p_rate, LEAST(p_rate, b.tokens + GREATEST(0, t - b.at) * p_rate / 60000.0) + p_units), at = GREATEST(b.at, t), rate = p_rate;
      END $$;
      -- A poll seen for the first time is inserted as one made an interval ago: due, like any poll
      -- whose interval has passed, so one path records it.
      CREATE OR REPLACE FUNCTION limit_poll(p_id text, p_min_interval_ms bigint, p_now bigint) RETURNS bigint
      LANGUAGE plpgsql AS $$
      DECLARE
        t bigint := COALESCE(p_now, limit_now_ms());
        last bigint;
      BEGIN
        INSERT INTO limit_polls AS p (id, at, min_interval_ms) VALUES (p_id, t - p_min_interval_ms, p_min_interval_ms)
          ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id
          RETURNING p.at INTO last;
        IF last > t - p_min_interval_ms THEN RETURN last + p_min_interval_ms - t; END IF;
        UPDATE limit_polls SET at = t, min_interval_ms = p_min_interval_ms WHERE id = p_id;
        RETURN 0;
      END $$;
    `,
  },
];

/**
 * Whose clock a store counts on: the database's (production: one clock for every host of the
 * fleet, so a host whose clock runs ahead cannot hold back the others' refills), or the caller's
 * `now` (tests that move time by hand).
 */
export type LimitClock = 'database' | 'caller';

export class PostgresLimitStore implements LimitStore {
  private constructor(
    private readonly pool: Pool,
    private readonly clock: LimitClock,
  ) {}

  /**
   * The limiter's own small pool, with short timeouts: a store out of reach must not hold
   * requests for long, nor take the connections the gateway's own work needs.
   */
  static connect(url: string, timeoutMs: number, clock: LimitClock = 'database'): PostgresLimitStore {
    return new PostgresLimitStore(createPool(url, 2, timeoutMs, timeoutMs), clock);
  }

  /**
   * Creates or updates the limit tables and functions in a database of their own
   * (LIMITS_DATABASE_URL), under the migration lock. On a pool of its own with the ordinary
   * timeouts: the lock may wait for another process migrating.
   */
  static async prepare(url: string): Promise<void> {
    const pool = createPool(url, 1);
    try {
      await migrate(pool, limitStoreMigrations);
    } finally {
      await pool.end();
    }
  }

  async take(bucket: string, ask: TakeAsk, now: number): Promise<Grant> {
    const { rows } = await this.pool.query<{ granted: number; wait_ms: number }>({
      name: 'limit-take',
      text: 'SELECT granted, wait_ms FROM limit_take($1, $2, $3, $4, $5, $6, $7)',
      values: [bucket, ask.rate, ask.returned, ask.need, ask.want, ask.maxWaitMs, this.at(now)],
    });
    return { granted: Number(rows[0]!.granted), waitMs: Number(rows[0]!.wait_ms) };
  }

  async give(bucket: string, rate: number, units: number, now: number): Promise<void> {
    await this.pool.query({
      name: 'limit-give',
      text: 'SELECT limit_give($1, $2, $3, $4)',
      values: [bucket, rate, units, this.at(now)],
    });
  }

  async poll(id: string, minIntervalMs: number, now: number): Promise<number> {
    const { rows } = await this.pool.query<{ wait: string }>({
      name: 'limit-poll',
      text: 'SELECT limit_poll($1, $2, $3) AS wait',
      values: [id, minIntervalMs, this.at(now)],
    });
    return Number(rows[0]!.wait);
  }

  /** A real call of the functions a take uses, so a database without them (never migrated) does not pass for one that answers. */
  async probe(): Promise<void> {
    await this.pool.query({ name: 'limit-probe', text: "SELECT limit_poll('probe:limit-store', 0, NULL)" });
  }

  async sweep(now: number): Promise<void> {
    const at = this.at(now);
    await this.pool.query({ text: 'DELETE FROM limit_buckets WHERE tokens + ((COALESCE($1::bigint, limit_now_ms()) - at) * rate / 60000.0) >= rate', values: [at] });
    await this.pool.query({ text: 'DELETE FROM limit_polls WHERE at <= COALESCE($1::bigint, limit_now_ms()) - min_interval_ms', values: [at] });
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  /** The `p_now` the functions are given: NULL counts on the database's clock. */
  private at(now: number): number | null {
    return this.clock === 'caller' ? now : null;
  }
}
