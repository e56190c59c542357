import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Catalog, DEFAULT_CATALOG_FILE } from '../src/billing/catalog';
import { tempDir } from '../src/db/database';
import { channelsServedBy } from '../src/upstreams/registry';
import type { AbResult } from './ab-job';
import { alternatingNotes, alternatingRows, runAlternatingInChild } from './chat-load';
import { fundedAccount } from './gateway-setup';
import { benchRateLimitEnv, integerFromEnv, percentile, printTable, progress, type BenchDatabase, type Measurement, type Table } from './support';
import { ALL_MODEL_TYPES } from '../src/model-types';

/**
 * The side-by-side table: the same non-streamed chat request sent to the simulator
 * directly, through a bare Node.js proxy (the floor for any Node.js gateway), through the same
 * proxy committing two events per request (the floor for a durable ledger), through Portkey's
 * open-source gateway (no ledger) and through this gateway (durable ledger), each contender in
 * its own process, the simulator in its own process as every contender's upstream, and the load
 * from autocannon in yet another process. At 1 and at 64 connections: requests per second and
 * autocannon's p50 and p99 (whole milliseconds). Then, at one connection, the same contenders
 * measured exactly (measureExactly), plain and streamed.
 */

export interface PeerBenchOptions {
  /** Measured seconds per row. */
  readonly durationS: number;
  /** Untimed seconds of the same load before each row. */
  readonly warmupS: number;
  readonly connections: readonly number[];
  /** Requests measured per contender and kind in the exact one-connection tables (0: no such tables). */
  readonly exactRequests: number;
}

const DEFAULTS: PeerBenchOptions = { durationS: 5, warmupS: 1, connections: [1, 64], exactRequests: 4000 };

/** BENCH_PEER_DURATION_S, BENCH_PEER_WARMUP_S, BENCH_PEER_CONNECTIONS (comma-separated), BENCH_PEER_EXACT_REQUESTS. */
export function peerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): PeerBenchOptions {
  const int = (name: string, fallback: number, min: number): number => integerFromEnv(env, name, fallback, min);
  const connections = env.BENCH_PEER_CONNECTIONS ? env.BENCH_PEER_CONNECTIONS.split(',').map((c) => Number(c.trim())) : DEFAULTS.connections;
  if (connections.some((c) => !Number.isInteger(c) || c < 1)) throw new Error(`BENCH_PEER_CONNECTIONS must list positive integers, got ${env.BENCH_PEER_CONNECTIONS}`);
  return {
    durationS: int('BENCH_PEER_DURATION_S', DEFAULTS.durationS, 1),
    warmupS: int('BENCH_PEER_WARMUP_S', DEFAULTS.warmupS, 0),
    connections,
    exactRequests: int('BENCH_PEER_EXACT_REQUESTS', DEFAULTS.exactRequests, 0),
  };
}

export const ROOT = path.join(__dirname, '..');
export const TSX = ['--import', 'tsx'];
/** The simulator's entry point. */
export const SIMULATOR_MAIN = path.join(ROOT, 'simulator/main.ts');
const AUTOCANNON = require.resolve('autocannon/autocannon.js');
export const BODY = JSON.stringify({ model: 'chat-fast', messages: [{ role: 'user', content: 'hello [sim:tokens=20]' }], max_tokens: 64 });

