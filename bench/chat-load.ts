import { fork, type Serializable } from 'node:child_process';
import path from 'node:path';
import { Pool } from 'undici';
import { MAX_FAILURES_PER_TARGET, type AbJob, type AbResult } from './ab-job';
import { measure, percentile, type Measurement } from './support';

/**
 * The chat load generator: `concurrency` workers, each sending one request at a time over its own
 * keep-alive connection (an undici Pool with as many connections as workers), for a fixed time
 * after an untimed warm-up. Runs in the bench process, or in a child process (chat-load-child.ts)
 * so that the client does not share an event loop with the servers it measures.
 */

export interface LoadTarget {
  /** Row name in the report. */
  readonly name: string;
  /** e.g. `http://127.0.0.1:PORT`. */
  readonly origin: string;
  readonly path: string;
  /** Headers of every request; with several sets, worker w uses set w % length (e.g. one API key per account). */
  readonly headers: readonly Readonly<Record<string, string>>[];
  readonly body: string;
  /** A streamed answer: read to the end, check it ends with `[DONE]`, record the time to first byte. */
  readonly stream: boolean;
}

export interface LoadOptions {
  readonly concurrency: number;
  readonly durationMs: number;
  readonly warmupMs: number;
}

export interface LoadResult {
  /** Latency = time to the last byte of the answer; counts measured requests only. */
  readonly measurement: Measurement;
  /** Streams only: time to the first byte of the body, measured requests only. */
  readonly ttfb: { readonly p50Ms: number; readonly p99Ms: number } | null;
  /** Every request sent, warm-up included. */
  readonly sent: number;
  /** Requests that failed (transport error, status other than 200, stream without `[DONE]`), warm-up included. */
  readonly failed: number;
  readonly firstError: string | null;
}

export async function runLoad(target: LoadTarget, options: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(target.origin, { connections: options.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  let sent = 0;
  let failed = 0;
  let firstError: string | null = null;
  const ttfbMs: number[] = [];
  // measure() runs its warm-up while Date.now() < warmupUntil and its measured phase after that.
  const warmupUntil = Date.now() + options.warmupMs;

  const fail = (message: string): void => {
    failed++;
    firstError ??= message;
  };

  const operation = async (worker: number): Promise<void> => {
    const headers = target.headers[worker % target.headers.length]!;
    const measured = Date.now() >= warmupUntil;
    const t0 = process.hrtime.bigint();
    sent++;
    try {
      const res = await pool.request({ origin: target.origin, path: target.path, method: 'POST', headers, body: target.body });
      if (!target.stream) {
        const text = await res.body.text();
        if (res.statusCode !== 200) fail(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
        return;
      }
      let first = true;
      let tail = '';
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (first) {
          first = false;
          if (measured) ttfbMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
        tail = (tail + chunk.toString('latin1')).slice(-64);
      }
      if (res.statusCode !== 200) fail(`HTTP ${res.statusCode}: ${tail}`);
      else if (!tail.includes('[DONE]')) fail(`stream ended without [DONE]: ...${tail}`);
    } catch (err) {
      fail(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    }
  };

  try {
    const measurement = await measure(target.name, operation, {
      concurrency: options.concurrency,
      durationMs: options.durationMs,
      warmupMs: options.warmupMs,
    });
    ttfbMs.sort((a, b) => a - b);
    return {
      measurement,
      ttfb: target.stream ? { p50Ms: percentile(ttfbMs, 50), p99Ms: percentile(ttfbMs, 99) } : null,
      sent,
      failed,
      firstError,
    };
  } finally {
    await pool.close();
  }
}

/* ------------------------------------------------------------------------------------------------
 * Load from a child process (`chat` with BENCH_CHAT_LOAD=child, and `peer`'s exact tables)
 * ---------------------------------------------------------------------------------------------- */

export function runLoadInChild(target: LoadTarget, options: LoadOptions): Promise<LoadResult> {
  return resultOfChild<LoadResult>(path.join(__dirname, 'chat-load-child.ts'), { target, options }, 'load child');
}

/**
 * The alternating client (ab-client.ts) in a process of its own: one sequential connection per
 * target, blocks of requests to each in turn, round after round (`bench ab`, and the exact tables
 * of `bench peer`).
 */
export function runAlternatingInChild(job: AbJob): Promise<AbResult> {
  return resultOfChild<AbResult>(path.join(__dirname, 'ab-client.ts'), job, 'alternating client');
}

/** The alternating client's latencies (each target's, sorted) and a row for each target, named as given. */
export function alternatingRows(names: readonly string[], result: AbResult): { latency: number[][]; firstByte: number[][]; rows: Measurement[] } {
  const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
  const latency = result.latencyMs.map(sorted);
  const firstByte = result.firstByteMs.map(sorted);
  const rows = names.map((name, i): Measurement => {
    const l = latency[i]!;
    const sum = l.reduce((a, b) => a + b, 0);
    return { name, ops: l.length, elapsedMs: sum, opsPerSec: (l.length * 1000) / sum, p50Ms: percentile(l, 50), p99Ms: percentile(l, 99), maxMs: l[l.length - 1] ?? NaN, concurrency: 1 };
  });
  return { latency, firstByte, rows };
}

/** What the alternating client's table says under it: each target's failures, and how it was measured. */
export function alternatingNotes(names: readonly string[], result: AbResult, o: { readonly block: number; readonly skip: number; readonly requests: number }): { failures: string[]; method: string } {
  const failures = names.flatMap((name, i) => {
    const failed = result.failed[i]!;
    if (failed === 0) return [];
    const givenUp = failed >= MAX_FAILURES_PER_TARGET ? `, given up after ${failed}` : '';
    return [`${name}: ${failed} requests FAILED${givenUp} (first: ${result.firstError[i]})`];
  });
  const method =
    `one connection per contender, a sequential client in its own process; blocks of ${o.block} requests to each contender in turn after a warm-up round, ` +
    `the first ${o.skip} of each block not counted; ${o.requests} measured per contender; latency = time to the last byte`;
  return { failures, method };
}

/**
 * Forks `file` (a child that answers one message with `{ result }` or `{ error }` and exits), sends
 * it `job`, and resolves with its result; rejects when it reports an error or exits without one.
 */
export function resultOfChild<R>(file: string, job: Serializable, what: string): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    // process.execArgv carries tsx's loader flags, so the child can run TypeScript too.
    const child = fork(file, [], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let settled = false;
    child.once('message', (message: { result?: R; error?: string }) => {
      settled = true;
      if (message.result) resolve(message.result);
      else reject(new Error(`${what} failed: ${message.error ?? 'no result'}`));
    });
    child.once('error', (err) => {
      if (!settled) {
        settled = true;
        reject(err);
      }
    });
    child.once('exit', (code, signal) => {
      if (!settled) {
        settled = true;
        reject(new Error(`${what} exited (${signal ?? code}) without a result`));
      }
    });
    child.send(job);
  });
}
