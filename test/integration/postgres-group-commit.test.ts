import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Database } from '../../src/db/database';
import { migrate } from '../../src/db/migrations';
import { comparePositions, WrongExpectedVersionError, type AppendResult } from '../../src/eventstore/port';
import { PostgresEventStore, type StreamAppendOutcome } from '../../src/eventstore/postgres/store';
import { ALL_MIGRATIONS } from '../../src/gateway';
import { createTestDatabase } from '../support/database';
import { readToEnd, TRICKY_DATA } from '../support/event-log';
import { waitFor } from '../support/wait';

const stream = (name: string) => `${name}-${randomUUID()}`;
const event = (type: string) => ({ type, data: { type } });

function appended(outcome: StreamAppendOutcome | undefined): AppendResult {
  if (!outcome || outcome instanceof Error) throw new Error(`expected an append, got ${String(outcome)}`);
  return outcome;
}

describe('PostgreSQL group commit across streams @integration', () => {
  let db: Database;
  let store: PostgresEventStore;

  before(async () => {
    db = await createTestDatabase(20);
    await migrate(db.pool, ALL_MIGRATIONS);
    store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 50 });
  });
  after(async () => {
    await store.close();
    await db.close();
  });

  it('commits many streams in one transaction, and a stream whose expected version fails fails alone', async () => {
    const [a, conflicting, b] = [stream('a'), stream('conflicting'), stream('b')];
    await store.append(conflicting, [event('First')], { expectedVersion: 'no_stream' });
    const outcomes = await store.appendMany([
      { streamId: a, events: [event('A1'), event('A2')], expectedVersion: 'no_stream' },
      { streamId: conflicting, events: [event('Lost')], expectedVersion: 'no_stream' },
      { streamId: b, events: [event('B1')], expectedVersion: 'any' },
    ]);
    const [first, refused, third] = outcomes;
    expect(refused).to.be.instanceOf(WrongExpectedVersionError);
    expect((refused as WrongExpectedVersionError).actual).to.equal(0);
    expect(appended(first).nextExpectedVersion).to.equal(1);
    expect(appended(third).nextExpectedVersion).to.equal(0);
    expect(appended(first).position.major, 'one transaction').to.equal(appended(third).position.major);
    expect((await store.readStream(a)).map((e) => e.type)).to.deep.equal(['A1', 'A2']);
    expect((await store.readStream(b)).map((e) => e.type)).to.deep.equal(['B1']);
    expect((await store.readStream(conflicting)).map((e) => e.type)).to.deep.equal(['First']);
  });

  it('keeps each stream\'s data and metadata exactly, in order, in a batch', async () => {
    const [a, b] = [stream('data-a'), stream('data-b')];
    // Different data and counts per stream: each stream must get its own slice of the batch's events.
    const of = (prefix: string, data: readonly unknown[]) => data.map((d, n) => ({ type: `${prefix}${n}`, data: d, metadata: { requestId: `${prefix}"${n}\\` } }));
    const events = { [a]: of('A', TRICKY_DATA), [b]: of('B', [...TRICKY_DATA].reverse().slice(1)) };
    const outcomes = await store.appendMany([
      { streamId: a, events: events[a]!, expectedVersion: 'no_stream' },
      { streamId: b, events: events[b]!, expectedVersion: 'no_stream' },
    ]);
    expect(appended(outcomes[0]).position.major, 'one transaction').to.equal(appended(outcomes[1]).position.major);
    for (const s of [a, b]) {
      const read = await store.readStream(s);
      expect(read.map((e) => [e.type, e.data, e.metadata.requestId])).to.deep.equal(events[s]!.map((e) => [e.type, e.data, e.metadata.requestId]));
    }
  });

  it('applies two appends of one stream in one batch in the order given, each checked on the revision the other left', async () => {
    const s = stream('twice');
    const outcomes = await store.appendMany([
      { streamId: s, events: [event('One')], expectedVersion: 'no_stream' },
      { streamId: s, events: [event('Two')], expectedVersion: 0 },
      { streamId: s, events: [event('Stale')], expectedVersion: 0 },
    ]);
    expect(appended(outcomes[1]).nextExpectedVersion).to.equal(1);
    expect(outcomes[2]).to.be.instanceOf(WrongExpectedVersionError);
    expect((await store.readStream(s)).map((e) => e.type)).to.deep.equal(['One', 'Two']);
  });

  it('carries concurrent appends of different streams in shared transactions; a conflicting one among them fails alone', async () => {
    const grouped = new PostgresEventStore({ pool: db.pool, maxConcurrentCommits: 1 });
    try {
      const taken = stream('taken');
      await grouped.append(taken, [event('First')], { expectedVersion: 'no_stream' });
      const streams = Array.from({ length: 40 }, (_, i) => stream(`s${i}`));
      const results = await Promise.allSettled([
        ...streams.map((s) => grouped.append(s, [event('E')], { expectedVersion: 'no_stream' })),
        grouped.append(taken, [event('Lost')], { expectedVersion: 'no_stream' }),
      ]);
      const conflict = results.pop()!;
      expect(conflict.status).to.equal('rejected');
      expect((conflict as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedVersionError);
      const positions = results.map((r) => {
        expect(r.status).to.equal('fulfilled');
        return (r as PromiseFulfilledResult<AppendResult>).value.position;
      });
      const transactions = new Set(positions.map((p) => p.major));
      // With one commit at a time, the 40 appends made while the first one ran share the next.
      expect(transactions.size).to.be.lessThan(streams.length);
      expect((await grouped.readStream(taken)).map((e) => e.type)).to.deep.equal(['First']);
    } finally {
      await grouped.close();
    }
  });

  it('keeps every stream in revision order in the global log when batches over the same streams in opposite orders race', async () => {
    const streams = Array.from({ length: 6 }, (_, i) => stream(`race${i}`));
    const reversed = [...streams].reverse();
    // Batches that name the same streams in opposite orders: without one locking order they could deadlock.
    await Promise.all(
      Array.from({ length: 20 }, (_, round) =>
        store.appendMany((round % 2 === 0 ? streams : reversed).map((s) => ({ streamId: s, events: [event(`R${round}`)], expectedVersion: 'any' as const }))),
      ),
    );
    // Readers stop below the server's oldest open transaction, which another suite may hold.
    const ours = async () => (await readToEnd(store)).filter((e) => streams.includes(e.streamId));
    await waitFor('every batch readable', async () => (await ours()).length >= streams.length * 20);
    const log = await ours();
    expect(log).to.have.length(streams.length * 20);
    for (const s of streams) {
      const revisions = log.filter((e) => e.streamId === s).map((e) => e.revision);
      expect(revisions, `${s} in revision order`).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
    }
    for (let i = 1; i < log.length; i++) expect(comparePositions(log[i - 1]!.position, log[i]!.position)).to.equal(-1);
  });

  it('fails only the append at fault when a batch fails for another reason (a duplicate event id)', async () => {
    const grouped = new PostgresEventStore({ pool: db.pool, maxConcurrentCommits: 1 });
    try {
      const id = randomUUID();
      const [blocker, good, bad] = [stream('blocker'), stream('good'), stream('bad')];
      await store.append(stream('owner'), [{ id, type: 'Owner', data: {} }], { expectedVersion: 'no_stream' });
      const results = await Promise.allSettled([
        grouped.append(blocker, [event('Blocker')], { expectedVersion: 'no_stream' }),
        grouped.append(good, [event('Good')], { expectedVersion: 'no_stream' }),
        grouped.append(bad, [{ id, type: 'Duplicate', data: {} }], { expectedVersion: 'no_stream' }),
      ]);
      expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected']);
      expect((await store.readStream(good)).map((e) => e.type)).to.deep.equal(['Good']);
      expect(await store.readStream(bad)).to.deep.equal([]);
    } finally {
      await grouped.close();
    }
  });

  it('refuses event data JSON has no text for, alone and in a batch, appending nothing of it', async () => {
    const grouped = new PostgresEventStore({ pool: db.pool, maxConcurrentCommits: 1 });
    try {
      const [blocker, good, bad] = [stream('blocker'), stream('good'), stream('not-json')];
      const results = await Promise.allSettled([
        grouped.append(blocker, [event('Blocker')], { expectedVersion: 'no_stream' }),
        grouped.append(good, [event('Good')], { expectedVersion: 'no_stream' }),
        grouped.append(bad, [event('Fine'), { type: 'Function', data: () => 'not data' }], { expectedVersion: 'no_stream' }),
      ]);
      expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected']);
      expect(String((results[2] as PromiseRejectedResult).reason)).to.match(/event data must be JSON/);
      expect((await store.readStream(good)).map((e) => e.type)).to.deep.equal(['Good']);
      expect(await store.readStream(bad)).to.deep.equal([]);
    } finally {
      await grouped.close();
    }
  });

  it('sends appends as named statements, parsed once per connection, whatever their outcome', async () => {
    // One connection: every append, conflicting or not, goes through it.
    const single = await createTestDatabase(1);
    try {
      await migrate(single.pool, ALL_MIGRATIONS);
      const one = new PostgresEventStore({ pool: single.pool, pollIntervalMs: 50 });
      const s = stream('named');
      await one.append(s, [event('One')], { expectedVersion: 'no_stream' });
      await one.append(s, [event('Two')], { expectedVersion: 0 });
      const refused = await one.append(s, [event('Stale')], { expectedVersion: 0 }).catch((err: unknown) => err);
      expect(refused).to.be.instanceOf(WrongExpectedVersionError);
      const [first, conflict] = await one.appendMany([
        { streamId: stream('many'), events: [event('A')], expectedVersion: 'no_stream' },
        { streamId: s, events: [event('Stale')], expectedVersion: 0 },
      ]);
      expect(appended(first).nextExpectedVersion).to.equal(0);
      expect(conflict).to.be.instanceOf(WrongExpectedVersionError);
      expect((await one.readStream(s)).map((e) => e.type)).to.deep.equal(['One', 'Two']);
      const { rows } = await single.pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
      expect(rows.map((r) => r.name)).to.deep.equal(['es_append', 'es_append_batch']);
      await one.close();
    } finally {
      await single.close();
    }
  });
});
