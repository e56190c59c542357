import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { migrate } from '../../src/db/migrations';
import type { Database } from '../../src/db/database';
import { accountDecider } from '../../src/domain/account/decider';
import { CommandHandler } from '../../src/domain/command-handler';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { PostgresSnapshotStore } from '../../src/eventstore/postgres/snapshots';
import type { Snapshot, SnapshotStore } from '../../src/eventstore/snapshots';
import { ALL_MIGRATIONS } from '../../src/gateway';
import { createLogger } from '../../src/log';
import { createTestDatabase } from '../support/database';

/** The snapshot port's contract, and the command handler loading through it. */
describe('snapshot store: postgres @integration', () => {
  let db: Database;
  let snapshots: SnapshotStore;
  const stream = (): string => `snap-${randomUUID()}`;

  before(async () => {
    db = await createTestDatabase(4);
    await migrate(db.pool, ALL_MIGRATIONS);
    snapshots = new PostgresSnapshotStore(db.pool);
  });
  after(async () => db.close());

  it('has no snapshot of a stream that was never saved', async () => {
    expect(await snapshots.load(stream(), 1)).to.equal(null);
  });

  it('gives back the saved revision and state, JSON-shaped', async () => {
    const s = stream();
    await snapshots.save(s, 1, { revision: 41, state: { balance: 7, open: { r1: { amount: 3 } }, tags: ['a'] } });
    expect(await snapshots.load(s, 1)).to.deep.equal({ revision: 41, state: { balance: 7, open: { r1: { amount: 3 } }, tags: ['a'] } });
  });

  it('keeps the later revision when saves arrive out of order', async () => {
    const s = stream();
    await snapshots.save(s, 1, { revision: 999, state: { n: 999 } });
    await snapshots.save(s, 1, { revision: 499, state: { n: 499 } });
    expect(await snapshots.load(s, 1)).to.deep.equal({ revision: 999, state: { n: 999 } });
    await snapshots.save(s, 1, { revision: 1499, state: { n: 1499 } });
    expect(await snapshots.load(s, 1)).to.deep.equal({ revision: 1499, state: { n: 1499 } });
  });

  it('never returns a snapshot of another schema version, and a save of the new version replaces it whatever its revision', async () => {
    const s = stream();
    await snapshots.save(s, 1, { revision: 999, state: { old: true } });
    expect(await snapshots.load(s, 2)).to.equal(null);
    await snapshots.save(s, 2, { revision: 499, state: { shape: 'new' } });
    expect(await snapshots.load(s, 2)).to.deep.equal({ revision: 499, state: { shape: 'new' } });
    expect(await snapshots.load(s, 1)).to.equal(null);
  });

  it('is what the command handler loads from: a cold handler folds only the events after the snapshot', async () => {
    const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 200 });
    try {
      const s = stream();
      const now = '2026-01-01T00:00:00.000Z';
      let savedOne!: (snapshot: Snapshot<unknown>) => void;
      const firstSave = new Promise<Snapshot<unknown>>((resolve) => (savedOne = resolve));
      const recording: SnapshotStore = {
        load: (id, version) => snapshots.load(id, version),
        save: async (id, version, snapshot) => {
          await snapshots.save(id, version, snapshot);
          savedOne(snapshot);
        },
      };
      const writer = new CommandHandler(store, recording, accountDecider, createLogger('silent'), { snapshotEvery: 3 });
      await writer.handle(s, { type: 'OpenAccount', accountId: 'a', name: 'A', now });
      for (const n of [1, 2, 3]) await writer.handle(s, { type: 'AddCredit', entryId: `c${n}`, amount: n, reference: `ref-${n}`, note: null, now });
      // Revision 2 is the third event: the command does not wait for its snapshot, the test does.
      expect((await firstSave).revision).to.equal(2);
      expect(await snapshots.load(s, accountDecider.snapshotVersion)).to.have.property('revision', 2);

      // A state only the snapshot can explain: the events say 1 + 2 + 3 credited, the tampered snapshot 1000 more.
      await db.pool.query(`UPDATE es_snapshots SET state = jsonb_set(state, '{credited}', to_jsonb((state->>'credited')::int + 1000)) WHERE stream_id = $1`, [s]);
      const cold = await new CommandHandler(store, snapshots, accountDecider, createLogger('silent')).load(s);
      expect(cold.revision).to.equal(3);
      expect(cold.state.credited).to.equal(1 + 2 + 3 + 1000);
    } finally {
      await store.close();
    }
  });
});
