import { Pool } from 'undici';

/**
 * Child-process entry of the `streams` section's load: opens `streams` streamed chat requests,
 * at most `batch` waiting for their first byte at a time (so the gateway's listen backlog never
 * overflows), each over a connection of its own, and reads every one to its end. Reports
 * `{ open }` once every stream has its first byte (or failed), answers `'count'` with
 * `{ openNow }` (streams between their first and their last byte), then sends `{ result }` and
 * exits. Runs in its own process so that the bench measures the gateway's
 * memory and event loop, not the client's.
 */

export interface StreamsJob {
  readonly origin: string;
  /** Stream s uses keys[s % keys.length]. */
  readonly keys: readonly string[];
  readonly body: string;
  readonly streams: number;
  readonly batch: number;
}

export interface StreamsOpen {
  /** Streams with their first byte. */
  readonly open: number;
  /** Epoch ms of the first first byte and of the last. */
  readonly firstAt: number;
  readonly lastAt: number;
}

export interface StreamsResult {
  /** Streams that ended with `[DONE]` after an HTTP 200. */
  readonly completed: number;
  readonly failed: number;
  readonly firstError: string | null;
  /** Lifetimes of the completed streams (request to last byte), ms, ascending. */
  readonly lifetimesMs: number[];
}

async function run(job: StreamsJob): Promise<StreamsResult> {
  // As many connections as streams: each stream holds one for its whole life.
  const pool = new Pool(job.origin, { connections: job.streams, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  let completed = 0;
  let failed = 0;
  let firstError: string | null = null;
  const lifetimesMs: number[] = [];
  const firstBytes: number[] = [];
  let openNow = 0;
  process.on('message', (message: unknown) => {
    if (message === 'count') process.send!({ openNow });
  });
  const fail = (message: string): void => {
    failed++;
    firstError ??= message;
  };

  /** Resolves at the stream's first byte (or its failure); `done` at its end. */
  const open = (s: number): { firstByte: Promise<void>; done: Promise<void> } => {
    let reached!: () => void;
    const firstByte = new Promise<void>((resolve) => (reached = resolve));
    const started = performance.now();
    let first = true;
    const done = (async () => {
      try {
        const res = await pool.request({
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${job.keys[s % job.keys.length]}` },
          body: job.body,
        });
        let tail = '';
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          if (first) {
            first = false;
            openNow++;
            firstBytes.push(Date.now());
            reached();
          }
          tail = (tail + chunk.toString('latin1')).slice(-64);
        }
        if (res.statusCode !== 200) fail(`HTTP ${res.statusCode}: ${tail}`);
        else if (!tail.includes('[DONE]')) fail(`stream ended without [DONE]: ...${tail}`);
        else {
          completed++;
          lifetimesMs.push(performance.now() - started);
        }
      } catch (err) {
        fail(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
      } finally {
        if (!first) openNow--;
        reached();
      }
    })();
    return { firstByte, done };
  };

  try {
    const all: Promise<void>[] = [];
    let next = 0;
    // `batch` openers, each opening its next stream once the one before has its first byte.
    const opener = async (): Promise<void> => {
      while (next < job.streams) {
        const stream = open(next++);
        all.push(stream.done);
        await stream.firstByte;
      }
    };
    await Promise.all(Array.from({ length: Math.min(job.batch, job.streams) }, opener));
    firstBytes.sort((a, b) => a - b);
    const report: StreamsOpen = { open: firstBytes.length, firstAt: firstBytes[0] ?? NaN, lastAt: firstBytes[firstBytes.length - 1] ?? NaN };
    process.send!({ open: report });
    await Promise.all(all);
    lifetimesMs.sort((a, b) => a - b);
    return { completed, failed, firstError, lifetimesMs };
  } finally {
    await pool.close();
  }
}

if (process.send) {
  process.once('message', (job: StreamsJob) => {
    // The job is the first message; 'count' queries come later, to run's own listener.
    run(job).then(
      (result) => process.send!({ result }, () => process.exit(0)),
      (err: unknown) => process.send!({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }, () => process.exit(1)),
    );
  });
}
