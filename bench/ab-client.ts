import { Pool } from 'undici';
import { MAX_FAILURES_PER_TARGET, type AbJob, type AbResult } from './ab-job';

/**
 * Child-process entry of the `ab` section's client: one sequential connection per contender,
 * blocks of `block` requests to each contender in turn, round after round (the contender that
 * starts a round moves on by one each round), until every contender has `requests` measured. The
 * first `skip` requests of each block and the whole first `warmupRounds` rounds are not counted:
 * a contender was idle while the others ran. Receives one `{ job }` message, sends back
 * `{ result }` or `{ error }`, and exits.
 */

async function run(job: AbJob): Promise<AbResult> {
  const pools = job.targets.map((t) => new Pool(t.origin, { connections: 1, pipelining: 1, keepAliveTimeout: 60_000 }));
  const latencyMs: number[][] = job.targets.map(() => []);
  const firstByteMs: number[][] = job.targets.map(() => []);
  const failed = job.targets.map(() => 0);
  const firstError: (string | null)[] = job.targets.map(() => null);
  const live = (t: number) => failed[t]! < MAX_FAILURES_PER_TARGET;
  try {
    for (let round = 0; latencyMs.some((l, t) => live(t) && l.length < job.requests); round++) {
      for (let k = 0; k < job.targets.length; k++) {
        const t = (round + k) % job.targets.length;
        const target = job.targets[t]!;
        for (let i = 0; i < job.block && live(t); i++) {
          const counted = round >= job.warmupRounds && i >= job.skip && latencyMs[t]!.length < job.requests;
          const started = process.hrtime.bigint();
          const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
          try {
            const res = await pools[t]!.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', ...target.headers }, body: job.body });
            let first: number | null = null;
            let tail = '';
            for await (const chunk of res.body as AsyncIterable<Buffer>) {
              first ??= elapsed();
              tail = (tail + chunk.toString('latin1')).slice(-64);
            }
            const last = elapsed();
            if (res.statusCode !== 200 || (job.stream && !tail.includes('[DONE]'))) throw new Error(`${target.name}: HTTP ${res.statusCode} ...${tail}`);
            if (counted) {
              latencyMs[t]!.push(last);
              if (job.stream && first !== null) firstByteMs[t]!.push(first);
            }
          } catch (err) {
            failed[t]!++;
            firstError[t] ??= err instanceof Error ? err.message : String(err);
          }
        }
      }
    }
    return { latencyMs, firstByteMs, failed, firstError };
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
}

if (process.send) {
  process.once('message', (job: AbJob) => {
    run(job).then(
      (result) => process.send!({ result }, () => process.exit(0)),
      (err: unknown) => process.send!({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }, () => process.exit(1)),
    );
  });
}
