import os from 'node:os';
import { runLoad, runLoadInChild, type LoadOptions, type LoadResult, type LoadTarget } from './chat-load';
import { startBenchGateway, summedBalance, type BenchAccount } from './gateway-setup';
import { startBareProxy, stopProcess, type Running } from './peer';
import { benchRateLimitEnv, printTable, progress, type BenchDatabase, type Measurement, type Table } from './support';

/**
 * Chat through the gateway next to the same requests sent straight to the simulator it forwards
 * to, in the same run and at the same concurrency: non-streamed and streamed. The issue's goal
 * (printed, never asserted): the gateway keeps at least half of the direct throughput and adds
 * under 5 ms at p50.
 */

export type Report = (table: Table) => void;

export interface ChatBenchOptions {
  /** Concurrent workers, one keep-alive connection each. */
  readonly concurrency?: number;
  /** Measured time of each row. */
  readonly durationMs?: number;
  /** Untimed warm-up before each row. */
  readonly warmupMs?: number;
  /** Completion tokens of every answer (`[sim:tokens=N]`). */
  readonly tokens?: number;
  /** Where the load generator runs: in the bench process (default) or in a child process. */
  readonly load?: 'inprocess' | 'child';
  /**
   * Accounts (one API key each) the gateway workers are spread over. Default 1: every request
   * hits one account, whose commands the gateway serialises. Direct rows send the same headers.
   */
  readonly accounts?: number;
  /** Connections of the gateway's database pool (the gateway's own default is 20). */
  readonly gatewayPoolSize?: number;
}

const DEFAULTS: Required<ChatBenchOptions> = {
  concurrency: 64,
  durationMs: 5000,
  warmupMs: 1000,
  tokens: 20,
  load: 'inprocess',
  accounts: 1,
  gatewayPoolSize: 20,
};

