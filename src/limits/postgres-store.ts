import type { Pool } from 'pg';
import { createPool } from '../db/database';
import type { Migration } from '../db/migrations';
import type { Grant, TakeAsk } from './bucket';
import type { LimitStore } from './store';

/**
 * The shared limits in PostgreSQL: UNLOGGED tables (no write-ahead log, so a take costs about
 * what a `SELECT 1` does; a crash of the server empties them, which only refills every bucket)
 * and one function call per step, so that a step is one round trip and atomic under the row's
 * lock. `limit_take` and `limit_give` are src/limits/bucket.ts's `refilled` then `take` or `given`, in SQL.
 */
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
        granted := 0;
        wait_ms := 0;
        IF free >= p_want THEN
          granted := p_want;
        ELSIF free >= p_need THEN
          granted := GREATEST(p_need, floor(free));
        ELSE
          wait_ms := ceil(round((p_need - free) * 60000.0 * 1000 / p_rate) / 1000);
          IF wait_ms <= p_max_wait_ms THEN granted := p_need; END IF;
        END IF;
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
];

export class PostgresLimitStore implements LimitStore {
  private constructor(private readonly pool: Pool) {}

  /**
   * The limiter's own small pool, with short timeouts: a store out of reach must not hold
   * requests for long, nor take the connections the gateway's own work needs.
   */
  static connect(url: string, timeoutMs: number): PostgresLimitStore {
    return new PostgresLimitStore(createPool(url, 2, timeoutMs, timeoutMs));
  }

  async take(bucket: string, ask: TakeAsk, now: number): Promise<Grant> {
    const { rows } = await this.pool.query<{ granted: number; wait_ms: number }>({
      name: 'limit-take',
      text: 'SELECT granted, wait_ms FROM limit_take($1, $2, $3, $4, $5, $6, $7)',
      values: [bucket, ask.rate, ask.returned, ask.need, ask.want, ask.maxWaitMs, now],
    });
    return { granted: Number(rows[0]!.granted), waitMs: Number(rows[0]!.wait_ms) };
  }

  async give(bucket: string, rate: number, units: number, now: number): Promise<void> {
    await this.pool.query({
      name: 'limit-give',
      text: 'SELECT limit_give($1, $2, $3, $4)',
      values: [bucket, rate, units, now],
    });
  }

  async poll(id: string, minIntervalMs: number, now: number): Promise<number> {
    const { rows } = await this.pool.query<{ wait: string }>({
      name: 'limit-poll',
      text: 'SELECT limit_poll($1, $2, $3) AS wait',
      values: [id, minIntervalMs, now],
    });
    return Number(rows[0]!.wait);
  }

  async probe(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async sweep(now: number): Promise<void> {
    await this.pool.query({ text: 'DELETE FROM limit_buckets WHERE tokens + (($1::bigint - at) * rate / 60000.0) >= rate', values: [now] });
    await this.pool.query({ text: 'DELETE FROM limit_polls WHERE at <= $1::bigint - min_interval_ms', values: [now] });
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
