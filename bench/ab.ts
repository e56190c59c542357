import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../src/db/database';
import type { AbResult } from './ab-job';
import { alternatingNotes, alternatingRows, runAlternatingInChild } from './chat-load';
import { autocannon, BODY, ROOT, STREAM_BODY, startBareProxy, startGatewayProcess, startSimulatorProcess, stopProcess, type Contender, type Running } from './peer';
import { integerFromEnv, percentile, printTable, processCpuMs, progress, type BenchDatabase, type Measurement, type Table } from './support';

/**
 * `ab`: this working tree against another revision of the gateway, at one connection, measured so
 * that a drift of the host's speed touches both alike. The revision (BENCH_AB_BASE, by default
 * HEAD: the uncommitted change against its commit) is checked out beside the tree as a git
 * worktree sharing this tree's node_modules. Each side runs BENCH_AB_PROCESSES gateway processes,
 * each on a database of its own, beside the simulator directly and the ledger floor. A sequential
 * client in its own process (ab-client.ts) sends blocks of BENCH_AB_BLOCK requests to each
 * contender in turn, round after round, until each has BENCH_AB_REQUESTS measured; first
 * non-streamed, then streamed. Two processes of one side differ by about 0.1 ms at p50 on this
 * machine: a difference between the sides within the spread of one side's processes is noise.
 *
 * Then the same processes under load (BENCH_AB_LOAD_CONNECTIONS, 64 by default; 0 skips it): in
 * each of BENCH_AB_LOAD_ROUNDS rounds every gateway process in turn serves BENCH_AB_LOAD_REQUESTS
 * requests from autocannon, and each side is read in the CPU time its processes spent a request
 * (/proc), which a drift of the host's speed touches alike when the blocks alternate. A process's
 * CPU is counted from the start of its block to the start of its next one (the last block's, to
 * 2 s after the last round), so it includes the consumers' work that trails its block, and the
 * little it does idle while the others are loaded.
 */

export interface AbOptions {
  readonly base: string;
  readonly processes: number;
  readonly requests: number;
  readonly block: number;
  readonly skip: number;
  /** Connections of the loaded comparison; 0 skips it. */
  readonly loadConnections: number;
  readonly loadRequests: number;
  readonly loadRounds: number;
}

const DEFAULTS: AbOptions = { base: 'HEAD', processes: 2, requests: 5000, block: 200, skip: 30, loadConnections: 64, loadRequests: 4000, loadRounds: 4 };

