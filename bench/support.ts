import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { Client, type Pool } from 'pg';
import { createPool, startEmbeddedPostgres, tempDir, type EmbeddedServer } from '../src/db/database';
import { migrate } from '../src/db/migrations';
import { ALL_MIGRATIONS } from '../src/gateway';
import { createLogger, type Logger } from '../src/log';

/** The integer `name` of `env`, or `fallback` when it is unset or empty; anything below `min` is refused. */
export function integerFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got ${raw}`);
  return n;
}

/* ------------------------------------------------------------------------------------------------
 * Database
 * ---------------------------------------------------------------------------------------------- */

export interface BenchDatabase {
  readonly pool: Pool;
  readonly url: string;
  /** Where the server came from, for the report header. */
  readonly description: string;
  /**
   * Another fresh database on the same server, dropped on close: for a contender whose appends
   * must not wake the consumers of a gateway on this one. Migrated with this tree's migrations,
   * unless `migrated` is false (for a gateway of another revision, which migrates its own).
   */
  sibling(options?: { readonly migrated?: boolean }): Promise<string>;
  /** Closes the pool and drops the bench database (DATABASE_URL) or stops the embedded server. */
  close(): Promise<void>;
}

/** The URL of database `name` on the server of `serverUrl`. */
function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A new database `name` on the server of `adminUrl`, migrated unless `migrated` is false; its URL. */
async function createDatabase(adminUrl: string, name: string, migrated = true): Promise<string> {
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  const url = databaseUrl(adminUrl, name);
  if (!migrated) return url;
  const pool = createPool(url, 2);
  try {
    await migrate(pool, ALL_MIGRATIONS);
  } finally {
    await pool.end();
  }
  return url;
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, migrated database for one bench run: a new `bench_<random>` database on DATABASE_URL's
 * server when it is set (dropped on close), else an embedded server in a temporary directory
 * (stopped and removed on close).
 */
export async function openBenchDatabase(options: { poolSize?: number; logger?: Logger } = {}): Promise<BenchDatabase> {
  const poolSize = options.poolSize ?? 24;
  const logger = options.logger ?? createLogger('silent');
  const serverUrl = process.env.DATABASE_URL;
  let db: BenchDatabase;
  if (serverUrl) {
    const name = `bench_${randomBytes(6).toString('hex')}`;
    await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
    const url = databaseUrl(serverUrl, name);
    const pool = createPool(url, poolSize);
    const siblings: string[] = [];
    db = {
      pool,
      url,
      description: `DATABASE_URL server, database ${name}`,
      async sibling(options) {
        const sibling = `${name}_${siblings.length + 1}`;
        siblings.push(sibling);
        return createDatabase(serverUrl, sibling, options?.migrated);
      },
      async close() {
        await pool.end();
        for (const dropped of [name, ...siblings]) await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${dropped} WITH (FORCE)`);
      },
    };
  } else {
    const dir = tempDir('gateway-bench-pg-');
    // As root, the embedded server runs as the `postgres` system user, which must reach its directory.
    fs.chmodSync(dir, 0o755);
    let server: EmbeddedServer;
    try {
      server = await startEmbeddedPostgres({ dir: `${dir}/data`, port: 0, persistent: false, logger });
    } catch (err) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    const pool = createPool(server.url, poolSize);
    let siblings = 0;
    db = {
      pool,
      url: server.url,
      description: 'embedded PostgreSQL (temporary directory)',
      // Dropped with the server and its directory.
      sibling: (options) => createDatabase(server.url, `bench_sibling_${++siblings}`, options?.migrated),
      async close() {
        try {
          await pool.end();
        } finally {
          await server.stop();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  }
  try {
    await migrate(db.pool, ALL_MIGRATIONS);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

export async function serverVersion(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ server_version: string }>('SHOW server_version');
  return rows[0]?.server_version ?? '?';
}

/* ------------------------------------------------------------------------------------------------
 * Measuring
 * ---------------------------------------------------------------------------------------------- */

export interface MeasureOptions {
  /** Total operations over all workers. Either this or durationMs. */
  readonly iterations?: number;
  /** Run until this much time has passed (each worker finishes its current operation). */
  readonly durationMs?: number;
  /** Workers running operations in parallel; each runs its operations one after another. Default 1. */
  readonly concurrency?: number;
  /** Untimed run-up before measuring, in ms (same workers, results discarded). Default 0. */
  readonly warmupMs?: number;
  /** Units one operation stands for (e.g. 10 for a batch of 10 events): opsPerSec counts units. Default 1. */
  readonly unitsPerOp?: number;
}

export interface Measurement {
  readonly name: string;
  /** Operations completed. */
  readonly ops: number;
  readonly elapsedMs: number;
  /** Units (operations × unitsPerOp) per second of wall time. */
  readonly opsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly concurrency: number;
  /** Free text shown after the table row. */
  readonly note?: string;
}

/** The operation: `worker` is 0..concurrency-1, `i` counts that worker's operations from 0. */
export type Operation = (worker: number, i: number) => Promise<unknown>;

/** The p-th percentile (nearest rank) of ascending values; NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/**
 * Runs `fn` from `concurrency` workers until `iterations` operations are done or `durationMs` has
 * passed, and reports throughput and latency percentiles (process.hrtime.bigint).
 */
export async function measure(name: string, fn: Operation, options: MeasureOptions): Promise<Measurement> {
  const concurrency = options.concurrency ?? 1;
  const unitsPerOp = options.unitsPerOp ?? 1;
  if (options.iterations === undefined && options.durationMs === undefined) throw new Error('measure needs iterations or durationMs');
  const counters = Array.from({ length: concurrency }, () => 0);

  if (options.warmupMs && options.warmupMs > 0) {
    const until = Date.now() + options.warmupMs;
    await Promise.all(
      counters.map(async (_, w) => {
        while (Date.now() < until) await fn(w, counters[w]!++);
      }),
    );
  }

  const latenciesNs: number[] = [];
  let started = 0;
  const start = process.hrtime.bigint();
  const deadline = options.durationMs !== undefined ? start + BigInt(Math.round(options.durationMs * 1e6)) : null;
  const more = (): boolean => {
    if (options.iterations !== undefined && started >= options.iterations) return false;
    if (deadline !== null && process.hrtime.bigint() >= deadline) return false;
    started++;
    return true;
  };
  await Promise.all(
    counters.map(async (_, w) => {
      while (more()) {
        const t0 = process.hrtime.bigint();
        await fn(w, counters[w]!++);
        latenciesNs.push(Number(process.hrtime.bigint() - t0));
      }
    }),
  );
  const elapsedNs = Number(process.hrtime.bigint() - start);
  latenciesNs.sort((a, b) => a - b);
  const ops = latenciesNs.length;
  return {
    name,
    ops,
    elapsedMs: elapsedNs / 1e6,
    opsPerSec: elapsedNs > 0 ? (ops * unitsPerOp) / (elapsedNs / 1e9) : 0,
    p50Ms: percentile(latenciesNs, 50) / 1e6,
    p99Ms: percentile(latenciesNs, 99) / 1e6,
    maxMs: (latenciesNs[ops - 1] ?? NaN) / 1e6,
    concurrency,
  };
}

/** A single timed call, reported as a one-sample measurement (e.g. a cold load). */
export async function measureOnce<T>(name: string, fn: () => Promise<T>, note?: string): Promise<{ measurement: Measurement; result: T }> {
  const t0 = process.hrtime.bigint();
  const result = await fn();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return {
    result,
    measurement: { name, ops: 1, elapsedMs: ms, opsPerSec: 1000 / ms, p50Ms: ms, p99Ms: ms, maxMs: ms, concurrency: 1, ...(note ? { note } : {}) },
  };
}

/* ------------------------------------------------------------------------------------------------
 * Reporting
 * ---------------------------------------------------------------------------------------------- */

export interface Table {
  readonly title: string;
  readonly rows: readonly Measurement[];
  /** Name of the row the ratio column divides by; ratio = row ops/s ÷ baseline ops/s. */
  readonly baseline?: string;
  /** Label of the throughput column. Default "ops/s". */
  readonly unit?: string;
  /** Lines printed under the table. */
  readonly notes?: readonly string[];
}

function fmtNumber(n: number, digits: number): string {
  if (!Number.isFinite(n)) return '-';
  if (n !== 0 && Math.abs(n) < 0.1) return n.toPrecision(2);
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function pad(s: string, width: number, right: boolean): string {
  return right ? s.padStart(width) : s.padEnd(width);
}

/** Fixed-width table: name, ops/s, p50 ms, p99 ms, ops, and the ratio to the baseline row. */
export function formatTable(table: Table): string {
  const base = table.baseline ? table.rows.find((r) => r.name === table.baseline) : undefined;
  if (table.baseline && !base) throw new Error(`baseline row ${table.baseline} not in table ${table.title}`);
  const header = ['name', table.unit ?? 'ops/s', 'p50 ms', 'p99 ms', 'ops', base ? 'ratio' : ''];
  const body = table.rows.map((r) => [
    r.name + (base === r ? ' (baseline)' : ''),
    fmtNumber(r.opsPerSec, r.opsPerSec < 100 ? 1 : 0),
    fmtNumber(r.p50Ms, r.p50Ms < 100 ? 2 : 0),
    fmtNumber(r.p99Ms, r.p99Ms < 100 ? 2 : 0),
    fmtNumber(r.ops, 0),
    base ? `${fmtNumber(r.opsPerSec / base.opsPerSec, 2)}x` : '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => pad(c, widths[i]!, i > 0))
      .join('  ')
      .trimEnd();
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  ').trimEnd(), ...body.map(line)];
  for (const r of table.rows) if (r.note) out.push(`  ${r.name}: ${r.note}`);
  for (const n of table.notes ?? []) out.push(`  ${n}`);
  return out.join('\n');
}

export function printTable(table: Table): void {
  process.stdout.write(`\n${table.title}\n${formatTable(table)}\n`);
}

/** A progress line on stderr, out of the way of the tables. */
export function progress(message: string): void {
  process.stderr.write(`  .. ${message}\n`);
}

export function printHeader(text: string): void {
  process.stdout.write(`\n${'='.repeat(Math.max(text.length, 60))}\n${text}\n${'='.repeat(Math.max(text.length, 60))}\n`);
}

/* ------------------------------------------------------------------------------------------------
 * A gateway's /metrics
 * ---------------------------------------------------------------------------------------------- */

/**
 * One scrape of `url`'s /metrics: the value of a series by name, its labels as written
 * (`nodejs_gc_duration_seconds_sum{kind="major"}`), NaN when absent.
 */
export async function scrapeMetrics(url: string): Promise<(series: string) => number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const values = new Map<string, number>();
  for (const match of text.matchAll(/^([a-zA-Z0-9_:]+(?:\{[^}]*\})?) (\S+)$/gm)) values.set(match[1]!, Number(match[2]));
  return (series) => values.get(series) ?? NaN;
}

/* ------------------------------------------------------------------------------------------------
 * CPU time (meaningful on a busy machine, where wall time is not)
 * ---------------------------------------------------------------------------------------------- */

export interface CpuTime {
  /** CPU time of this Node process (user + system), ms. */
  readonly nodeMs: number;
  /**
   * CPU time of the PostgreSQL backends serving this bench's database (user + system, from
   * /proc/<pid>/stat), ms; null when the server is not on this machine or /proc cannot be read.
   * Backends that exit during the measurement are not counted (the bench pools keep theirs).
   */
  readonly postgresMs: number | null;
}

const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process in ms, or null when it cannot be read. */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (in parentheses, which may hold spaces): utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/**
 * Busy time of every core of the machine (user, nice, system, irq, softirq and steal, from the
 * first line of /proc/stat), ms, or null when it cannot be read: what every process (the load
 * generator and the kernel's network work included) took of the cores together.
 */
export function machineBusyMs(): number | null {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
    const busy = fields.reduce((sum, value, i) => (i === 3 || i === 4 ? sum : sum + value), 0);
    return Number.isFinite(busy) && fields.length === 8 ? (busy * 1000) / CLOCK_TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}

async function backendCpu(pool: Pool): Promise<Map<number, number> | null> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const ms = processCpuMs(pid);
    if (ms === null) return null;
    out.set(pid, ms);
  }
  return out;
}

/** Starts a CPU-time measurement; the returned function ends it. */
export async function startCpuMeasurement(pool: Pool | null): Promise<() => Promise<CpuTime>> {
  const before = pool ? await backendCpu(pool) : null;
  const node = process.cpuUsage();
  return async () => {
    const used = process.cpuUsage(node);
    const after = pool && before ? await backendCpu(pool) : null;
    let postgresMs: number | null = null;
    if (after && before) {
      postgresMs = 0;
      for (const [pid, ms] of after) postgresMs += ms - (before.get(pid) ?? 0);
    }
    return { nodeMs: (used.user + used.system) / 1000, postgresMs };
  };
}

/** measureOnce with the CPU time the call cost this process and the database's backends. */
export async function measureOnceWithCpu<T>(name: string, pool: Pool | null, fn: () => Promise<T>): Promise<{ measurement: Measurement; result: T; cpu: CpuTime }> {
  const stop = await startCpuMeasurement(pool);
  const { measurement, result } = await measureOnce(name, fn);
  return { measurement, result, cpu: await stop() };
}

/* ------------------------------------------------------------------------------------------------
 * CPU profiles of measured steps
 * ---------------------------------------------------------------------------------------------- */

/**
 * Runs `fn` under the V8 sampling profiler when BENCH_PROFILE_DIR is set, writing
 * `<dir>/<label>.cpuprofile` (open it in Chrome DevTools, or summarise it with
 * `npx tsx bench/profile-summary.ts FILE`); otherwise just runs it. Unlike `node --cpu-prof`,
 * the profile covers the measured step only, not the set-up around it.
 */
export async function profiled<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return fn();
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(dir, { recursive: true });
    const file = `${dir}/${label.replace(/[^A-Za-z0-9_.-]+/g, '-')}.cpuprofile`;
    fs.writeFileSync(file, JSON.stringify(profile));
    progress(`CPU profile of ${label}: ${file}`);
    session.disconnect();
  }
}

/**
 * The gateway's request rate in the benchmarks: BENCH_RATE_LIMIT_PER_MINUTE, by default 6,000,000
 * (100,000 a second, never reached), so that the rate check runs on every request as in production
 * without refusing any; 0 turns it off. Shared limits lease LIMITS_LEASE_MS of it at once.
 */
export function benchRateLimitEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return {
    RATE_LIMIT_PER_MINUTE: env.BENCH_RATE_LIMIT_PER_MINUTE || '6000000',
    ...(env.LIMITS_LEASE_MS ? { LIMITS_LEASE_MS: env.LIMITS_LEASE_MS } : {}),
  };
}