/** BENCH_CHAT_LOAD=child|inprocess, BENCH_CHAT_CONCURRENCY, BENCH_CHAT_DURATION_MS, BENCH_CHAT_WARMUP_MS, BENCH_CHAT_ACCOUNTS. */
export function chatOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ChatBenchOptions {
  const int = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${raw}`);
    return n;
  };
  const load = env.BENCH_CHAT_LOAD;
  if (load !== undefined && load !== '' && load !== 'child' && load !== 'inprocess') throw new Error(`BENCH_CHAT_LOAD must be child or inprocess, got ${load}`);
  const options: { -readonly [K in keyof ChatBenchOptions]: ChatBenchOptions[K] } = {};
  if (load) options.load = load;
  const concurrency = int('BENCH_CHAT_CONCURRENCY');
  if (concurrency !== undefined) options.concurrency = concurrency;
  const durationMs = int('BENCH_CHAT_DURATION_MS');
  if (durationMs !== undefined) options.durationMs = durationMs;
  const warmupMs = int('BENCH_CHAT_WARMUP_MS');
  if (warmupMs !== undefined) options.warmupMs = warmupMs;
  const accounts = int('BENCH_CHAT_ACCOUNTS');
  if (accounts !== undefined) options.accounts = accounts;
  return options;
}

export async function benchChat(db: BenchDatabase, report: Report = printTable, options: ChatBenchOptions = {}): Promise<Table[]> {
  const o = { ...DEFAULTS, ...options };
  const bench = await startBenchGateway(db, {
    poolSize: o.gatewayPoolSize,
    env: { ...benchRateLimitEnv(), LOG_LEVEL: 'silent' },
    dataDirPrefix: 'gateway-bench-data-',
  });
  let floor: Running | null = null;
  try {
    const { gateway, simUrl } = bench;
    const accounts = await bench.fundedAccounts(o.accounts, 'bench chat');

    const headers = accounts.map(({ key }) => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` }));
    const messages = [{ role: 'user', content: `hello [sim:tokens=${o.tokens}]` }];
    const plainBody = JSON.stringify({ model: 'chat-fast', messages });
    const streamBody = JSON.stringify({ model: 'chat-fast', messages, stream: true, stream_options: { include_usage: true } });
    const target = (name: string, url: string, stream: boolean): LoadTarget => ({
      name,
      origin: url,
      path: '/v1/chat/completions',
      headers,
      body: stream ? streamBody : plainBody,
      stream,
    });
    /** CPU time of the bench process (servers, and the client unless it runs in a child) per wall second, by row. */
    const cpuShare = new Map<string, number>();
    const loadOptions: LoadOptions = { concurrency: o.concurrency, durationMs: o.durationMs, warmupMs: o.warmupMs };
    const run = async (t: LoadTarget): Promise<LoadResult> => {
      progress(`${t.name}: ${o.concurrency} connections, ${o.warmupMs} ms warm-up + ${o.durationMs} ms (${o.load})`);
      const cpu0 = process.cpuUsage();
      const wall0 = process.hrtime.bigint();
      const result = await (o.load === 'child' ? runLoadInChild(t, loadOptions) : runLoad(t, loadOptions));
      const cpu = process.cpuUsage(cpu0);
      const wallUs = Number(process.hrtime.bigint() - wall0) / 1e3;
      cpuShare.set(t.name, (cpu.user + cpu.system) / wallUs);
      return result;
    };

    // The ledger floor (bench/bare-proxy.ts): the same requests through a proxy that only
    // commits a reservation (during the upstream call, before the first byte) and a settlement.
    const started = await startBareProxy('ledger floor', simUrl, await db.sibling());
    floor = started.running;
    const floorUrl = started.url;

    const directPlain = await run(target('simulator direct, non-stream', simUrl, false));
    const floorPlain = await run(target('ledger floor, non-stream', floorUrl, false));
    const gatewayPlain = await run(target('gateway, non-stream', gateway.url, false));
    const directStream = await run(target('simulator direct, stream', simUrl, true));
    const floorStream = await run(target('ledger floor, stream', floorUrl, true));
    const gatewayStream = await run(target('gateway, stream', gateway.url, true));

    const where =
      o.load === 'child'
        ? `the load generator runs in a child process; gateway and simulator share one Node event loop (${os.cpus().length} CPUs, PostgreSQL in its own processes)`
        : `client, gateway and simulator share one Node process and event loop (${os.cpus().length} CPUs, PostgreSQL in its own processes); ` +
          'near 100% of one core, that loop is the limit (BENCH_CHAT_LOAD=child moves the client out)';
    const common = [
      `${o.concurrency} concurrent workers over ${o.concurrency} keep-alive connections (undici Pool); ${o.warmupMs} ms warm-up then ${o.durationMs} ms per row; ` +
        `answers of ${o.tokens} tokens; latency = time to the last byte; ` +
        (o.accounts === 1 ? 'one account (one API key) for every request' : `requests spread over ${o.accounts} accounts (worker w uses account w % ${o.accounts})`),
      where,
    ];
    const tables: Table[] = [
      comparison('Chat completions, non-stream: gateway and the ledger floor vs the simulator direct', directPlain, floorPlain, gatewayPlain, common, cpuShare),
      comparison('Chat completions, stream (include_usage): gateway and the ledger floor vs the simulator direct', directStream, floorStream, gatewayStream, common, cpuShare),
    ];
    for (const t of tables) report(t);

    await sanity(gateway.url, accounts, db, gatewayPlain.sent + gatewayStream.sent, gatewayPlain.failed + gatewayStream.failed);
    return tables;
  } finally {
    if (floor) await stopProcess(floor);
    await bench.close();
  }
}

function fmt(ms: number): string {
  return Number.isFinite(ms) ? ms.toFixed(2) : '-';
}

