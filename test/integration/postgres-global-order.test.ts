import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Database } from '../../src/db/database';
import { migrate } from '../../src/db/migrations';
import { comparePositions, type RecordedEvent } from '../../src/eventstore/port';
import { PostgresEventStore, readPageWith } from '../../src/eventstore/postgres/store';
import { ALL_MIGRATIONS } from '../../src/gateway';
import { countingPool, LOG_READ } from '../support/counting-pool';
import { createTestDatabase } from '../support/database';
import { waitFor } from '../support/wait';
import { readToEnd } from '../support/event-log';

describe('PostgreSQL global log: no event is skipped by a reader @integration', () => {
  let db: Database;
  let store: PostgresEventStore;

  before(async () => {
    db = await createTestDatabase(40);
    await migrate(db.pool, ALL_MIGRATIONS);
    store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 50 });
  });
  after(async () => {
    await store.close();
    await db.close();
  });

  it('does not advance past a transaction that is still open when a later one commits', async () => {
    const slow = `slow-${randomUUID()}`;
    const fast = `fast-${randomUUID()}`;
    const seen: RecordedEvent[] = [];
    // Its own store on a counting pool, to know how often the subscriber has looked at the log.
    const reads = countingPool(db.pool, LOG_READ);
    const watched = new PostgresEventStore({ pool: reads.pool, pollIntervalMs: 50 });
    const subscription = watched.subscribe({ from: await store.headPosition(), onBatch: async (batch) => void seen.push(...batch) });

    const open = await db.pool.connect();
    try {
      await open.query('BEGIN');
      // Takes its sequence position and transaction id now, commits only later.
      await open.query(`SELECT * FROM es_append($1, 'no_stream', NULL, $2, $3, $4, $5)`, [slow, [randomUUID()], ['Slow'], ['{}'], ['{}']]);
      await store.append(fast, [{ type: 'Fast', data: {} }], { expectedVersion: 'no_stream' });

      // Five reads of the log since the fast append (its notification, then the held-back retries):
      // each one a chance to wrongly advance past the open transaction.
      const readsBefore = reads.count();
      await waitFor('five reads of the log', async () => reads.count() - readsBefore >= 5);
      expect(seen.map((e) => e.type), 'nothing is delivered past the open transaction').to.deep.equal([]);
      expect((await store.readAll(null, 10_000)).some((e) => e.streamId === fast), 'readAll holds back too').to.equal(false);
      expect((await readPageWith(db.pool, null, 0)).heldBack, 'the committed event is known to be held back').to.equal(true);

      await open.query('COMMIT');
    } finally {
      // Destroyed rather than returned: a test failing mid-transaction must not leave it open for the next.
      open.release(true);
    }
    await waitFor('both events', async () => seen.length >= 2);
    await subscription.close();
    await watched.close();
    expect(seen.map((e) => e.type)).to.deep.equal(['Slow', 'Fast']);
    expect((await readPageWith(db.pool, null, 0)).heldBack, 'nothing is held back once the open transaction ended').to.equal(false);
  });

  it('re-reads behind a holder that appends nothing, whose commit notifies no one, and delivers once it ends', async () => {
    const fast = `fast-${randomUUID()}`;
    const seen: RecordedEvent[] = [];
    // A fallback poll of an hour: only the held-back re-reads can deliver the event.
    const reads = countingPool(db.pool, LOG_READ);
    const watched = new PostgresEventStore({ pool: reads.pool, pollIntervalMs: 3_600_000 });
    const subscription = watched.subscribe({ from: await store.headPosition(), onBatch: async (batch) => void seen.push(...batch) });
    // A transaction that appends nothing (a projection's, an audit's, another database's).
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_current_xact_id()');
      const readsBefore = reads.count();
      await store.append(fast, [{ type: 'Fast', data: {} }], { expectedVersion: 'no_stream' });
      // The notified read, then re-reads: each found the append held back.
      await waitFor('three reads since the append', async () => reads.count() - readsBefore >= 3);
      expect(seen, 'held back until the holder ends').to.deep.equal([]);
      await holder.query('COMMIT');
      await waitFor('the event, long before the fallback poll', async () => seen.length >= 1, 30_000);
      expect(seen.map((e) => e.streamId)).to.deep.equal([fast]);
    } finally {
      holder.release(true);
      await subscription.close();
      await watched.close();
    }
  });

  it('names as the committed head an event that a transaction still open holds back from readers, so a read-your-writes wait on it waits for that event', async () => {
    const fast = `fast-${randomUUID()}`;
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_current_xact_id()');
      const appended = await store.append(fast, [{ type: 'Fast', data: {} }], { expectedVersion: 'no_stream' });
      const [event] = await store.readStream(fast);
      expect(await store.committedHead(), 'the committed head is the event just appended').to.deep.equal(event!.position);
      const readable = await store.headPosition();
      expect(readable === null || comparePositions(readable, event!.position) < 0, 'the readable head is held back before it').to.equal(true);
      expect(appended.position).to.deep.equal(event!.position);
      await holder.query('COMMIT');
    } finally {
      holder.release(true);
    }
  });

  it('under many concurrent appenders, every subscriber sees exactly the committed set, once each, in stream order', async function () {
    this.timeout(120_000);
    const prefix = `rand-${randomUUID().slice(0, 8)}`;
    const streams = Array.from({ length: 8 }, (_, i) => `${prefix}-${i}`);
    // Three subscribers, two of them with the same page size (so they share reads) and a slow one.
    const from = await store.headPosition();
    const seenBy: RecordedEvent[][] = [[], [], []];
    const subscriptions = [37, 37, 11].map((batchSize, n) =>
      store.subscribe({
        from,
        batchSize,
        onBatch: async (batch) => {
          if (n === 2) await new Promise((r) => setTimeout(r, Math.random() * 5));
          seenBy[n]!.push(...batch.filter((e) => e.streamId.startsWith(prefix)));
        },
      }),
    );
    const seen = seenBy[0]!;

    const committed = new Set<string>();
    let rolledBack = 0;
    // 12 writers, each appending 40 times to random streams with 'any', some inside transactions
    // that are held open for a random time and some rolled back.
    await Promise.all(
      Array.from({ length: 12 }, async (_, writer) => {
        for (let i = 0; i < 40; i++) {
          const streamId = streams[Math.floor(Math.random() * streams.length)]!;
          const id = randomUUID();
          const client = await db.pool.connect();
          try {
            await client.query('BEGIN');
            await client.query(`SELECT * FROM es_append($1, 'any', NULL, $2, $3, $4, $5)`, [streamId, [id], ['Rand'], [JSON.stringify({ writer, i })], ['{}']]);
            if (Math.random() < 0.3) await new Promise((r) => setTimeout(r, Math.random() * 15));
            if (Math.random() < 0.1) {
              await client.query('ROLLBACK');
              rolledBack++;
            } else {
              await client.query('COMMIT');
              committed.add(id);
            }
          } finally {
            client.release();
          }
        }
      }),
    );
    // A last event after all the others: once every subscriber has it, whatever they would deliver
    // before it (a duplicate, a late event) has been delivered too, since the log is read in order.
    const end = randomUUID();
    await store.append(`${prefix}-end`, [{ id: end, type: 'End', data: {} }], { expectedVersion: 'no_stream' });
    await waitFor('every subscriber at the end', async () => seenBy.every((seenHere) => seenHere.some((e) => e.id === end)), 20_000);
    await Promise.all(subscriptions.map((subscription) => subscription.close()));
    for (const seenHere of seenBy) expect(seenHere.pop()!.id, 'the last event is the end marker').to.equal(end);
    expect(seenBy[1]!.map((e) => e.id), 'the subscriber sharing its reads').to.deep.equal(seen.map((e) => e.id));
    expect(seenBy[2]!.map((e) => e.id), 'the slow subscriber').to.deep.equal(seen.map((e) => e.id));

    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size, 'no duplicates').to.equal(ids.length);
    expect(new Set(ids)).to.deep.equal(committed);
    expect(rolledBack).to.be.greaterThan(0);
    for (const s of streams) {
      const revisions = seen.filter((e) => e.streamId === s).map((e) => e.revision);
      expect(revisions, `stream ${s} in order without gaps`).to.deep.equal(revisions.map((_, i) => i));
    }
    const all = (await readToEnd(store)).filter((e) => e.streamId.startsWith(prefix) && e.id !== end).map((e) => e.id);
    expect(all).to.deep.equal(ids);
  });
});
