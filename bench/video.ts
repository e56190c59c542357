import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { Pool as HttpPool } from 'undici';
import { taskStream } from '../src/tasks/events';
import { parseDirectives } from '../simulator/directives';
import type { ExtraRoute, SimHandler } from '../simulator/server';
import { arkProvider } from '../simulator/providers/ark';
import { mounted, mountPath } from '../simulator/providers/provider';
import { startBenchGateway, summedBalance, type BenchAccount } from './gateway-setup';
import { measure, percentile, printTable, progress, type BenchDatabase, type Measurement, type Table } from './support';

/**
 * Video tasks through the task engine:
 *  1. tasks created per second (POST /v1/videos/generations, with and without callback_url) while
 *     the engine processes the earlier tasks in the background, next to a plain authenticated GET
 *     /v1/account at the same concurrency (the baseline, measured in the same run);
 *  2. the time from the upstream finishing a task to its webhook arriving at a loopback receiver
 *     in this process: for the tasks of the creation run, for a paced batch, and for tasks created
 *     one at a time on an otherwise idle engine.
 * The simulator's video routes are wrapped to record, per upstream task, when it was created, when
 * it finishes (create time + `[sim:delay]`), how often it was polled and when a poll first answered
 * `succeeded`. Speeds and latencies are printed, never asserted.
 */

export type Report = (table: Table) => void;

export interface VideoBenchOptions {
  /** Concurrent clients of the creation and baseline rows, one keep-alive connection each. */
  readonly concurrency?: number;
  /** Measured time of each throughput row. */
  readonly durationMs?: number;
  /** Untimed run-up before each throughput row. */
  readonly warmupMs?: number;
  /** `[sim:delay=MS]`: time from the upstream accepting a task to it finishing. */
  readonly delayMs?: number;
  /** Tasks of the paced webhook-latency batch. */
  readonly tasks?: number;
  /** Creation rate of the paced batch, tasks per second. */
  readonly rate?: number;
  /** Tasks created one at a time (each after the previous webhook) on an idle engine. */
  readonly idleTasks?: number;
  /** Accounts (one API key each) the clients are spread over (worker w uses account w % n). */
  readonly accounts?: number;
}

const DEFAULTS: Required<VideoBenchOptions> = {
  concurrency: 32,
  durationMs: 5000,
  warmupMs: 1000,
  delayMs: 200,
  tasks: 200,
  rate: 50,
  idleTasks: 20,
  accounts: 1,
};

/** The gateway settings of this section (printed with the figures). */
const GATEWAY_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  TASK_POLL_MS: '20',
  RATE_LIMIT_PER_MINUTE: '0',
  LOG_LEVEL: 'silent',
  JOB_CONCURRENCY: '16',
} as const;
const GATEWAY_POOL_SIZE = 20;
const MODEL = 'video-pro-1.5';
/** How long the engine may take to finish and bill a backlog before the section gives up waiting. */
const DRAIN_TIMEOUT_MS = 300_000;

/** BENCH_VIDEO_CONCURRENCY, _DURATION_MS, _WARMUP_MS, _DELAY_MS, _TASKS, _RATE, _IDLE_TASKS, _ACCOUNTS. */
export function videoOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): VideoBenchOptions {
  const options: { -readonly [K in keyof VideoBenchOptions]: VideoBenchOptions[K] } = {};
  const keys: [keyof VideoBenchOptions, string][] = [
    ['concurrency', 'CONCURRENCY'],
    ['durationMs', 'DURATION_MS'],
    ['warmupMs', 'WARMUP_MS'],
    ['delayMs', 'DELAY_MS'],
    ['tasks', 'TASKS'],
    ['rate', 'RATE'],
    ['idleTasks', 'IDLE_TASKS'],
    ['accounts', 'ACCOUNTS'],
  ];
  for (const [key, suffix] of keys) {
    const name = `BENCH_VIDEO_${suffix}`;
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || (n === 0 && key !== 'idleTasks' && key !== 'warmupMs')) throw new Error(`${name} must be a positive integer, got ${raw}`);
    options[key] = n;
  }
  return options;
}

