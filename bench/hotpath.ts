import fs from 'node:fs';
import os from 'node:os';
import { Pool } from 'pg';
import { tempDir } from '../src/db/database';
import { autocannon, ROOT, startBareProxy, startGatewayProcess, startSimulatorProcess, stopProcess, type AutocannonResult, type Contender, type Running } from './peer';
import { machineBusyMs, printTable, processCpuMs, progress, scrapeMetrics, type BenchDatabase, type Measurement, type Table } from './support';

/**
 * The cost of one non-streamed chat request through the gateway, in resources rather than in
 * wall time (which a busy machine distorts): CPU time of the gateway process and of PostgreSQL
 * per request, database transactions per request, and the gateway's resident memory before and
 * after many requests. The gateway and the simulator run in their own processes, the load comes
 * from autocannon in another. The ledger floor (bench/bare-proxy.ts with its two durable appends,
 * on a database of its own) is measured the same way beside it, so that what the gateway adds is
 * read in CPU time too. With BENCH_PROFILE_DIR set, the gateway runs under `--cpu-prof` and
 * leaves its profile there (summarise it with bench/profile-summary.ts).
 */

export interface HotPathBenchOptions {
  /** Requests per measured run. */
  readonly requests: number;
  readonly connections: readonly number[];
  /** Requests of the memory run (in ten parts, RSS and heap after each); 0 skips it. */
  readonly memoryRequests: number;
}

/** BENCH_HOTPATH_REQUESTS (20,000), BENCH_HOTPATH_CONNECTIONS (`1,64`), BENCH_MEMORY_REQUESTS (100,000; the goal speaks of 1,000,000). */
export function hotPathOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): HotPathBenchOptions {
  const requests = Number(env.BENCH_HOTPATH_REQUESTS ?? 20_000);
  if (!Number.isInteger(requests) || requests < 100) throw new Error(`BENCH_HOTPATH_REQUESTS must be an integer >= 100, got ${env.BENCH_HOTPATH_REQUESTS}`);
  const memoryRequests = Number(env.BENCH_MEMORY_REQUESTS ?? 100_000);
  if (!Number.isInteger(memoryRequests) || memoryRequests < 0) throw new Error(`BENCH_MEMORY_REQUESTS must be an integer >= 0, got ${env.BENCH_MEMORY_REQUESTS}`);
  const connections = (env.BENCH_HOTPATH_CONNECTIONS ?? '1,64').split(',').map((c) => Number(c.trim()));
  if (connections.some((c) => !Number.isInteger(c) || c < 1)) throw new Error(`BENCH_HOTPATH_CONNECTIONS must list positive integers, got ${env.BENCH_HOTPATH_CONNECTIONS}`);
  return { requests, connections, memoryRequests };
}

/** The V8 heap in use, from the gateway's /metrics (prom-client's default metrics), MB. */
async function heapUsedMb(url: string): Promise<number> {
  return (await scrapeMetrics(url))('nodejs_heap_size_used_bytes') / 1024 / 1024;
}

/**
 * `requests` more requests in ten parts, the gateway's RSS and heap in use after each: memory
 * that keeps growing part after part is a leak; a plateau is the heap settling.
 */
async function memoryRun(target: Contender, pid: number, connections: number, requests: number): Promise<string[]> {
  const part = Math.ceil(requests / 10);
  const start = { rss: rssMb(pid), heap: await heapUsedMb(target.url) };
  const series: string[] = [];
  const rss: number[] = [];
  let failed = 0;
  for (let i = 1; i <= 10; i++) {
    progress(`memory: part ${i} of 10, ${part} requests at ${connections} connection(s)`);
    const r = await autocannon(target, connections, { amount: part });
    failed += r.non2xx + r.errors;
    const now = rssMb(pid);
    rss.push(now);
    series.push(`${(now - start.rss).toFixed(1)}/${((await heapUsedMb(target.url)) - start.heap).toFixed(1)}`);
  }
  // The heap sizes itself for the load over the first requests: growth that stops there is that
  // sizing, growth that goes on after it is what a leak looks like.
  const later = rss.slice(1).map((mb) => mb - rss[0]!);
  return [
    `memory over ${(part * 10).toLocaleString('en-US')} more requests at ${connections} connection(s) (goal: RSS growth < 50 MB over 1,000,000), ` +
      `growth in MB of RSS/heap in use after each tenth: ${series.join(', ')} (from ${start.rss.toFixed(1)} MB RSS, ${start.heap.toFixed(1)} MB heap); ` +
      `RSS after the later tenths, against the first: ${Math.min(...later).toFixed(1)} to ${Math.max(...later).toFixed(1)} MB` +
      (failed > 0 ? `; ${failed} requests FAILED` : ''),
  ];
}

