import { migrate } from '../src/db/migrations';
import { FleetLimiter } from '../src/limits/fleet-limiter';
import { MemoryLimitStore } from '../src/limits/memory-store';
import { PostgresLimitStore, limitStoreMigrations } from '../src/limits/postgres-store';
import type { LimitStore } from '../src/limits/store';
import { measure, printTable, type BenchDatabase, type Measurement, type Table } from './support';

type Report = (table: Table) => void;

/**
 * `limits`: what one rate check costs a request, in this process: counted in memory (a single
 * process's limit), and shared through PostgreSQL, leasing slices of several sizes (a lease of 0
 * asks the store every time). The requests come exactly at the key's rate (a hand-moved clock), so
 * none is refused and the store is asked once per lease; the store counts on that clock too (not the
 * database's).
 */
export async function benchLimits(db: BenchDatabase, report: Report = printTable, iterations = 5_000): Promise<Table> {
  await migrate(db.pool, limitStoreMigrations);
  const rows: Measurement[] = [];
  const variants: { name: string; store: () => LimitStore; rate: number; leaseMs: number }[] = [
    { name: 'in memory (one process alone)', store: () => new MemoryLimitStore(), rate: 600, leaseMs: 0 },
    { name: 'PostgreSQL, every check (lease 0)', store: () => PostgresLimitStore.connect(db.url, 1_000, 'caller'), rate: 600, leaseMs: 0 },
    { name: 'PostgreSQL, 600/min, lease 1 s (10 a lease)', store: () => PostgresLimitStore.connect(db.url, 1_000, 'caller'), rate: 600, leaseMs: 1_000 },
    { name: 'PostgreSQL, 6,000/min, lease 1 s (100 a lease)', store: () => PostgresLimitStore.connect(db.url, 1_000, 'caller'), rate: 6_000, leaseMs: 1_000 },
  ];
  for (const [index, variant] of variants.entries()) {
    let now = Date.now();
    const limiter = new FleetLimiter(variant.store(), { now: () => now, leaseMs: variant.leaseMs, probeMs: 60_000, sweepMs: 3_600_000, logger: { warn() {}, info() {} } as never });
    let refused = 0;
    try {
      rows.push(
        await measure(
          variant.name,
          async () => {
            now += 60_000 / variant.rate;
            // Each variant has a bucket of its own: the previous variant's clock ran ahead of this one's.
            if (!(await limiter.take(`rpm:bench-${index}`, variant.rate, 1, 0)).admitted) refused++;
          },
          { iterations, warmupMs: 300 },
        ),
      );
    } finally {
      await limiter.close();
    }
    if (refused > 0) throw new Error(`${variant.name}: ${refused} checks refused; the bench expects none`);
  }
  const table: Table = {
    title: 'One rate check (FleetLimiter.take), sequential, requests arriving at the rate',
    rows,
    baseline: rows[0]!.name,
    unit: 'checks/s',
    notes: [`${iterations} checks a row after a 300 ms warm-up; the PostgreSQL rows call limit_take over the limiter's own pool, on the bench database`],
  };
  report(table);
  return table;
}