export interface Contender {
  readonly name: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface Running {
  readonly name: string;
  readonly child: ChildProcess;
  /** The last lines it wrote, for the error when it dies. */
  readonly output: () => string;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The command and arguments that run `node ARGS`; with `fileLimit`, through a shell that first
 * raises the soft limit of open files to it (or to the hard limit, when that is lower) and then
 * execs node, which keeps the shell's pid: a process holding thousands of sockets needs more
 * than the 1,024 many systems give by default.
 */
export function nodeCommand(args: readonly string[], fileLimit?: number): [string, string[]] {
  if (fileLimit === undefined) return [process.execPath, [...args]];
  const script = 'ulimit -n "$1" 2>/dev/null || ulimit -n "$(ulimit -Hn)"; shift; exec "$@"';
  return ['/bin/sh', ['-c', script, 'sh', String(fileLimit), process.execPath, ...args]];
}

/** `node ARGS` in `cwd` (this tree by default), its output kept for the error when it dies. */
export function startProcess(name: string, args: readonly string[], env: Readonly<Record<string, string>>, cwd = ROOT, fileLimit?: number): Running {
  const [command, argv] = nodeCommand(args, fileLimit);
  const child = spawn(command, argv, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: false });
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-2000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { name, child, output: () => tail };
}

/**
 * bench/bare-proxy.ts in its own process, forwarding to `upstreamUrl`, serving once it answers the
 * bench's chat body; with `databaseUrl`, the ledger floor (two durable appends per request).
 */
export async function startBareProxy(name: string, upstreamUrl: string, databaseUrl?: string): Promise<{ running: Running; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const running = startProcess(name, [...TSX, path.join(ROOT, 'bench/bare-proxy.ts')], {
    BARE_PROXY_PORT: String(port),
    BARE_PROXY_UPSTREAM: upstreamUrl,
    ...(databaseUrl ? { BARE_PROXY_DATABASE_URL: databaseUrl } : {}),
  });
  await waitUntilServing(running, `${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY }, (s) => s === 200).catch(async (err: unknown) => {
    await stopProcess(running);
    throw err;
  });
  return { running, url };
}

/**
 * The standalone simulator in its own process, serving once it answers the chat body; its URL.
 * Added to `started`. `fileLimit` as for startProcess.
 */
export async function startSimulatorProcess(started: Running[], fileLimit?: number): Promise<string> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const sim = startProcess('simulator', [...TSX, SIMULATOR_MAIN], { SIMULATOR_PORT: String(port), HOST: '127.0.0.1' }, ROOT, fileLimit);
  started.push(sim);
  await waitUntilServing(sim, `${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY }, (s) => s === 200);
  return url;
}

function npmScripts(root: string): Record<string, string> {
  return (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
}

const prestarted = new Set<string>();

/**
 * The tree's `prestart` script, once per tree: what `npm start` runs first (the build, for
 * revisions whose gateway runs compiled, from 3f51ad2 on).
 */
function runPrestart(root: string): void {
  if (prestarted.has(root) || !npmScripts(root).prestart) return;
  execFileSync('npm', ['run', '-s', 'prestart'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  prestarted.add(root);
}

/**
 * The node arguments of the tree's `npm start` (`exec node ARGS...`, or `node ARGS...` before
 * the script exec'd, its V8 heap settings included), so that a bench runs each side's gateway as
 * that side ships it. Revisions whose script was `tsx src/main.ts` (before 0b9ffaf) ran the same
 * program through tsx's command: their gateway gets tsx's loader and no node flags.
 */
export function npmStartArgs(root: string): string[] {
  const script = npmScripts(root).start ?? '';
  if (script.trim() === 'tsx src/main.ts') return [...TSX, 'src/main.ts'];
  const [command, ...args] = script.trim().replace(/^exec\s+/, '').split(/\s+/);
  if (command !== 'node' || args.some((a) => /[^\w./=:@-]/.test(a))) throw new Error(`npm start in ${root} is not a plain node command: ${script}`);
  return args;
}

/**
 * The gateway of the tree at `root` (run as its `npm start` runs it) in its own process on `databaseUrl`, every
 * channel going to the simulator, with one funded account; added to `started` as soon as it runs,
 * so that the caller stops it whatever happens next. The contender sends that account's key.
 * `nodeArgs` go before those of `npm start` (the CPU profiler's flags). Every channel may hold
 * `channelConcurrency` upstream connections (256 by default); `fileLimit` as for startProcess.
 */
export async function startGatewayProcess(
  name: string,
  where: {
    readonly root: string;
    readonly databaseUrl: string;
    readonly dataDir: string;
    readonly simUrl: string;
    readonly nodeArgs?: readonly string[];
    readonly channelConcurrency?: number;
    readonly fileLimit?: number;
  },
  started: Running[],
): Promise<{ readonly contender: Contender; readonly running: Running; readonly adminToken: string }> {
  runPrestart(where.root);
  const port = await freePort();
  const adminToken = randomBytes(16).toString('hex');
  // The tree's own channels file: a base revision refuses a protocol that landed after it.
  const channelsFile = path.join(where.root, 'deploy', 'channels.example.json');
  const channels = channelsServedBy(where.simUrl, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 60_000, maxConcurrency: where.channelConcurrency ?? 256 }, channelsFile);
  const gateway = startProcess(
    name,
    [...(where.nodeArgs ?? []), ...npmStartArgs(where.root)],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: where.databaseUrl,
      DATA_DIR: where.dataDir,
      ADMIN_TOKEN: adminToken,
      CHANNELS: JSON.stringify(channels),
      LOG_LEVEL: 'silent',
      ...benchRateLimitEnv(),
    },
    where.root,
    where.fileLimit,
  );
  started.push(gateway);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilServing(gateway, `${url}/readyz`, {}, (s) => s === 200);
  const account = await fundedAccount(url, adminToken, name);
  return { contender: { name, url, headers: { authorization: `Bearer ${account.key}` } }, running: gateway, adminToken };
}

export async function stopProcess(running: Running): Promise<void> {
  if (running.child.exitCode !== null || running.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => running.child.once('exit', () => resolve()));
  running.child.kill('SIGTERM');
  const timer = setTimeout(() => running.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Polls `url` until it answers `ok`; fails when the process exits first or after `timeoutMs`. */
export async function waitUntilServing(running: Running, url: string, init: RequestInit, ok: (status: number) => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (running.child.exitCode !== null) throw new Error(`${running.name} exited (${running.child.exitCode}): ${running.output()}`);
    try {
      const res = await fetch(url, init);
      await res.arrayBuffer();
      if (ok(res.status)) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${running.name} did not answer ${url} within ${timeoutMs} ms: ${running.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface AutocannonResult {
  readonly duration: number;
  readonly '2xx': number;
  readonly non2xx: number;
  readonly errors: number;
  readonly latency: { readonly p50: number; readonly p99: number; readonly max: number };
}

/**
 * Sample interval (ms) of a run for an `amount` of requests. autocannon ends such a run at its
 * next sample after the last answer, and its `duration` with it: at its default of a second, a
 * run of 20,000 requests that took 5.1 s read 6.02 s, 15% fewer requests a second than served.
 */
const AMOUNT_SAMPLE_MS = 10;

/** One autocannon run in its own process, for `seconds` or for `amount` requests; its JSON result. */
export function autocannon(target: Contender, connections: number, length: { seconds: number } | { amount: number }): Promise<AutocannonResult> {
  const runLength = 'seconds' in length ? ['-d', String(length.seconds)] : ['-a', String(length.amount), '-L', String(AMOUNT_SAMPLE_MS)];
  const args = [AUTOCANNON, '--json', '-c', String(connections), ...runLength, '-m', 'POST', '-b', BODY, '-H', 'content-type=application/json'];
  for (const [k, v] of Object.entries(target.headers)) args.push('-H', `${k}=${v}`);
  args.push(`${target.url}/v1/chat/completions`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString('utf8')).slice(-2000)));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}: ${err}`));
      try {
        resolve(JSON.parse(out) as AutocannonResult);
      } catch {
        reject(new Error(`autocannon printed no JSON: ${out.slice(0, 500)} ${err}`));
      }
    });
  });
}

async function measureContender(target: Contender, connections: number, o: PeerBenchOptions): Promise<Measurement> {
  progress(`${target.name}: ${connections} connection(s), ${o.warmupS} s warm-up + ${o.durationS} s (autocannon)`);
  if (o.warmupS > 0) await autocannon(target, connections, { seconds: o.warmupS });
  const r = await autocannon(target, connections, { seconds: o.durationS });
  const failed = r.non2xx + r.errors;
  return {
    name: target.name,
    ops: r['2xx'],
    elapsedMs: r.duration * 1000,
    opsPerSec: r['2xx'] / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    maxMs: r.latency.max,
    concurrency: connections,
    ...(failed > 0 ? { note: `${failed} requests FAILED (non-2xx ${r.non2xx}, errors ${r.errors})` } : {}),
  };
}

export async function benchPeer(db: BenchDatabase, report: (table: Table) => void = printTable, options: PeerBenchOptions = DEFAULTS): Promise<Table[]> {
  const started: Running[] = [];
  const dataDir = tempDir('gateway-bench-peer-');
  const skipped: string[] = [];
  try {
    const simUrl = await startSimulatorProcess(started);
    const probe: RequestInit = { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY };
    const contenders: Contender[] = [{ name: 'simulator direct', url: simUrl, headers: {} }];

    // This gateway, on the bench database, every channel going to the simulator.
    const ours = (await startGatewayProcess('this gateway (durable ledger)', { root: ROOT, databaseUrl: db.url, dataDir, simUrl }, started)).contender;

    // The floors (bench/bare-proxy.ts): what any Node.js gateway costs at least, and what one
    // costs that commits a reservation and a settlement on this event store. The ledger floor
    // appends to a database of its own on the same server, so that this gateway's consumers do
    // not read its events.
    for (const floor of [
      { name: 'bare Node.js proxy (floor)', databaseUrl: undefined },
      { name: 'bare proxy + 2 durable appends (ledger floor)', databaseUrl: await db.sibling() },
    ]) {
      const proxy = await startBareProxy(floor.name, simUrl, floor.databaseUrl);
      started.push(proxy.running);
      contenders.push({ name: floor.name, url: proxy.url, headers: {} });
    }

    // Portkey's gateway, pointed at the simulator by its headers.
    const portkeyMain = resolvePortkey();
    if (portkeyMain) {
      const pkPort = await freePort();
      const portkey = startProcess('portkey', [portkeyMain, `--port=${pkPort}`, '--headless'], { NODE_ENV: 'production' });
      started.push(portkey);
      const headers = { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${simUrl}/v1`, authorization: 'Bearer sk-simulator' };
      await waitUntilServing(portkey, `http://127.0.0.1:${pkPort}/v1/chat/completions`, { ...probe, headers: { ...probe.headers, ...headers } }, (s) => s === 200);
      contenders.push({ name: `portkey gateway ${portkeyVersion()} (no ledger)`, url: `http://127.0.0.1:${pkPort}`, headers });
    } else {
      skipped.push('portkey gateway: @portkey-ai/gateway is not installed (npm install)');
    }

    contenders.push(ours);

    const tables: Table[] = [];
    // The exact tables once the rows of one connection have warmed every contender, and before any
    // of many connections: in one run that measured them after those, every contender's latency
    // was higher than in the runs around it (this gateway's p50 by 0.5–1.3 ms).
    let exactDone = options.exactRequests === 0;
    const exact = async (): Promise<void> => {
      exactDone = true;
      for (const table of await measureExactly(contenders, options)) {
        report(table);
        tables.push(table);
      }
    };
    for (const connections of options.connections) {
      if (!exactDone && connections > 1) await exact();
      const rows: Measurement[] = [];
      for (const c of contenders) rows.push(await measureContender(c, connections, options));
      const table = peerTable(connections, rows, options, skipped);
      report(table);
      tables.push(table);
    }
    if (!exactDone) await exact();
    return tables;
  } finally {
    for (const running of started.reverse()) await stopProcess(running);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export const STREAM_BODY = JSON.stringify({ ...(JSON.parse(BODY) as object), stream: true });

/**
 * One connection, measured exactly: autocannon gives whole milliseconds, too coarse for goals of
 * 1.5 ms and 1 ms. A sequential client in a process of its own (ab-client.ts, as in `bench ab`)
 * sends blocks of EXACT_BLOCK requests to each contender in turn, round after round, until each
 * has `exactRequests` measured, for the non-streamed body and then for the same body streamed
 * (with the time to the first byte of the body). Alternating blocks spread whatever else the host
 * does (a checkpoint, a vacuum, another process) over every contender alike; windows of a few
 * seconds per contender, as this table had until 2026-11-26, let one such spell decide a
 * contender's figure (docs/benchmarks.md, `peer`). A contender that keeps failing is given up
 * (MAX_FAILURES_PER_TARGET) and the others are measured on.
 */
async function measureExactly(contenders: readonly Contender[], o: PeerBenchOptions): Promise<Table[]> {
  // A contender that cannot stream from the simulator (Portkey's gateway answers its streams with
  // 500) is left out of that table at once, rather than given up after its first hundred failures.
  const refusals = new Map<string, string>();
  for (const c of contenders) {
    try {
      const res = await fetch(`${c.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...c.headers },
        body: STREAM_BODY,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      if (res.status !== 200 || !text.includes('[DONE]')) refusals.set(c.name, `HTTP ${res.status}: ${text.slice(0, 200)}`);
    } catch (err) {
      refusals.set(c.name, err instanceof Error ? err.message : String(err));
    }
  }
  const tables: Table[] = [];
  for (const stream of [false, true]) {
    const measured = stream ? contenders.filter((c) => !refusals.has(c.name)) : contenders;
    const notMeasured = stream ? [...refusals].map(([name, answer]) => `not measured: ${name}, whose answer to a streamed request was ${answer}`) : [];
    progress(`exact: ${stream ? 'streamed' : 'non-streamed'}, ${o.exactRequests} requests per contender in blocks of ${EXACT_BLOCK} (sequential client)`);
    const result = await runAlternatingInChild({
      targets: measured.map((c) => ({ name: c.name, origin: c.url, headers: c.headers })),
      body: stream ? STREAM_BODY : BODY,
      stream,
      requests: o.exactRequests,
      block: EXACT_BLOCK,
      skip: EXACT_SKIP,
      warmupRounds: 1,
    });
    tables.push(exactTable(stream, measured, result, o, notMeasured));
  }
  return tables;
}

/** Requests to one contender before the client moves on, and how many at the start of each are not counted (it was idle meanwhile). */
const EXACT_BLOCK = 200;
const EXACT_SKIP = 30;

function exactTable(stream: boolean, contenders: readonly Contender[], result: AbResult, o: PeerBenchOptions, notMeasured: readonly string[]): Table {
  const names = contenders.map((c) => c.name);
  const { firstByte, rows } = alternatingRows(names, result);
  const { failures, method } = alternatingNotes(names, result, { block: EXACT_BLOCK, skip: EXACT_SKIP, requests: o.exactRequests });
  const notes = [...notMeasured, ...failures];
  // A contender none of whose requests was measured (all failed) has no latency to show.
  const measured = rows.flatMap((row, i) => (row.ops > 0 ? [{ row, i }] : []));
  for (const row of rows) if (row.ops === 0) notes.push(`not measured: ${row.name}, no request succeeded`);
  const fmt = (ms: number) => ms.toFixed(2);
  // The baseline is the simulator direct, the first contender; without it nothing is compared.
  const direct = measured.find((m) => m.i === 0);
  if (!direct) notes.push(`no comparison: ${names[0]} was not measured`);
  const others = measured.filter((m) => m !== direct);
  if (direct) {
    for (const { row } of others) notes.push(`${row.name}: adds p50 ${fmt(row.p50Ms - direct.row.p50Ms)} ms, p99 ${fmt(row.p99Ms - direct.row.p99Ms)} ms over the direct call`);
    if (stream) {
      const at = (i: number, p: number) => percentile(firstByte[i]!, p);
      notes.push(`time to first byte, p50 / p99: direct ${fmt(at(0, 50))} / ${fmt(at(0, 99))} ms`);
      for (const { row, i } of others) notes.push(`time to first byte, ${row.name}: ${fmt(at(i, 50))} / ${fmt(at(i, 99))} ms, adds ${fmt(at(i, 50) - at(0, 50))} / ${fmt(at(i, 99) - at(0, 99))} ms`);
    }
  }
  notes.push(method);
  return {
    title: `Peer gateways, 1 connection, exact latency: ${stream ? 'the same body streamed' : 'non-streamed chat'}`,
    rows: measured.map((m) => m.row),
    ...(direct ? { baseline: direct.row.name } : {}),
    unit: 'req/s',
    notes,
  };
}

function resolvePortkey(): string | null {
  try {
    return require.resolve('@portkey-ai/gateway/build/start-server.js');
  } catch {
    return null;
  }
}

function portkeyVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(require.resolve('@portkey-ai/gateway/package.json'), 'utf8')) as { version: string };
    return pkg.version;
  } catch {
    return '?';
  }
}

function peerTable(connections: number, rows: readonly Measurement[], o: PeerBenchOptions, skipped: readonly string[]): Table {
  const direct = rows[0]!;
  const ours = rows[rows.length - 1]!;
  const notes = rows.slice(1).map((r) => `${r.name}: adds p50 ${r.p50Ms - direct.p50Ms} ms, p99 ${r.p99Ms - direct.p99Ms} ms over the direct call`);
  for (const peer of rows.slice(1, -1)) notes.push(`this gateway / ${peer.name}: ${(ours.opsPerSec / peer.opsPerSec).toFixed(2)}x the requests per second`);
  notes.push(
    `non-streamed chat (${BODY.length} bytes, 20 completion tokens, max_tokens 64); ${o.warmupS} s warm-up then ${o.durationS} s per row; ` +
      'latency from autocannon in whole milliseconds; every contender, the simulator and autocannon in their own processes',
  );
  notes.push(...skipped.map((s) => `not run: ${s}`));
  return { title: `Peer gateways, ${connections} connection(s): the simulator direct, the bare proxy and ledger floors, Portkey's gateway, this gateway`, rows, baseline: direct.name, unit: 'req/s', notes };
}