/** How long the gateway is left after a run before its counters are read. */
const SETTLE_MS = 4000;

/** How long the idle gateway is watched. */
const IDLE_MS = 5000;

/** Resident set size of a process in MB, from /proc. */
function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
  return kb / 1024;
}

const CORES = os.cpus().length;

/**
 * What the cores did while autocannon ran (from just before its process starts to just after it
 * exits, without the settling wait): the process's CPU, for its share of a core (one event loop
 * uses at most one), and the machine's busy time, which every process shares (at 64 connections
 * the two bound the requests a second between them). The load generator's own start (about 0.2 s
 * of a core here) is in the window: about 10 µs a request of the machine's time at 20,000 requests.
 */
interface DuringLoad {
  readonly wallMs: number;
  readonly processCpuMs: number;
  readonly machineBusyMs: number | null;
}

interface Counters {
  readonly cpuMs: number;
  readonly postgresCpuMs: number;
  readonly transactions: number;
}

async function counters(pool: Pool, processPid: number): Promise<Counters> {
  // The read models and process managers finish the run's backlog (about a second after the load
  // stops; that work belongs to the run), and a backend's statistics reach pg_stat_database when
  // it goes idle.
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const { rows } = await pool.query<{ pids: number[]; xacts: string }>(
    `SELECT (SELECT array_agg(pid) FROM pg_stat_activity WHERE datname = current_database()) AS pids,
            (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database())::text AS xacts`,
  );
  const postgresCpuMs = rows[0]!.pids.reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), 0);
  return { cpuMs: processCpuMs(processPid) ?? NaN, postgresCpuMs, transactions: Number(rows[0]!.xacts) };
}

/** A row of the table: what one run of `requests` cost, per request, with the idle work (per second) subtracted. */
function resourceRow(name: string, connections: number, r: AutocannonResult, used: Counters & { simulatorCpuMs: number }, idle: Counters, seconds: number, during: DuringLoad): Measurement {
  const ok = r['2xx'];
  const failed = r.non2xx + r.errors;
  const perRequest = (x: number) => (x / Math.max(ok, 1)).toFixed(2);
  return {
    name,
    ops: ok,
    elapsedMs: r.duration * 1000,
    opsPerSec: ok / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    maxMs: r.latency.max,
    concurrency: connections,
    note:
      `CPU per request: process ${perRequest((used.cpuMs - idle.cpuMs * seconds) * 1000)} µs, ` +
      `PostgreSQL ${perRequest((used.postgresCpuMs - idle.postgresCpuMs * seconds) * 1000)} µs, simulator ${perRequest(used.simulatorCpuMs * 1000)} µs; ` +
      `database transactions per request ${perRequest(used.transactions - idle.transactions * seconds)}; ` +
      `while autocannon ran, the process had ${(during.processCpuMs / during.wallMs).toFixed(2)} of a core` +
      (during.machineBusyMs === null
        ? ''
        : ` and the machine's ${CORES} cores were ${((100 * during.machineBusyMs) / (during.wallMs * CORES)).toFixed(0)}% busy, ${perRequest(during.machineBusyMs * 1000)} µs of them a request (every process, the load generator and the kernel's included)`) +
      (failed > 0 ? `; ${failed} requests FAILED (non-2xx ${r.non2xx}, errors ${r.errors})` : ''),
  };
}

/** One measured run against `target`: autocannon's result and what the process, its database's backends and the simulator used. */
async function measuredRun(target: Contender, connections: number, requests: number, pool: Pool, pid: number, simulatorPid: number) {
  const before = await counters(pool, pid);
  const simulatorBefore = processCpuMs(simulatorPid) ?? NaN;
  const t0 = Date.now();
  const processBefore = processCpuMs(pid) ?? NaN;
  const machineBefore = machineBusyMs();
  const loadStart = performance.now();
  const r = await autocannon(target, connections, { amount: requests });
  const machineAfter = machineBusyMs();
  const during: DuringLoad = {
    wallMs: performance.now() - loadStart,
    processCpuMs: (processCpuMs(pid) ?? NaN) - processBefore,
    machineBusyMs: machineBefore === null || machineAfter === null ? null : machineAfter - machineBefore,
  };
  const simulatorCpuMs = (processCpuMs(simulatorPid) ?? NaN) - simulatorBefore;
  const after = await counters(pool, pid);
  const used = {
    cpuMs: after.cpuMs - before.cpuMs,
    postgresCpuMs: after.postgresCpuMs - before.postgresCpuMs,
    transactions: after.transactions - before.transactions,
    simulatorCpuMs,
  };
  // The settling wait after the run is in the elapsed time: the idle work of those seconds is in the counters too.
  return { r, used, during, seconds: (Date.now() - t0) / 1000 };
}

