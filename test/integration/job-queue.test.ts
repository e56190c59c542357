import { expect } from 'chai';
import type { Database } from '../../src/db/database';
import { inTransaction, migrate } from '../../src/db/migrations';
import { ALL_MIGRATIONS } from '../../src/gateway';
import { JobWorker, scheduleJob, type Job } from '../../src/jobs/queue';
import { createLogger } from '../../src/log';
import { countingPool } from '../support/counting-pool';
import { createTestDatabase } from '../support/database';
import { waitFor } from '../support/wait';

describe('job queue: leases @integration', () => {
  let db: Database;
  const logger = createLogger('silent');
  const workers: JobWorker[] = [];
  before(async () => {
    db = await createTestDatabase(10);
    await migrate(db.pool, ALL_MIGRATIONS);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });
  after(async () => db.close());

  async function schedule(kind: string, key: string): Promise<void> {
    const client = await db.pool.connect();
    try {
      await inTransaction(client, () => scheduleJob(client, kind, key, {}, new Date()));
    } finally {
      client.release();
    }
  }

  function worker(kind: string, handler: (job: Job) => Promise<void>, leaseMs: number): JobWorker {
    const w = new JobWorker(db.pool, logger, { concurrency: 1, leaseMs, pollMs: 50 });
    w.register(kind, async (job) => {
      await handler(job);
      return { done: true };
    });
    workers.push(w);
    return w;
  }

  const jobsOf = async (kind: string) => (await db.pool.query('SELECT key FROM jobs WHERE kind = $1', [kind])).rows;

  it('keeps a job that runs for several leases to the worker running it: it runs once', async () => {
    const runs: string[] = [];
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const slow = (name: string) => async () => {
      runs.push(name);
      await finished;
    };
    const first = worker('slow', slow('first'), 300);
    await schedule('slow', 'one');
    first.start();
    await waitFor('the first run', async () => runs.length === 1, 10_000);
    const { rows } = await db.pool.query("SELECT locked_until::text AS claimed FROM jobs WHERE kind = 'slow'");
    const second = worker('slow', slow('second'), 300);
    second.start();
    // The job runs on until its first claim would have run out three leases ago: without renewals
    // the second worker, polling all along, would have taken it over.
    await waitFor('three leases past the first claim', async () => (await db.pool.query("SELECT now() > $1::timestamptz + interval '900 milliseconds' AS past", [rows[0].claimed])).rows[0].past, 10_000);
    finish();
    await waitFor('the job done', async () => (await jobsOf('slow')).length === 0, 10_000);
    // Stopping waits for whatever the second worker had started.
    await second.stop();
    expect(runs).to.deep.equal(['first']);
  });

  it('hands the job of a worker that stopped renewing to another once its lease runs out', async () => {
    await schedule('orphan', 'one');
    // A worker that died right after claiming: the claim stands, nobody renews it.
    await db.pool.query("UPDATE jobs SET locked_until = now() + interval '400 milliseconds', attempts = 1 WHERE kind = 'orphan'");
    const runs: number[] = [];
    worker('orphan', async (job) => void runs.push(job.attempts), 300).start();
    await waitFor('the job done', async () => (await jobsOf('orphan')).length === 0, 10_000);
    expect(runs, 'taken over once, as its second claim').to.deep.equal([2]);
  });

  it('idle, polls once per interval however many loops it runs, not once per loop', async () => {
    const seen: ('claim' | 'due')[] = [];
    const recording = new Proxy(db.pool, {
      get(target, property) {
        if (property !== 'query') return Reflect.get(target, property, target);
        return (text: string, values?: unknown[]) => {
          if (/^UPDATE jobs SET locked_until .* attempts = attempts \+ 1/s.test(text)) seen.push('claim');
          if (/min\(due_at\)/.test(text)) seen.push('due');
          return target.query(text, values);
        };
      },
    });
    const idle = new JobWorker(recording, logger, { concurrency: 8, leaseMs: 1000, pollMs: 20 });
    idle.register('nothing-scheduled', async () => ({ done: true }));
    workers.push(idle);
    idle.start();
    await waitFor('twenty claims', async () => seen.filter((k) => k === 'claim').length >= 20, 10_000);
    let claims = 0;
    const upTo20th = seen.slice(0, seen.findIndex((kind) => kind === 'claim' && ++claims === 20) + 1);
    // One loop claims at start and then watches the queue: a claim, a look for the next due job,
    // a claim, and so on, while the other seven sleep. Only two claims follow no look: the first,
    // and the one of the loop that the notification listener wakes once it listens (for jobs due
    // before it did). Eight loops polling would claim side by side (eight in a row at start).
    const unlooked = upTo20th.filter((kind, i) => kind === 'claim' && upTo20th[i - 1] !== 'due');
    expect(unlooked.length, upTo20th.join(' ')).to.be.at.most(2);
  });

  it('wakes its idle loops for a burst: all run at once', async () => {
    const running = new Set<string>();
    let allIn!: () => void;
    const together = new Promise<void>((resolve) => (allIn = resolve));
    const burst = new JobWorker(db.pool, logger, { concurrency: 4, leaseMs: 10_000, pollMs: 60_000 });
    burst.register('burst', async (job) => {
      running.add(job.key);
      if (running.size === 4) allIn();
      // Finishes only once all four run: with one loop working at a time this never ends.
      await together;
      return { done: true };
    });
    workers.push(burst);
    burst.start();
    // The idle loops are asleep (the poll interval is a minute): the jobs' notification wakes one,
    // and each claim wakes the next.
    for (const key of ['a', 'b', 'c', 'd']) await schedule('burst', key);
    await waitFor('all four jobs running at once', async () => running.size === 4, 10_000);
    await waitFor('the burst done', async () => (await jobsOf('burst')).length === 0, 10_000);
  });

  it('stops at once, also when a loop was claiming as it stopped (it must not go to sleep after)', async () => {
    // The claim of the loop that claims at start waits at the gate until the worker is told to
    // stop, which wakes the other loops (asleep until woken); the claiming loop then finds nothing
    // and would go idle, watching the queue for an hour.
    const claims = countingPool(db.pool, /^UPDATE jobs SET locked_until .* attempts = attempts \+ 1/s);
    claims.hold();
    const stopping = new JobWorker(claims.pool, logger, { concurrency: 3, leaseMs: 10_000, pollMs: 3_600_000 });
    stopping.register('never-scheduled', async () => ({ done: true }));
    stopping.start();
    await waitFor('the first loop claiming', async () => claims.count() >= 1, 10_000);
    const stopped = stopping.stop();
    claims.release();
    // Without the fix this never settles (the mocha timeout fails the test).
    await stopped;
    expect(stopping.problem).to.equal('stopped');
  });
});