/** Wall-clock milliseconds with sub-millisecond resolution (monotonic within the run). */
function now(): number {
  return performance.timeOrigin + performance.now();
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/* ------------------------------------------------------------------------------------------------
 * The instrumented simulator and the webhook receiver
 * ---------------------------------------------------------------------------------------------- */

interface UpstreamRecord {
  /** The gateway task id (the gateway sends it as X-Client-Request-Id). */
  readonly taskId: string | null;
  readonly createdAt: number;
  /** When the simulator starts answering `succeeded` (create time + delay). */
  readonly finishAt: number;
  polls: number;
  firstPollAt: number | null;
  firstSucceededAt: number | null;
}

/** Calls `onJson` with the JSON body a simulator handler answers with (all of them use sendJson: one res.end). */
function onAnswer(res: http.ServerResponse, onJson: (status: number, body: any) => void): void {
  const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
  (res as unknown as { end: (...args: unknown[]) => http.ServerResponse }).end = (...args: unknown[]) => {
    const chunk = args[0];
    if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) {
      try {
        onJson(res.statusCode, JSON.parse(chunk.toString()));
      } catch {
        // not JSON (a file download): nothing to record
      }
    }
    return end(...args);
  };
}

/** The simulated Ark's routes with the create and get handlers wrapped to record every upstream task's timeline. */
function instrumentedVideoRoutes(upstream: Map<string, UpstreamRecord>): ExtraRoute[] {
  const base = mountPath(arkProvider);
  return mounted(arkProvider).map((route): ExtraRoute => {
    const inner: SimHandler = route.handler;
    if (route.method === 'POST' && route.path === `${base}/contents/generations/tasks`) {
      return {
        ...route,
        handler: (ctx) => {
          const createdAt = now();
          const header = ctx.req.headers['x-client-request-id'];
          const text = ((JSON.parse(ctx.rawBody?.toString('utf8') || '{}') as { content?: { type?: string; text?: string }[] }).content ?? []).find((c) => c.type === 'text')?.text ?? '';
          const delay = parseDirectives(text).delayMs ?? 150;
          onAnswer(ctx.res, (status, body) => {
            const id = (body as { id?: string }).id;
            if (status === 200 && id && !upstream.has(id)) {
              upstream.set(id, { taskId: typeof header === 'string' ? header : null, createdAt, finishAt: createdAt + delay, polls: 0, firstPollAt: null, firstSucceededAt: null });
            }
          });
          return inner(ctx);
        },
      };
    }
    if (route.method === 'GET' && route.path === `${base}/contents/generations/tasks/:id`) {
      return {
        ...route,
        handler: (ctx) => {
          const record = upstream.get(ctx.params.id!);
          if (record) {
            record.polls++;
            record.firstPollAt ??= now();
            onAnswer(ctx.res, (status, body) => {
              if (status === 200 && (body as { status?: string }).status === 'succeeded' && record.firstSucceededAt === null) record.firstSucceededAt = now();
            });
          }
          return inner(ctx);
        },
      };
    }
    return route;
  });
}

interface Hook {
  readonly at: number;
  readonly createdAt: number;
  readonly status: string;
}