export async function benchHotPath(db: BenchDatabase, report: (table: Table) => void = printTable, o: HotPathBenchOptions = hotPathOptionsFromEnv()): Promise<Table> {
  const started: Running[] = [];
  const dataDir = tempDir('gateway-bench-hotpath-');
  let floorPool: Pool | null = null;
  try {
    const simUrl = await startSimulatorProcess(started);
    const simulatorPid = started[0]!.child.pid!;
    const floorUrl = await db.sibling();
    floorPool = new Pool({ connectionString: floorUrl, max: 1 });
    const floorProxy = await startBareProxy('ledger floor', simUrl, floorUrl);
    started.push(floorProxy.running);
    const floor: Contender = { name: 'ledger floor', url: floorProxy.url, headers: {} };

    const profileDir = process.env.BENCH_PROFILE_DIR;
    const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    const { contender: target, running: gateway } = await startGatewayProcess('this gateway', { root: ROOT, databaseUrl: db.url, dataDir, simUrl, nodeArgs }, started);
    const pid = gateway.child.pid!;

    const warmup = Math.max(1000, Math.round(o.requests / 10));
    progress(`warm-up: ${warmup} requests`);
    await autocannon(target, Math.max(...o.connections), { amount: warmup });
    await autocannon(floor, Math.max(...o.connections), { amount: warmup });
    const rssAfterWarmup = rssMb(pid);
    // What the gateway does with no request at all (subscription polls, leases, the reconciler,
    // job polling), per second: subtracted from each run, so a slow run does not count more of it.
    const idleStart = await counters(db.pool, pid);
    const idleT0 = Date.now();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idleEnd = await counters(db.pool, pid);
    const idleS = (Date.now() - idleT0) / 1000;
    const idle = {
      cpuMs: (idleEnd.cpuMs - idleStart.cpuMs) / idleS,
      postgresCpuMs: (idleEnd.postgresCpuMs - idleStart.postgresCpuMs) / idleS,
      transactions: (idleEnd.transactions - idleStart.transactions) / idleS,
    };
    const rows: Measurement[] = [];
    const notes: string[] = [];
    let served = 0;
    const floorPid = floorProxy.running.child.pid!;
    // The floor keeps no consumers: it has no idle work but what its server does for any database.
    const nothing: Counters = { cpuMs: 0, postgresCpuMs: 0, transactions: 0 };
    for (const connections of o.connections) {
      progress(`${connections} connection(s): ${o.requests} requests, the ledger floor then this gateway`);
      const f = await measuredRun(floor, connections, o.requests, floorPool, floorPid, simulatorPid);
      rows.push(resourceRow(`ledger floor, ${connections} conn.`, connections, f.r, f.used, nothing, f.seconds, f.during));
      const g = await measuredRun(target, connections, o.requests, db.pool, pid, simulatorPid);
      served += g.r['2xx'];
      rows.push(resourceRow(`this gateway, ${connections} conn.`, connections, g.r, g.used, idle, g.seconds, g.during));
    }
    const rssEnd = rssMb(pid);
    notes.push(`gateway RSS ${rssAfterWarmup.toFixed(1)} MB after ${warmup} warm-up requests, ${rssEnd.toFixed(1)} MB after ${served} more`);
    if (o.memoryRequests > 0) notes.push(...(await memoryRun(target, pid, Math.max(...o.connections), o.memoryRequests)));
    notes.push(
      `idle gateway: ${idle.cpuMs.toFixed(1)} ms CPU/s in the gateway, ${idle.postgresCpuMs.toFixed(1)} ms CPU/s in PostgreSQL, ${idle.transactions.toFixed(1)} transactions/s`,
      'CPU time from /proc (user + system) of the process (the gateway, or the ledger floor: bench/bare-proxy.ts with two durable appends per request), of its database\'s backends and of the simulator; ' +
        'the gateway\'s idle work subtracted; transactions from pg_stat_database',
      'one process serves at most 1,000,000 / (its CPU µs per request) requests a second with a core to itself; all of them share the machine\'s cores',
      'req/s and latency are wall-clock figures: meaningful only on a quiet machine',
    );
    const table: Table = { title: `One non-streamed chat request: resources per request (${o.requests} requests per row)`, rows, unit: 'req/s', notes };
    report(table);
    return table;
  } finally {
    for (const running of started.reverse()) await stopProcess(running);
    await floorPool?.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
