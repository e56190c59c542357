import { expect } from 'chai';
import { Client } from 'pg';
import type { Database } from '../../src/db/database';
import { MemoryLimitStore } from '../../src/limits/memory-store';
import { PostgresLimitStore } from '../../src/limits/postgres-store';
import { createTestDatabase } from '../support/database';
import { seededRandom } from '../support/seeded-random';
import { waitFor } from '../support/wait';

/** The shared store's SQL counts as src/limits/bucket.ts does: the same steps give the same answers in PostgreSQL and in memory. */
describe('the PostgreSQL limit store @integration', function () {
  this.timeout(60_000);
  let database: Database;
  let store: PostgresLimitStore;

  before(async () => {
    database = await createTestDatabase(2, { withSchema: true });
    store = PostgresLimitStore.connect(database.url, 5_000, 'caller');
  });
  after(async () => {
    await store?.close();
    await database?.close();
  });

  it('answers 400 random takes, gives and polls as the in-memory store does', async () => {
    const random = seededRandom(43);
    const memory = new MemoryLimitStore();
    let now = 1_700_000_000_000;
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    let refusals = 0;
    for (let step = 0; step < 400; step++) {
      now += pick([0, 0, 1, 250, 999, 5_000, 61_000]);
      const bucket = pick(['rpm:a', 'rpm:b', 'tpm:a']);
      const rate = bucket.startsWith('tpm') ? 1_000 : pick([3, 60]);
      const what = pick(['take', 'take', 'take', 'give', 'poll'] as const);
      if (what === 'take') {
        const need = bucket.startsWith('tpm') ? 1 + Math.floor(random() * 400) : 1;
        const ask = { rate, need, want: need + pick([0, 1, 10]), maxWaitMs: pick([0, 0, 2_000, 30_000]), returned: pick([0, 0, 2, -3]) };
        const [shared, local] = [await store.take(bucket, ask, now), await memory.take(bucket, ask, now)];
        expect(shared, `step ${step}: take ${bucket} ${JSON.stringify(ask)}`).to.deep.equal(local);
        if (local.granted === 0) refusals++;
      } else if (what === 'give') {
        const units = pick([-200, -1, 1, 150]);
        await store.give(bucket, rate, units, now);
        await memory.give(bucket, rate, units, now);
      } else {
        const id = pick(['poll:x:k:1', 'poll:x:k:2']);
        expect(await store.poll(id, 1_000, now), `step ${step}: poll ${id}`).to.equal(await memory.poll(id, 1_000, now));
      }
    }
    expect(refusals, 'the sequence reached the limits').to.be.greaterThan(10);
  });

  it('deletes only what no longer limits anything', async () => {
    const now = 1_800_000_000_000;
    await store.take('rpm:sweep-full', { rate: 60, need: 1, want: 1, maxWaitMs: 0, returned: 0 }, now);
    await store.take('rpm:sweep-kept', { rate: 60, need: 30, want: 30, maxWaitMs: 0, returned: 0 }, now);
    await store.poll('poll:sweep', 10_000, now);
    await store.sweep(now + 2_000);
    const { rows } = await database.pool.query<{ bucket: string }>(`SELECT bucket FROM limit_buckets WHERE bucket LIKE 'rpm:sweep%' ORDER BY bucket`);
    expect(rows.map((r) => r.bucket)).to.deep.equal(['rpm:sweep-kept']);
    expect((await database.pool.query(`SELECT 1 FROM limit_polls WHERE id = 'poll:sweep'`)).rowCount).to.equal(1);
    await store.sweep(now + 30_000);
    expect((await database.pool.query(`SELECT 1 FROM limit_buckets WHERE bucket LIKE 'rpm:sweep%'`)).rowCount).to.equal(0);
    expect((await database.pool.query(`SELECT 1 FROM limit_polls WHERE id = 'poll:sweep'`)).rowCount).to.equal(0);
  });

  /**
   * Runs `call` on a connection of its own while another holds `row`'s lock, and deletes the row
   * (as a sweep does) once the call waits for it; answers the call's rows.
   */
  async function raceWithSweep<T>(table: string, where: string, call: string): Promise<T> {
    const sweeper = new Client({ connectionString: database.url });
    const caller = new Client({ connectionString: database.url });
    await Promise.all([sweeper.connect(), caller.connect()]);
    try {
      const callerPid = (await caller.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await sweeper.query('BEGIN');
      await sweeper.query(`SELECT 1 FROM ${table} WHERE ${where} FOR UPDATE`);
      const calling = caller.query(call);
      await waitFor('the call to wait on the locked row', async () => {
        const { rows } = await sweeper.query<{ waiting: boolean }>("SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE pid = $1", [callerPid]);
        return rows[0]?.waiting === true;
      });
      await sweeper.query(`DELETE FROM ${table} WHERE ${where}`);
      await sweeper.query('COMMIT');
      return (await calling).rows[0] as T;
    } finally {
      await Promise.all([sweeper.end(), caller.end()]);
    }
  }

  it('records a take whose row a sweep deletes while the take waits for it, and grants from a refilled bucket once', async () => {
    const now = 1_900_000_000_000;
    await store.take('rpm:race', { rate: 10, need: 1, want: 1, maxWaitMs: 0, returned: 0 }, now);
    // A minute later the bucket is full (sweepable); a take of up to 10 races the sweep.
    const first = await raceWithSweep<{ granted: number }>('limit_buckets', "bucket = 'rpm:race'", `SELECT granted FROM limit_take('rpm:race', 10, 0, 1, 10, 0, ${now + 60_000})`);
    expect(first.granted).to.equal(10);
    const { rows } = await database.pool.query<{ tokens: number }>("SELECT tokens FROM limit_buckets WHERE bucket = 'rpm:race'");
    expect(rows.map((r) => r.tokens), 'the take is recorded').to.deep.equal([0]);
    expect(await store.take('rpm:race', { rate: 10, need: 1, want: 10, maxWaitMs: 0, returned: 0 }, now + 60_000)).to.deep.equal({ granted: 0, waitMs: 6_000 });
  });

  it('records a poll whose row a sweep deletes while the poll waits for it', async () => {
    const now = 1_900_000_000_000;
    expect(await store.poll('poll:race', 1_000, now)).to.equal(0);
    const wait = await raceWithSweep<{ wait: string }>('limit_polls', "id = 'poll:race'", `SELECT limit_poll('poll:race', 1000, ${now + 5_000}) AS wait`);
    expect(Number(wait.wait)).to.equal(0);
    expect(await store.poll('poll:race', 1_000, now + 5_000), 'the poll is recorded').to.equal(1_000);
  });

  it("counts on the database's clock, not the caller's, unless told to", async () => {
    const onDatabaseClock = PostgresLimitStore.connect(database.url, 5_000);
    try {
      const ask = { rate: 2, need: 1, want: 1, maxWaitMs: 0, returned: 0 };
      const callerNow = Date.now();
      expect((await onDatabaseClock.take('rpm:db-clock', ask, callerNow)).granted).to.equal(1);
      expect((await onDatabaseClock.take('rpm:db-clock', ask, callerNow)).granted).to.equal(1);
      // A caller whose clock runs an hour ahead refills nothing: the database's clock has not moved.
      const ahead = await onDatabaseClock.take('rpm:db-clock', ask, callerNow + 3_600_000);
      expect(ahead.granted).to.equal(0);
      expect(ahead.waitMs).to.be.within(1, 30_000);
      expect(await onDatabaseClock.poll('poll:db-clock', 60_000, callerNow)).to.equal(0);
      expect(await onDatabaseClock.poll('poll:db-clock', 60_000, callerNow + 3_600_000), 'nor polls early').to.be.within(1, 60_000);
      // The bucket's time is the database's: within a minute of the caller's (the same machine).
      const { rows } = await database.pool.query<{ at: string }>("SELECT at FROM limit_buckets WHERE bucket = 'rpm:db-clock'");
      expect(Math.abs(Number(rows[0]!.at) - callerNow)).to.be.below(60_000);
    } finally {
      await onDatabaseClock.close();
    }
  });

  it('fails its probe on a database that answers but lacks the limit functions, and passes it once migrated', async () => {
    const empty = await createTestDatabase(1);
    const bare = PostgresLimitStore.connect(empty.url, 5_000);
    try {
      let failure: unknown;
      await bare.probe().catch((err: unknown) => (failure = err));
      expect(failure, 'SELECT 1 would have passed').to.be.instanceOf(Error);
      expect((failure as { code?: string }).code).to.equal('42883');
      await PostgresLimitStore.prepare(empty.url);
      await bare.probe();
    } finally {
      await bare.close();
      await empty.close();
    }
  });
});
