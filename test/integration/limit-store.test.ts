import { expect } from 'chai';
import type { Database } from '../../src/db/database';
import { MemoryLimitStore } from '../../src/limits/memory-store';
import { PostgresLimitStore } from '../../src/limits/postgres-store';
import { createTestDatabase } from '../support/database';
import { seededRandom } from '../support/seeded-random';

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
});
