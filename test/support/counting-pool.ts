import type { Pool } from 'pg';

/** The pool, counting the statements whose text matches, on the pool and on the clients it lends. */
export function countingPool(pool: Pool, match: RegExp): { pool: Pool; count: () => number } {
  let n = 0;
  const counting = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, property) {
        if (property === 'query') {
          return (...args: unknown[]) => {
            const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string }).text ?? '');
            if (match.test(text)) n++;
            return ((t as { query: (...a: unknown[]) => unknown }).query as (...a: unknown[]) => unknown).apply(t, args);
          };
        }
        if (property === 'connect' && t === (pool as object)) {
          return async () => counting(await pool.connect());
        }
        const value = Reflect.get(t, property) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
      },
    });
  return { pool: counting(pool), count: () => n };
}

/** Matches the subscriptions' (and readAll's) reads of the global log, from the start or after a position. */
export const LOG_READ = /FROM es_events\s+WHERE (\(tx_id, position\) >|tx_id < pg_snapshot_xmin)/;