/** A loopback webhook receiver: answers 200, records the first delivery per task id. */
class Receiver {
  readonly hooks = new Map<string, Hook>();
  duplicates = 0;
  total = 0;
  private readonly server = http.createServer({ keepAlive: true, keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      res.writeHead(200).end('ok');
      this.total++;
      try {
        const payload = JSON.parse(Buffer.concat(chunks).toString()) as { task_id: string; status: string; created_at: string };
        if (this.hooks.has(payload.task_id)) this.duplicates++;
        else this.hooks.set(payload.task_id, { at, createdAt: Date.parse(payload.created_at), status: payload.status });
      } catch {
        // not a task webhook
      }
    });
  });
  url = '';

  async start(): Promise<this> {
    // Longer than the gateway's webhook keep-alive (10 s), so it never reuses a socket we are closing.
    this.server.headersTimeout = 66_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/* ------------------------------------------------------------------------------------------------
 * The section
 * ---------------------------------------------------------------------------------------------- */

export async function benchVideo(db: BenchDatabase, report: Report = printTable, options: VideoBenchOptions = {}): Promise<void> {
  const o = { ...DEFAULTS, ...options };
  const upstream = new Map<string, UpstreamRecord>();
  const bench = await startBenchGateway(db, { poolSize: GATEWAY_POOL_SIZE, env: GATEWAY_ENV, dataDirPrefix: 'gateway-bench-video-', routes: instrumentedVideoRoutes(upstream) });
  const receiver = new Receiver();
  let client: HttpPool | undefined;
  try {
    await receiver.start();
    const accounts = await bench.fundedAccounts(o.accounts, 'bench video');
    const gatewayUrl = bench.gateway.url;
    client = new HttpPool(gatewayUrl, { connections: o.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
    const http1 = client;

    const authHeaders = accounts.map(({ key }) => ({ authorization: `Bearer ${key}` }));
    const jsonHeaders = accounts.map(({ key }) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' }));
    const prompt = `a short clip of waves [sim:delay=${o.delayMs}]`;
    const createBody = (callback: boolean): string =>
      JSON.stringify({ model: MODEL, content: [{ type: 'text', text: prompt }], ...(callback ? { callback_url: receiver.url } : {}) });

    /** Task ids the gateway answered, by row, and which of them carry a callback. */
    const created = new Map<string, string[]>();
    const withCallback = new Set<string>();
    const failures = { sent: 0, failed: 0, firstError: null as string | null };
    const fail = (message: string): void => {
      failures.failed++;
      failures.firstError ??= message;
    };

    async function createTask(worker: number, callback: boolean, row: string): Promise<string | null> {
      failures.sent++;
      try {
        const res = await http1.request({ path: '/v1/videos/generations', method: 'POST', headers: jsonHeaders[worker % jsonHeaders.length]!, body: createBody(callback) });
        const text = await res.body.text();
        if (res.statusCode !== 200) {
          fail(`create: HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
          return null;
        }
        const id = (JSON.parse(text) as { id: string }).id;
        let ids = created.get(row);
        if (!ids) created.set(row, (ids = []));
        ids.push(id);
        if (callback) withCallback.add(id);
        return id;
      } catch (err) {
        fail(`create: ${(err as Error).message}`);
        return null;
      }
    }

    async function getAccount(worker: number): Promise<void> {
      failures.sent++;
      try {
        const res = await http1.request({ path: '/v1/account', method: 'GET', headers: authHeaders[worker % authHeaders.length]! });
        const text = await res.body.text();
        if (res.statusCode !== 200) fail(`GET /v1/account: HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
      } catch (err) {
        fail(`GET /v1/account: ${(err as Error).message}`);
      }
    }

    const runRow = (name: string, fn: (worker: number) => Promise<unknown>): Promise<Measurement> => {
      progress(`${name}: ${o.concurrency} clients, ${o.warmupMs} ms warm-up + ${o.durationMs} ms`);
      return measure(name, (w) => fn(w), { concurrency: o.concurrency, durationMs: o.durationMs, warmupMs: o.warmupMs });
    };

    /* 1. Creation throughput under load, against a plain authenticated GET. */
    const baseName = 'GET /v1/account';
    const plainName = 'create task, no callback_url';
    const hookName = 'create task, with callback_url';
    const base = await runRow(baseName, getAccount);
    const loadStart = now();
    const plain = await runRow(plainName, (w) => createTask(w, false, plainName));
    const hooked = await runRow(hookName, (w) => createTask(w, true, hookName));
    const loadEnd = now();
    const phase1Ids = [...(created.get(plainName) ?? []), ...(created.get(hookName) ?? [])];
    const createdDuringLoad = phase1Ids.length;
    // How far the engine kept up while the clients were creating: tasks already billed right when they stopped.
    const billedAtEnd = await countBilled(db, accounts);
    progress(`draining the backlog of ${createdDuringLoad} tasks (${billedAtEnd} billed when the clients stopped)`);
    const drain = await waitForTasks(db, accounts, receiver, withCallback, DRAIN_TIMEOUT_MS);
    const drainMs = drain.at - loadEnd;

    const concurrencyNote = `${o.concurrency} concurrent clients over ${o.concurrency} keep-alive connections; ${o.warmupMs} ms warm-up then ${o.durationMs} ms per row; ` +
      (o.accounts === 1 ? 'one account (one API key) for every request' : `requests spread over ${o.accounts} accounts`);
    report({
      title: `Video task creation (POST /v1/videos/generations, ${MODEL}, [sim:delay=${o.delayMs}]) under engine load vs a plain authenticated GET`,
      rows: [base, plain, hooked],
      baseline: baseName,
      unit: 'req/s',
      notes: [
        `latency = time to the last byte of the answer; creation = reserve on the account + TaskSubmitted + wait for the tasks view`,
        `${concurrencyNote}`,
        `engine load: the creation rows run while the engine (JOB_CONCURRENCY=${GATEWAY_ENV.JOB_CONCURRENCY}, TASK_POLL_MS=${GATEWAY_ENV.TASK_POLL_MS}) submits, polls, ` +
          `archives, bills and calls back the tasks created earlier (warm-ups included); the GET baseline runs first, on an idle engine`,
        `engine throughput: ${createdDuringLoad} tasks created in ${fmtS(loadEnd - loadStart)} s (warm-ups included), ${billedAtEnd} of them billed when the clients stopped; ` +
          `the backlog was ${drain.done ? 'finished and billed' : 'NOT drained'} ${fmtS(drainMs)} s later -> ` +
          `${fmtN(createdDuringLoad / ((drain.at - loadStart) / 1000), 0)} tasks/s end to end (create → poll → archive → bill${withCallback.size > 0 ? ' → webhook' : ''})`,
        `client, gateway, simulator and receiver share one Node process and event loop (${os.cpus().length} CPUs, PostgreSQL in its own processes); gateway DB pool ${GATEWAY_POOL_SIZE}`,
        ...(failures.failed > 0 ? [`${failures.failed} of ${failures.sent} requests FAILED (first: ${failures.firstError})`] : []),
      ],
    });

    /* 2. Upstream completion -> webhook delivery. */
    // a) a paced batch on an engine that has drained the creation run's backlog
    progress(`paced batch: ${o.tasks} tasks with callback_url at ${o.rate}/s`);
    const pacedIds: string[] = [];
    const inflight: Promise<void>[] = [];
    const pacedStart = now();
    for (let i = 0; i < o.tasks; i++) {
      const due = pacedStart + (i * 1000) / o.rate;
      const wait = due - now();
      if (wait > 0) await sleep(wait);
      inflight.push(
        createTask(i, true, 'paced').then((id) => {
          if (id) pacedIds.push(id);
        }),
      );
    }
    await Promise.all(inflight);
    await waitForTasks(db, accounts, receiver, withCallback, DRAIN_TIMEOUT_MS);

    // b) one task at a time: the engine is idle between them
    const idleIds: string[] = [];
    if (o.idleTasks > 0) progress(`${o.idleTasks} tasks with callback_url one at a time (each after the previous webhook)`);
    for (let i = 0; i < o.idleTasks; i++) {
      const id = await createTask(i, true, 'idle');
      if (!id) continue;
      idleIds.push(id);
      const deadline = Date.now() + 30_000;
      while (!receiver.hooks.has(id) && Date.now() < deadline) await sleep(2);
    }
    await waitForTasks(db, accounts, receiver, withCallback, DRAIN_TIMEOUT_MS);

    const recordedAt = await deliveryRequestedTimes(db, [...withCallback]);
    const byTask = new Map<string, UpstreamRecord>();
    for (const record of upstream.values()) if (record.taskId) byTask.set(record.taskId, record);
    const groups: [string, string[]][] = [
      [`${hookName} row (under creation load, ${created.get(hookName)?.length ?? 0} tasks)`, created.get(hookName) ?? []],
      [`paced batch (${o.tasks} tasks at ${o.rate}/s, backlog drained)`, pacedIds],
      ...(idleIds.length > 0 ? [[`one at a time, idle engine (${idleIds.length} tasks)`, idleIds] as [string, string[]]] : []),
    ];
    for (const [title, ids] of groups) {
      process.stdout.write(`\n${latencyReport(title, ids, byTask, receiver, recordedAt)}\n`);
    }
    process.stdout.write(
      `  settings: TASK_POLL_MS=${GATEWAY_ENV.TASK_POLL_MS} (poll n+1 is due min(TASK_POLL_MS × 2^n, 15 s) after poll n: 20, 40, 80, 160, 320 ms...), ` +
        `JOB_CONCURRENCY=${GATEWAY_ENV.JOB_CONCURRENCY}, job worker idle wake-up 500 ms (a NOTIFY wakes it sooner), [sim:delay=${o.delayMs}]\n` +
        `  "finished" = simulator create time + delay (when it starts answering succeeded); "first succeeded" = the first poll it answered succeeded; ` +
        `"delivery requested" = es_events.recorded_at of WebhookDeliveryRequested (PostgreSQL's clock; same machine with the embedded server); ` +
        `"created" = the payload's created_at (ms)\n` +
        `  receiver: ${receiver.total} webhook requests, ${receiver.duplicates} duplicates (a duplicate means a failed first attempt)\n`,
    );

    /* 3. Everything billed. */
    await sanity(gatewayUrl, db, accounts, receiver, withCallback, failures);
  } finally {
    try {
      await client?.close();
    } finally {
      await bench.close();
      await receiver.close();
    }
  }
}

/* ------------------------------------------------------------------------------------------------
 * Latency figures
 * ---------------------------------------------------------------------------------------------- */

interface Stats {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

function stats(values: readonly number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.length === 0 ? NaN : sorted.reduce((s, v) => s + v, 0) / sorted.length;
  return { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, mean };
}

function fmtN(n: number, digits: number): string {
  if (!Number.isFinite(n)) return '-';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function fmtMs(n: number): string {
  return fmtN(n, Math.abs(n) < 100 ? 1 : 0);
}

function fmtS(ms: number): string {
  return fmtN(ms / 1000, 1);
}

function latencyReport(
  title: string,
  ids: readonly string[],
  byTask: ReadonlyMap<string, UpstreamRecord>,
  receiver: Receiver,
  recordedAt: ReadonlyMap<string, number>,
): string {
  const cols = { submit: [] as number[], firstPoll: [] as number[], total: [] as number[], fromFinish: [] as number[], pollLag: [] as number[], toEvent: [] as number[], eventToHook: [] as number[], fromCreated: [] as number[], polls: [] as number[] };
  let missingHook = 0;
  let missingUpstream = 0;
  const statuses = new Map<string, number>();
  for (const id of ids) {
    const hook = receiver.hooks.get(id);
    const up = byTask.get(id);
    if (!hook) {
      missingHook++;
      continue;
    }
    statuses.set(hook.status, (statuses.get(hook.status) ?? 0) + 1);
    cols.fromCreated.push(hook.at - hook.createdAt);
    if (!up || up.firstSucceededAt === null) {
      missingUpstream++;
      continue;
    }
    cols.total.push(hook.at - up.firstSucceededAt);
    cols.fromFinish.push(hook.at - up.finishAt);
    cols.pollLag.push(up.firstSucceededAt - up.finishAt);
    cols.polls.push(up.polls);
    cols.submit.push(up.createdAt - hook.createdAt);
    if (up.firstPollAt !== null) cols.firstPoll.push(up.firstPollAt - up.createdAt);
    const requested = recordedAt.get(id);
    if (requested !== undefined) {
      cols.toEvent.push(requested - up.firstSucceededAt);
      cols.eventToHook.push(hook.at - requested);
    }
  }
  const rows: [string, Stats][] = [
    ['webhook received - upstream first answered succeeded', stats(cols.total)],
    ['  first succeeded -> delivery requested (poll job records the success)', stats(cols.toEvent)],
    ['  delivery requested -> webhook received (process manager, job queue, POST)', stats(cols.eventToHook)],
    ['upstream first answered succeeded - upstream finished (poll backoff)', stats(cols.pollLag)],
    ['webhook received - upstream finished', stats(cols.fromFinish)],
    ['webhook received - task created', stats(cols.fromCreated)],
    ['  upstream task created - task created (process manager, submit job)', stats(cols.submit)],
    ['  first poll - upstream task created (due TASK_POLL_MS after acceptance)', stats(cols.firstPoll)],
  ];
  const header = ['', 'n', 'p50 ms', 'p99 ms', 'max ms', 'mean ms'];
  const body = rows.map(([name, s]) => [name, String(s.n), fmtMs(s.p50), fmtMs(s.p99), fmtMs(s.max), fmtMs(s.mean)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const polls = stats(cols.polls);
  const out = [
    `Upstream completion -> webhook delivery: ${title}`,
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...body.map(line),
    `  upstream polls per task: p50 ${fmtN(polls.p50, 0)}, max ${fmtN(polls.max, 0)}; webhook statuses: ${[...statuses].map(([s, n]) => `${s} ${n}`).join(', ') || '-'}` +
      (missingHook > 0 ? `; ${missingHook} tasks WITHOUT a webhook` : '') +
      (missingUpstream > 0 ? `; ${missingUpstream} without an upstream success record` : ''),
  ];
  return out.join('\n');
}

/* ------------------------------------------------------------------------------------------------
 * Database probes, setup and the after-run check
 * ---------------------------------------------------------------------------------------------- */

async function countBilled(db: BenchDatabase, accounts: readonly BenchAccount[]): Promise<number> {
  const { rows } = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM rm.tasks WHERE account_id = ANY($1) AND billing_status <> 'reserved'", [accounts.map((a) => a.accountId)]);
  return Number(rows[0]?.n ?? 0);
}

/** Waits until every task of the accounts is billed and every callback task's webhook has arrived. */
async function waitForTasks(
  db: BenchDatabase,
  accounts: readonly BenchAccount[],
  receiver: Receiver,
  withCallback: ReadonlySet<string>,
  timeoutMs: number,
): Promise<{ done: boolean; at: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.pool.query<{ open: string }>("SELECT count(*) FILTER (WHERE billing_status = 'reserved') AS open FROM rm.tasks WHERE account_id = ANY($1)", [
      accounts.map((a) => a.accountId),
    ]);
    const open = Number(rows[0]?.open ?? 0);
    let hooksMissing = 0;
    for (const id of withCallback) if (!receiver.hooks.has(id)) hooksMissing++;
    if (open === 0 && hooksMissing === 0) return { done: true, at: now() };
    if (Date.now() > deadline) return { done: false, at: now() };
    await sleep(20);
  }
}

/** es_events.recorded_at (epoch ms) of each task's WebhookDeliveryRequested, by task id. */
async function deliveryRequestedTimes(db: BenchDatabase, taskIds: readonly string[]): Promise<Map<string, number>> {
  const streams = taskIds.map((id) => taskStream('video', id));
  const { rows } = await db.pool.query<{ stream_id: string; ms: number }>(
    `SELECT stream_id, min(extract(epoch FROM recorded_at) * 1000)::float8 AS ms FROM es_events
     WHERE type = 'WebhookDeliveryRequested' AND stream_id = ANY($1) GROUP BY stream_id`,
    [streams],
  );
  const prefix = 'video-';
  return new Map(rows.map((r) => [r.stream_id.slice(prefix.length), Number(r.ms)]));
}

/** Prints frozen (summed over the accounts), the tasks by status and billing, and the webhooks; never throws on a mismatch. */
async function sanity(
  url: string,
  db: BenchDatabase,
  accounts: readonly BenchAccount[],
  receiver: Receiver,
  withCallback: ReadonlySet<string>,
  failures: { sent: number; failed: number },
): Promise<void> {
  const balance = await summedBalance(url, accounts);
  const frozen = balance?.frozen ?? null;
  const available = balance?.available ?? null;
  const ids = accounts.map((a) => a.accountId);
  const { rows: tasks } = await db.pool.query<{ status: string; billing_status: string; n: string }>(
    'SELECT status, billing_status, count(*) AS n FROM rm.tasks WHERE account_id = ANY($1) GROUP BY 1, 2 ORDER BY 1, 2',
    [ids],
  );
  const { rows: reservations } = await db.pool.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM rm.reservations WHERE account_id = ANY($1) GROUP BY status', [ids]);
  const total = tasks.reduce((s, r) => s + Number(r.n), 0);
  const reserved = tasks.filter((r) => r.billing_status === 'reserved').reduce((s, r) => s + Number(r.n), 0);
  const open = Number(reservations.find((r) => r.status === 'open')?.n ?? 0);
  let hooksMissing = 0;
  for (const id of withCallback) if (!receiver.hooks.has(id)) hooksMissing++;
  const ok = frozen === 0 && reserved === 0 && open === 0 && hooksMissing === 0;
  process.stdout.write(
    `\nsanity (video, ${accounts.length === 1 ? 'one account' : `${accounts.length} accounts`}, warm-ups included): ` +
      `${failures.sent} requests sent, ${failures.failed} failed at the client; ${total} tasks (${tasks.map((r) => `${r.status}/${r.billing_status} ${r.n}`).join(', ')}); ` +
      `reservations ${reservations.map((r) => `${r.status} ${r.n}`).join(', ')}; webhooks ${withCallback.size - hooksMissing}/${withCallback.size}; ` +
      `frozen ${frozen ?? '? (GET /v1/account failed)'}, available ${available ?? '?'} -> ${ok ? 'OK' : 'MISMATCH'}\n`,
  );
}
