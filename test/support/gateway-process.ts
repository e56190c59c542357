import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
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
export async function startGatewayProcess(name: string, env: Record<string, string>): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => output.push(line));
  const url = await new Promise<string>((resolve, reject) => {
    // A process that neither listens nor exits in time is killed, not left running behind the test.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gateway ${name} did not listen within ${WAIT_LIMIT_MS} ms:\n${output.slice(-20).join('\n')}`));
    }, WAIT_LIMIT_MS);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const parsed = parseJson(line);
      if (parsed?.msg !== 'gateway listening' || typeof parsed.url !== 'string') return;
      clearTimeout(timer);
      resolve(parsed.url);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`gateway ${name} exited before listening:\n${output.slice(-20).join('\n')}`));
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
export async function callJson(url: string, token: string, method = 'GET', body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
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
