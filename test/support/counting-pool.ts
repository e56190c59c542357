import type { Pool } from 'pg';

/**
 * The pool, counting the statements whose text matches, on the pool and on the clients it lends.
 * `hold()` makes the matching statements wait (before they reach the database) until `release()`,
 * so a test can line callers up behind one statement instead of hoping they meet in time.
 * `eventRows()` counts the rows with an `event_id` those statements returned: events read.
 */
export function countingPool(
  pool: Pool,
  match: RegExp,
): { pool: Pool; count: () => number; eventRows: () => number; hold: () => void; release: () => void } {
  let n = 0;
  let eventRows = 0;
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  const counting = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, property) {
        if (property === 'query') {
          return (...args: unknown[]) => {
            const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string }).text ?? '');
            const run = () => ((t as { query: (...a: unknown[]) => unknown }).query as (...a: unknown[]) => unknown).apply(t, args);
            if (!match.test(text)) return run();
            n++;
            const counted = async () => {
              const result = (await run()) as { rows?: { event_id?: unknown }[] } | undefined;
              eventRows += (result?.rows ?? []).filter((row) => row.event_id != null).length;
              return result;
            };
            return gate ? gate.promise.then(counted) : counted();
          };
        }
        if (property === 'connect' && t === (pool as object)) {
          return async () => counting(await pool.connect());
        }
        const value = Reflect.get(t, property) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
      },
    });
  return {
    pool: counting(pool),
    count: () => n,
    eventRows: () => eventRows,
    hold() {
      let open!: () => void;
      gate ??= { promise: new Promise<void>((resolve) => (open = resolve)), open: () => open() };
    },
    release() {
      gate?.open();
      gate = null;
    },
  };
}

/** Reads of the global log after a position: the page a subscription asks for when woken. */
export const PAGE_READ = /FROM es_events\s+WHERE \(tx_id, position\) >/;

/** Matches the subscriptions' (and readAll's) reads of the global log, from the start or after a position. */
export const LOG_READ = /FROM es_events\s+WHERE (\(tx_id, position\) >|tx_id < pg_snapshot_xmin)/;