/** BENCH_AB_BASE, BENCH_AB_PROCESSES, BENCH_AB_REQUESTS, BENCH_AB_BLOCK, BENCH_AB_SKIP, BENCH_AB_LOAD_CONNECTIONS, BENCH_AB_LOAD_REQUESTS, BENCH_AB_LOAD_ROUNDS. */
export function abOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): AbOptions {
  const int = (name: string, fallback: number, min: number): number => integerFromEnv(env, name, fallback, min);
  const block = int('BENCH_AB_BLOCK', DEFAULTS.block, 2);
  const skip = int('BENCH_AB_SKIP', DEFAULTS.skip, 0);
  if (skip >= block) throw new Error(`BENCH_AB_SKIP (${skip}) must be below BENCH_AB_BLOCK (${block})`);
  return {
    base: env.BENCH_AB_BASE || DEFAULTS.base,
    processes: int('BENCH_AB_PROCESSES', DEFAULTS.processes, 1),
    requests: int('BENCH_AB_REQUESTS', DEFAULTS.requests, 1),
    block,
    skip,
    loadConnections: int('BENCH_AB_LOAD_CONNECTIONS', DEFAULTS.loadConnections, 0),
    loadRequests: int('BENCH_AB_LOAD_REQUESTS', DEFAULTS.loadRequests, 100),
    loadRounds: int('BENCH_AB_LOAD_ROUNDS', DEFAULTS.loadRounds, 1),
  };
}

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The revision checked out in a temporary worktree that shares this tree's node_modules; removed by `remove`. */
function checkOut(revision: string): { root: string; commit: string; remove: () => void } {
  const commit = git('rev-parse', '--short', `${revision}^{commit}`);
  const root = tempDir('gateway-bench-ab-');
  git('worktree', 'add', '--detach', '--force', root, commit);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return {
    root,
    commit,
    remove: () => {
      git('worktree', 'remove', '--force', root);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

const fmt = (ms: number): string => ms.toFixed(2);

export async function benchAb(db: BenchDatabase, report: (table: Table) => void = printTable, options: AbOptions = DEFAULTS): Promise<Table[]> {
  const started: Running[] = [];
  const dirs: string[] = [];
  const dirty = git('status', '--porcelain') !== '';
  const base = checkOut(options.base);
  try {
    const simUrl = await startSimulatorProcess(started);
    const floor = await startBareProxy('ledger floor', simUrl, await db.sibling());
    started.push(floor.running);
    const contenders: Contender[] = [
      { name: 'simulator direct', url: simUrl, headers: {} },
      { name: 'ledger floor', url: floor.url, headers: {} },
    ];
    const gateways: { readonly side: string; readonly contender: Contender; readonly pid: number }[] = [];
    const here = dirty ? 'this tree (uncommitted changes)' : `this tree (${git('rev-parse', '--short', 'HEAD')})`;
    const sides = [
      { label: `base ${base.commit}`, root: base.root },
      { label: 'this tree', root: ROOT },
    ];
    for (let p = 1; p <= options.processes; p++) {
      for (const side of sides) {
        progress(`ab: starting ${side.label}, process ${p}`);
        const dataDir = tempDir('gateway-bench-ab-data-');
        dirs.push(dataDir);
        // Each gateway migrates its own database: the base may know fewer migrations than this tree.
        const gateway = await startGatewayProcess(`${side.label} #${p}`, { root: side.root, databaseUrl: await db.sibling({ migrated: false }), dataDir, simUrl }, started);
        contenders.push(gateway.contender);
        gateways.push({ side: side.label, contender: gateway.contender, pid: gateway.running.child.pid! });
      }
    }
    const tables: Table[] = [];
    for (const stream of [false, true]) {
      progress(`ab: ${stream ? 'streamed' : 'non-streamed'}, ${options.requests} requests per contender in blocks of ${options.block}`);
      const result = await runAlternatingInChild({
        targets: contenders.map((c) => ({ name: c.name, origin: c.url, headers: c.headers })),
        body: stream ? STREAM_BODY : BODY,
        stream,
        requests: options.requests,
        block: options.block,
        skip: options.skip,
        warmupRounds: 1,
      });
      const table = abTable(stream, contenders, result, options, sides.map((s) => s.label), `base ${base.commit} against ${here}`);
      report(table);
      tables.push(table);
    }
    if (options.loadConnections > 0) {
      const table = await loadedTable(gateways, options, sides.map((s) => s.label), `base ${base.commit} against ${here}`);
      report(table);
      tables.push(table);
    }
    return tables;
  } finally {
    for (const running of started.reverse()) await stopProcess(running);
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    base.remove();
  }
}

/** The gateways under load, their blocks alternated (see the module comment): CPU time a request, per process and per side. */
async function loadedTable(
  gateways: readonly { readonly side: string; readonly contender: Contender; readonly pid: number }[],
  o: AbOptions,
  sides: readonly string[],
  compared: string,
): Promise<Table> {
  const cpuOf = (pid: number): number => {
    const ms = processCpuMs(pid);
    if (ms === null) throw new Error(`cannot read the CPU time of process ${pid} (/proc)`);
    return ms;
  };
  progress(`ab: under load, warm-up: ${o.loadRequests} requests at ${o.loadConnections} connections to each gateway`);
  for (const g of gateways) await autocannon(g.contender, o.loadConnections, { amount: o.loadRequests });
  const totals = gateways.map(() => ({ cpuMs: 0, requests: 0, seconds: 0, failed: 0, p50: [] as number[], p99: [] as number[], max: 0 }));
  let starts = gateways.map((g) => cpuOf(g.pid));
  for (let round = 1; round <= o.loadRounds; round++) {
    progress(`ab: under load, round ${round} of ${o.loadRounds}: ${o.loadRequests} requests at ${o.loadConnections} connections to each gateway in turn`);
    const next = [...starts];
    for (const [i, g] of gateways.entries()) {
      next[i] = cpuOf(g.pid);
      // The CPU since this process's previous block started: that block, and what trailed it.
      if (round > 1) totals[i]!.cpuMs += next[i]! - starts[i]!;
      const r = await autocannon(g.contender, o.loadConnections, { amount: o.loadRequests });
      const t = totals[i]!;
      t.requests += r['2xx'];
      t.seconds += r.duration;
      t.failed += r.non2xx + r.errors;
      t.p50.push(r.latency.p50);
      t.p99.push(r.latency.p99);
      t.max = Math.max(t.max, r.latency.max);
    }
    starts = next;
  }
  // The last round's blocks are counted up to now: let their consumers finish first.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  gateways.forEach((g, i) => (totals[i]!.cpuMs += cpuOf(g.pid) - starts[i]!));
  const perRequest = totals.map((t) => (t.cpuMs * 1000) / t.requests);
  const rows: Measurement[] = gateways.map((g, i) => {
    const t = totals[i]!;
    const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);
    return {
      name: `${g.contender.name}: ${perRequest[i]!.toFixed(0)} µs CPU a request`,
      ops: t.requests,
      elapsedMs: t.seconds * 1000,
      opsPerSec: t.requests / t.seconds,
      p50Ms: median(t.p50),
      p99Ms: median(t.p99),
      maxMs: t.max,
      concurrency: o.loadConnections,
    };
  });
  const notes = sides.map((side) => {
    const values = gateways.flatMap((g, i) => (g.side === side ? [perRequest[i]!] : []));
    return `${side}: the gateway process ${values.map((v) => v.toFixed(0)).join(', ')} µs of CPU a request (mean ${(values.reduce((a, b) => a + b, 0) / values.length).toFixed(0)})`;
  });
  const failed = totals.reduce((n, t) => n + t.failed, 0);
  if (failed > 0) notes.push(`${failed} requests FAILED`);
  notes.push(
    compared,
    `${o.loadRounds} rounds (after a warm-up block each), every process a block of ${o.loadRequests} requests at ${o.loadConnections} connections per round, in turn; ` +
      'CPU from /proc (user + system) of the gateway process only, from the start of its block to the start of its next; p50 and p99: the medians of its blocks\' (autocannon, whole ms)',
  );
  return { title: `A/B under load: ${o.loadConnections} connections, CPU time a request`, rows, baseline: rows[0]!.name, unit: 'req/s', notes };
}

function abTable(stream: boolean, contenders: readonly Contender[], result: AbResult, o: AbOptions, sides: readonly string[], compared: string): Table {
  const { latency, firstByte, rows } = alternatingRows(contenders.map((c) => c.name), result);
  const added = (i: number, p: number, of: number[][] = latency) => percentile(of[i]!, p) - percentile(of[0]!, p);
  const notes = contenders.slice(1).map((c, j) => {
    const i = j + 1;
    return `${c.name}: adds p50 ${fmt(added(i, 50))} ms, p90 ${fmt(added(i, 90))} ms, p99 ${fmt(added(i, 99))} ms` + (stream ? `; to the first byte p50 ${fmt(added(i, 50, firstByte))} ms` : '');
  });
  // Each side's processes: what they add at p50 (and to the first byte), and the spread between them.
  for (const side of sides) {
    const ids = contenders.flatMap((c, i) => (c.name.startsWith(`${side} #`) ? [i] : []));
    const p50s = ids.map((i) => added(i, 50));
    const line = `${side}: adds p50 ${p50s.map(fmt).join(', ')} ms (mean ${fmt(p50s.reduce((a, b) => a + b, 0) / p50s.length)})`;
    notes.push(stream ? `${line}; to the first byte ${ids.map((i) => fmt(added(i, 50, firstByte))).join(', ')} ms` : line);
  }
  notes.push(compared);
  const { failures, method } = alternatingNotes(contenders.map((c) => c.name), result, o);
  notes.push(...failures, method);
  return { title: `A/B at one connection: ${stream ? 'the chat body streamed' : 'non-streamed chat'}`, rows, baseline: contenders[0]!.name, unit: 'req/s', notes };
}
