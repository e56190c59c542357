import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { migrate } from '../../src/db/migrations';
import type { Database } from '../../src/db/database';
import { EventStoreDbEventStore } from '../../src/eventstore/eventstoredb/store';
import { comparePositions, WrongExpectedVersionError, type EventStore, type RecordedEvent } from '../../src/eventstore/port';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { ALL_MIGRATIONS } from '../../src/gateway';
import { createTestDatabase } from '../support/database';
import { readToEnd, TRICKY_DATA } from '../support/event-log';
import { waitFor } from '../support/wait';

interface Adapter {
  name: string;
  enabled: boolean;
  open(): Promise<{ store: EventStore; close(): Promise<void> }>;
}

const adapters: Adapter[] = [
  {
    name: 'postgres',
    enabled: true,
    async open() {
      const db: Database = await createTestDatabase();
      await migrate(db.pool, ALL_MIGRATIONS);
      const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 200 });
      return {
        store,
        async close() {
          await store.close();
          await db.close();
        },
      };
    },
  },
  {
    // No EventStoreDB server can run on the development machines; CI and operators with one set
    // ESDB_CONNECTION_STRING (e.g. kurrentdb://localhost:2113?tls=false) to run the same suite on it.
    name: 'eventstoredb',
    enabled: Boolean(process.env.ESDB_CONNECTION_STRING),
    async open() {
      const store = new EventStoreDbEventStore({ connectionString: process.env.ESDB_CONNECTION_STRING! });
      return { store, close: () => store.close() };
    },
  },
];

