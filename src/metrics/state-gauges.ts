import type { Pool } from 'pg';
import type { GatewayMetrics } from './gateway-metrics';

export interface ConsumerLag {
  readonly name: string;
  readonly behind: number;
  readonly lag_seconds: number;
}

/**
 * Gauges read from the database when Prometheus scrapes: open reservations, consumer lag, the job
 * queue and this process's connection pool. Reads are cheap (indexed or bounded) and happen only
 * per scrape.
 */
export function registerStateGauges(metrics: GatewayMetrics, source: { pool: Pool; schema: string; consumerLag: () => Promise<readonly ConsumerLag[]> }): void {
  const { pool, schema } = source;
  metrics.gauge('gateway_open_reservations', 'Reservations not yet settled or released, across accounts.', [], async () => {
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${schema}.reservations WHERE status = 'open'`);
    return [{ labels: {}, value: Number(rows[0]!.n) }];
  });
  metrics.gauge('gateway_frozen_minor_units', 'Money frozen by open reservations, across accounts, in minor units.', [], async () => {
    const { rows } = await pool.query<{ n: string }>(`SELECT COALESCE(sum(frozen), 0)::text AS n FROM ${schema}.balances`);
    return [{ labels: {}, value: Number(rows[0]!.n) }];
  });
  const lag = sharedPerScrape(source.consumerLag);
  metrics.gauge('gateway_consumer_lag_events', 'Events of the log a read model or process manager has not folded yet (capped at 10,000).', ['consumer'], async () =>
    (await lag()).map((c) => ({ labels: { consumer: c.name }, value: c.behind })),
  );
  metrics.gauge('gateway_consumer_lag_seconds', 'Age of the oldest event a read model or process manager has not folded yet.', ['consumer'], async () =>
    (await lag()).map((c) => ({ labels: { consumer: c.name }, value: c.lag_seconds })),
  );
  metrics.gauge('gateway_jobs', 'Jobs in the queue by kind and state (due, scheduled for later, running under a lease).', ['kind', 'state'], async () => {
    const { rows } = await pool.query<{ kind: string; state: string; n: string }>(
      `SELECT kind, CASE WHEN locked_until > now() THEN 'running' WHEN due_at <= now() THEN 'due' ELSE 'scheduled' END AS state, count(*)::text AS n
         FROM jobs GROUP BY 1, 2`,
    );
    return rows.map((r) => ({ labels: { kind: r.kind, state: r.state }, value: Number(r.n) }));
  });
  metrics.gauge('gateway_db_pool_connections', "This process's PostgreSQL pool: connections in use, idle, and callers waiting for one.", ['state'], async () => [
    { labels: { state: 'in_use' }, value: pool.totalCount - pool.idleCount },
    { labels: { state: 'idle' }, value: pool.idleCount },
    { labels: { state: 'waiting' }, value: pool.waitingCount },
  ]);
}

/** Both lag gauges read one status per scrape: the second caller within a moment gets the same answer. */
function sharedPerScrape<T>(read: () => Promise<T>): () => Promise<T> {
  let current: Promise<T> | null = null;
  return () => {
    if (!current) {
      current = read();
      void current.finally(() => setTimeout(() => (current = null), 0)).catch(() => undefined);
    }
    return current;
  };
}
