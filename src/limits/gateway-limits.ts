import type { Config } from '../config';
import type { Logger } from '../log';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { FleetLimiter } from './fleet-limiter';
import { PostgresLimitStore } from './postgres-store';

/**
 * The gateway's limiter: shared through PostgreSQL (LIMITS_DATABASE_URL, else the gateway's own
 * database), on the database's clock, its outages logged by the limiter and counted here, with a
 * gauge saying whether this process counts with the fleet (1) or alone (0). `injectedClock`: the
 * gateway was given a clock (a test holding or moving time), which the limits then count on too,
 * as everything else of that gateway does.
 */
export function fleetLimiter(config: Config, databaseUrl: string, metrics: GatewayMetrics, logger: Logger, now: () => number, injectedClock: boolean): FleetLimiter {
  const store = PostgresLimitStore.connect(config.limitsDatabaseUrl ?? databaseUrl, config.limitsStoreTimeoutMs, injectedClock ? 'caller' : 'database');
  const limiter = new FleetLimiter(store, {
    now,
    leaseMs: config.limitsLeaseMs,
    probeMs: config.limitsProbeMs,
    sweepMs: 60_000,
    logger,
    // Only an outage is counted: a fault (an error the store answered) is logged as an error.
    onStoreState: (up, cause) => {
      if (!up && cause === 'outage') metrics.countLimitStoreOutage();
    },
  });
  metrics.gauge('gateway_limit_store_up', 'Whether this process counts its limits in the shared store with every other process (1), or alone while the store is out of reach (0).', [], async () => [
    { labels: {}, value: limiter.shared ? 1 : 0 },
  ]);
  return limiter;
}

/**
 * Gives a database of the limits' own (LIMITS_DATABASE_URL) their tables and functions; the
 * gateway's own database gets them with the rest of its schema (src/storage.ts). A gateway that
 * cannot do it does not start: with the schema missing, no process could share a limit.
 */
export async function prepareLimitsDatabase(config: Config): Promise<void> {
  if (config.limitsDatabaseUrl === undefined) return;
  try {
    await PostgresLimitStore.prepare(config.limitsDatabaseUrl);
  } catch (err) {
    // The URL is not named: it may hold a password.
    throw new Error(`LIMITS_DATABASE_URL: could not create the limit tables and functions: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}