for (const adapter of adapters.filter((a) => a.enabled)) {
  describe(`event store conformance: ${adapter.name} @integration`, () => {
    let store: EventStore;
    let close: () => Promise<void>;
    const stream = (): string => `conf-${randomUUID()}`;

    before(async () => {
      ({ store, close } = await adapter.open());
    });
    after(async () => close());

    it('numbers revisions from 0 and returns the next expected version', async () => {
      const s = stream();
      const first = await store.append(s, [{ type: 'A', data: { n: 1 } }], { expectedVersion: 'no_stream' });
      expect(first.nextExpectedVersion).to.equal(0);
      const second = await store.append(s, [{ type: 'B', data: { n: 2 } }, { type: 'C', data: { n: 3 } }], { expectedVersion: 0 });
      expect(second.nextExpectedVersion).to.equal(2);
      expect(comparePositions(second.position, first.position)).to.equal(1);
      const events = await store.readStream(s);
      expect(events.map((e) => [e.revision, e.type, (e.data as { n: number }).n])).to.deep.equal([
        [0, 'A', 1],
        [1, 'B', 2],
        [2, 'C', 3],
      ]);
      expect(await store.streamHead(s)).to.deep.include({ revision: 2 });
    });

    it('enforces every expected-version state with a typed conflict that reports the actual revision', async () => {
      const s = stream();
      const conflict = async (expected: Parameters<EventStore['append']>[2]['expectedVersion']): Promise<WrongExpectedVersionError> => {
        try {
          await store.append(s, [{ type: 'X', data: {} }], { expectedVersion: expected });
        } catch (err) {
          expect(err).to.be.instanceOf(WrongExpectedVersionError);
          return err as WrongExpectedVersionError;
        }
        throw new Error(`append with ${String(expected)} succeeded`);
      };
      expect((await conflict('stream_exists')).actual).to.equal(-1);
      expect((await conflict(0)).actual).to.equal(-1);
      await store.append(s, [{ type: 'X', data: {} }], { expectedVersion: 'any' });
      expect((await conflict('no_stream')).actual).to.equal(0);
      expect((await conflict(5)).actual).to.equal(0);
      await store.append(s, [{ type: 'X', data: {} }], { expectedVersion: 'stream_exists' });
      await store.append(s, [{ type: 'X', data: {} }], { expectedVersion: 1 });
      expect(await store.readStream(s)).to.have.length(3);
    });

    it('reads an absent stream as empty and pages a stream by revision', async () => {
      expect(await store.readStream(stream())).to.deep.equal([]);
      expect(await store.streamHead(stream())).to.equal(null);
      const s = stream();
      await store.append(s, Array.from({ length: 5 }, (_, n) => ({ type: 'N', data: { n } })), { expectedVersion: 'no_stream' });
      const page = await store.readStream(s, { fromRevision: 2, maxCount: 2 });
      expect(page.map((e) => e.revision)).to.deep.equal([2, 3]);
    });

    it('keeps ids, metadata and data, and reads the global log strictly after a position', async () => {
      const s = stream();
      const id = randomUUID();
      const { position } = await store.append(s, [{ id, type: 'Meta', data: { a: [1, 'x'] }, metadata: { requestId: 'req_1' } }], { expectedVersion: 'no_stream' });
      await store.append(s, [{ type: 'After', data: {} }], { expectedVersion: 0 });
      // The global log shows a commit once no older transaction on the server is still open
      // (other databases' included): wait for that rather than assume it.
      const all = await waitFor('both events readable in the global log', async () => {
        const log = await readToEnd(store);
        return log.filter((e) => e.streamId === s).length >= 2 ? log : null;
      });
      const mine = all.filter((e) => e.streamId === s);
      expect(mine.map((e) => e.type)).to.deep.equal(['Meta', 'After']);
      expect(mine[0]).to.deep.include({ id, data: { a: [1, 'x'] } });
      expect(mine[0]!.metadata).to.deep.include({ requestId: 'req_1' });
      const after = await store.readAll(position, 1000);
      expect(after.some((e) => e.id === id)).to.equal(false);
      expect(after.some((e) => e.streamId === s && e.type === 'After')).to.equal(true);
      for (let i = 1; i < all.length; i++) expect(comparePositions(all[i - 1]!.position, all[i]!.position)).to.equal(-1);
      expect(comparePositions((await store.headPosition())!, all[all.length - 1]!.position)).to.equal(0);
    });

    it('keeps data and metadata exactly, in order, whatever characters they hold', async () => {
      const s = stream();
      const events = TRICKY_DATA.map((data, n) => ({ type: `T${n}`, data, metadata: { requestId: `req_"\\${n}`, note: TRICKY_DATA[0] } }));
      await store.append(s, events, { expectedVersion: 'no_stream' });
      const read = await store.readStream(s);
      expect(read.map((e) => [e.type, e.data])).to.deep.equal(events.map((e) => [e.type, e.data]));
      for (const e of read) expect(e.metadata).to.deep.include({ requestId: `req_"\\${e.revision}`, note: TRICKY_DATA[0] });
    });

    it('delivers the log to a subscription in order, from a position, including later appends', async () => {
      const s = stream();
      const { position: start } = await store.append(s, [{ type: 'Before', data: {} }], { expectedVersion: 'no_stream' });
      const seen: RecordedEvent[] = [];
      let resolveDone: () => void;
      const done = new Promise<void>((r) => (resolveDone = r));
      const sub = store.subscribe({
        from: start,
        onBatch: async (batch) => {
          seen.push(...batch.filter((e) => e.streamId === s));
          if (seen.length >= 3) resolveDone();
        },
      });
      await store.append(s, [{ type: 'One', data: {} }], { expectedVersion: 0 });
      await store.append(s, [{ type: 'Two', data: {} }, { type: 'Three', data: {} }], { expectedVersion: 1 });
      await done;
      await sub.close();
      expect(seen.map((e) => e.type)).to.deep.equal(['One', 'Two', 'Three']);
    });

    it('stops a subscription whose handler throws, with that error', async () => {
      await store.append(stream(), [{ type: 'Boom', data: {} }], { expectedVersion: 'no_stream' });
      const sub = store.subscribe({ from: null, onBatch: async () => Promise.reject(new Error('handler failed')) });
      let error: unknown;
      await sub.done.catch((err: unknown) => (error = err));
      expect((error as Error).message).to.equal('handler failed');
    });
  });
}
