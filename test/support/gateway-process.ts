import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import type { Database } from '../../src/db/database';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { WAIT_LIMIT_MS } from './wait';

const ROOT = path.resolve(__dirname, '../..');

/** A gateway running as its own operating-system process (`src/main.ts` through tsx: the program npm start compiles and runs, without its V8 heap settings, which no test depends on). */
export interface GatewayProcess {
  readonly name: string;
  readonly url: string;
  readonly child: ChildProcess;
  /** Every line the process printed, for the failure message of a test. */
  readonly output: string[];
  /** SIGKILL: no shutdown code runs, as when a machine dies. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM, and waits for the orderly shutdown to finish. */
  stop(): Promise<void>;
}

/** Starts `src/main.ts` with `env` (PORT=0) and resolves with its URL once it logs that it listens (LOG_LEVEL must let info through). */
export async function startGatewayProcess(name: string, env: Record<string, string>, options: ProcessOptions = {}): Promise<GatewayProcess> {
  return startLoggingProcess(name, ['src/main.ts'], { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }, loggedUrl('gateway listening'), options);
}

export interface ProcessOptions {
  /** A command that runs the program in another place, e.g. `nsenter --net=/run/netns/NAME --` (the multi-host test's hosts); it must exec the program, not fork it, so that signals reach it. */
  readonly launcher?: readonly string[];
}

/** Reads a process's URL from its pino line `msg` (`{"msg": msg, "url": ...}`). */
export function loggedUrl(msg: string): (line: Record<string, unknown>) => string | null {
  return (line) => (line.msg === msg && typeof line.url === 'string' ? line.url : null);
}

/**
 * Runs `script` (TypeScript, through tsx) as its own process and resolves once a JSON line it
 * prints gives `readyUrl` its URL: a gateway, the upstream simulator's entry point, an object store.
 */
export async function startLoggingProcess(
  name: string,
  script: readonly string[],
  env: Record<string, string>,
  readyUrl: (line: Record<string, unknown>) => string | null,
  options: ProcessOptions = {},
): Promise<GatewayProcess> {
  const argv = [...(options.launcher ?? []), process.execPath, '-r', 'tsx/cjs', ...script];
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => output.push(line));
  const url = await new Promise<string>((resolve, reject) => {
    // A process that neither listens nor exits in time is killed, not left running behind the test.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not listen within ${WAIT_LIMIT_MS} ms:\n${output.slice(-20).join('\n')}`));
    }, WAIT_LIMIT_MS);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const parsed = parseJson(line);
      const url = parsed && readyUrl(parsed);
      if (!url) return;
      clearTimeout(timer);
      resolve(url);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before listening:\n${output.slice(-20).join('\n')}`));
    });
  });
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    name,
    url,
    child,
    output,
    async kill() {
      if (!gone()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!gone()) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Calls a gateway process (or any JSON API) with a bearer token; answers the status and the parsed body (null when empty). */
export async function callJson(url: string, token: string, method = 'GET', body?: unknown, signal?: AbortSignal): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    signal,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

function parseJson(line: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(line);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The gateway as an operator runs it: its own process, killed with SIGKILL, started again with
 * the same settings. Each start listens on a port of the system's choosing and reports it in its
 * log (a port picked before the process binds it can be taken meanwhile, as a busy machine showed).
 */
export class RestartableGateway {
  private running: GatewayProcess | null = null;

  constructor(
    private readonly name: string,
    readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return this.running!.url;
  }

  /** The last lines the running process printed (its log at info), for a failed test's report. */
  lastLines(n: number): string[] {
    return this.running?.output.slice(-n) ?? [];
  }

  async start(): Promise<void> {
    this.running = await startGatewayProcess(this.name, this.env);
  }

  async kill(): Promise<void> {
    await this.running?.kill();
    this.running = null;
  }

  async stop(): Promise<void> {
    await this.running?.stop();
    this.running = null;
  }

  async call(key: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(this.url + p, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() };
  }
}

/**
 * The task `stream`'s reservation was made once and closed once (`settled` or `released`) in the
 * account's log, whatever restarts came between, and the audit finds the ledger and the read
 * models sound.
 */
export async function expectReservationClosedOnceAndAuditClean(db: Database, stream: string, closed: 'settled' | 'released'): Promise<void> {
  const { rows } = await db.pool.query(
    `SELECT type, count(*)::int AS n FROM es_events WHERE stream_id LIKE 'account-%' AND data->>'reservationId' IN
       (SELECT data->>'reservationId' FROM es_events WHERE stream_id = $1 AND type = 'TaskSubmitted') GROUP BY type ORDER BY type`,
    [stream],
  );
  expect(rows).to.deep.equal([
    { type: 'FundsReserved', n: 1 },
    { type: closed === 'settled' ? 'ReservationSettled' : 'ReservationReleased', n: 1 },
  ]);
  const store = new PostgresEventStore({ pool: db.pool });
  try {
    const report = await runAudit(db.pool, store, allProjections, { staleAfterMs: 3_600_000 });
    expect(report.invariantViolations).to.deep.equal([]);
    expect(report.mismatches).to.deep.equal([]);
  } finally {
    await store.close();
  }
}