function rowNote(result: LoadResult, cpu: number | undefined): string | undefined {
  const parts: string[] = [];
  if (cpu !== undefined) parts.push(`bench process CPU ${Math.round(cpu * 100)}% of one core`);
  if (result.ttfb) parts.push(`time to first byte p50 ${fmt(result.ttfb.p50Ms)} ms, p99 ${fmt(result.ttfb.p99Ms)} ms`);
  if (result.failed > 0) parts.push(`${result.failed} of ${result.sent} requests FAILED (first: ${result.firstError})`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

function withNote(result: LoadResult, cpuShare: ReadonlyMap<string, number>): Measurement {
  const note = rowNote(result, cpuShare.get(result.measurement.name));
  return note ? { ...result.measurement, note } : result.measurement;
}

function comparison(title: string, direct: LoadResult, floor: LoadResult, viaGateway: LoadResult, common: readonly string[], cpuShare: ReadonlyMap<string, number>): Table {
  const d = direct.measurement;
  const g = viaGateway.measurement;
  const ratio = g.opsPerSec / d.opsPerSec;
  const addedP50 = g.p50Ms - d.p50Ms;
  const addedP99 = g.p99Ms - d.p99Ms;
  const notes = [
    `gateway adds p50 ${fmt(addedP50)} ms, p99 ${fmt(addedP99)} ms`,
    `goal (keep >= 0.50x of direct throughput, add < 5 ms at p50): throughput ${ratio >= 0.5 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}x), ` +
      `p50 ${addedP50 < 5 ? 'met' : 'NOT met'} (${fmt(addedP50)} ms)`,
  ];
  notes.push(`ledger floor adds p50 ${fmt(floor.measurement.p50Ms - d.p50Ms)} ms, p99 ${fmt(floor.measurement.p99Ms - d.p99Ms)} ms`);
  for (const [name, result] of [['gateway', viaGateway], ['ledger floor', floor]] as const) {
    if (result.ttfb && direct.ttfb) {
      notes.push(`${name} adds to the time to first byte: p50 ${fmt(result.ttfb.p50Ms - direct.ttfb.p50Ms)} ms, p99 ${fmt(result.ttfb.p99Ms - direct.ttfb.p99Ms)} ms`);
    }
  }
  notes.push('the ledger floor (bench/bare-proxy.ts) runs in its own process and commits two events per request, nothing else');
  return { title, rows: [withNote(direct, cpuShare), withNote(floor, cpuShare), withNote(viaGateway, cpuShare)], baseline: d.name, unit: 'req/s', notes: [...notes, ...common] };
}

/* ------------------------------------------------------------------------------------------------
 * Setup and the after-run check
 * ---------------------------------------------------------------------------------------------- */

/**
 * Waits for the read models to catch up, then prints frozen (summed over the accounts) and the
 * fate of every reservation; true when every request that did not fail settled and nothing stays
 * frozen or open.
 */
export async function sanity(url: string, accounts: readonly BenchAccount[], db: BenchDatabase, sent: number, failed: number): Promise<boolean> {
  const started = Date.now();
  const deadline = started + 10_000;
  let frozen: number | null = null;
  let available: number | null = null;
  let counts = new Map<string, number>();
  for (;;) {
    const balance = await summedBalance(url, accounts);
    frozen = balance?.frozen ?? null;
    available = balance?.available ?? null;
    const { rows } = await db.pool.query<{ status: string; n: string }>(
      'SELECT status, count(*) AS n FROM rm.reservations WHERE account_id = ANY($1) GROUP BY status',
      [accounts.map((a) => a.accountId)],
    );
    counts = new Map(rows.map((r) => [r.status, Number(r.n)]));
    const closed = (counts.get('settled') ?? 0) + (counts.get('released') ?? 0);
    if ((frozen === 0 && closed >= sent - failed) || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const settled = counts.get('settled') ?? 0;
  const released = counts.get('released') ?? 0;
  const open = counts.get('open') ?? 0;
  const ok = frozen === 0 && settled === sent - failed && open === 0;
  process.stdout.write(
    `\nsanity (gateway, ${accounts.length === 1 ? 'one account' : `${accounts.length} accounts`}, warm-up included): ` +
      `${sent} requests sent, ${failed} failed at the client; reservations settled ${settled}, released ${released}, open ${open}; ` +
      `frozen ${frozen ?? '? (GET /v1/account failed)'}, available ${available ?? '?'} -> ${ok ? 'OK' : 'MISMATCH'}; ` +
      `read models caught up ${ok ? `${Date.now() - started} ms after the load` : 'NOT within 10 s'}\n`,
  );
  return ok;
}
