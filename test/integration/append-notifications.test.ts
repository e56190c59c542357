import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { PoolClient } from 'pg';
import type { Database } from '../../src/db/database';
import { migrate } from '../../src/db/migrations';
import type { RecordedEvent } from '../../src/eventstore/port';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { ALL_MIGRATIONS } from '../../src/gateway';
import { createTestDatabase } from '../support/database';
import { waitFor } from '../support/wait';

/**
 * A process notifies subscribers of its appends at most once per subscription window
 * (AppendNotifier): its own subscribers are woken directly by the appends it leaves quiet, the
 * other processes' by one notification sent after those appends have committed. Each store below
 * has its own listening connection, as a process does. The appender's clock stands still and
 * every poll is an hour away, so only the notifications under test can deliver anything.
 */
describe('PostgreSQL appends: one notification per window @integration', () => {
  const HOUR_MS = 3_600_000;
  let db: Database;
  let counter: PoolClient;
  /** The appends' notifications the counting connection got, and the markers sent to count them. */
  let notifications = 0;
  let markers = 0;
  const open: { close(): Promise<void> }[] = [];

  before(async () => {
    db = await createTestDatabase(20);
    await migrate(db.pool, ALL_MIGRATIONS);
    counter = await db.pool.connect();
    counter.on('notification', (n) => (n.payload === 'marker' ? markers++ : notifications++));
    await counter.query('LISTEN es_appended');
  });
  after(async () => {
    await counter.query('UNLISTEN es_appended');
    counter.release(true);
    await db.close();
  });
  afterEach(async () => {
    for (const closable of open.splice(0).reverse()) await closable.close();
  });

  /** A store whose clock stands at 0: after its first append, every append of the window is quiet. */
  function appender(windowMs: number): PostgresEventStore {
    const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: HOUR_MS, batchWindowMs: windowMs, now: () => 0 });
    open.push(store);
    return store;
  }

  /** Another store's subscription from the log's head, as another process would run it. */
  async function watcher(): Promise<{ seen: RecordedEvent[]; store: PostgresEventStore }> {
    const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: HOUR_MS, batchWindowMs: 2 });
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribe({ from: await store.headPosition(), onBatch: async (batch) => void seen.push(...batch) });
    open.push(store, subscription);
    return { seen, store };
  }

  /**
   * The appends' notifications counted so far, every one committed before now included:
   * notifications reach a listener in commit order, so once a marker sent now has arrived, so has
   * every notification committed before it (a previous test's closing one too).
   */
  async function notificationsNow(): Promise<number> {
    const marked = markers;
    await db.pool.query("SELECT pg_notify('es_appended', 'marker')");
    await waitFor('the marker notification', async () => markers > marked);
    return notifications;
  }

  async function notificationsSince(before: number): Promise<number> {
    return (await notificationsNow()) - before;
  }

  it('wakes its own subscribers for an append it left quiet, without a notification', async () => {
    const store = appender(HOUR_MS);
    const seen: RecordedEvent[] = [];
    open.push(store.subscribe({ from: await store.headPosition(), onBatch: async (batch) => void seen.push(...batch) }));
    const s = `own-${randomUUID()}`;
    const before = await notificationsNow();
    // As a reader waiting on its own write does: deliveries come at once rather than after the (hour-long) window.
    await store.expedite(async () => {
      await store.append(s, [{ type: 'Notified', data: {} }], { expectedVersion: 'no_stream' });
      await waitFor('the notified append', async () => seen.some((e) => e.type === 'Notified'));
      await store.append(s, [{ type: 'Quiet', data: {} }], { expectedVersion: 0 });
      await waitFor('the quiet append', async () => seen.some((e) => e.type === 'Quiet'));
    });
    expect(await notificationsSince(before), 'notifications of the two appends').to.equal(1);
  });

  it('wakes other processes with one notification for the appends it left quiet, sent once they committed', async () => {
    const store = appender(HOUR_MS);
    const other = await watcher();
    const s = `other-${randomUUID()}`;
    const before = await notificationsNow();
    for (let n = 0; n < 5; n++) await store.append(s, [{ type: `E${n}`, data: { n } }], { expectedVersion: n === 0 ? 'no_stream' : n - 1 });
    expect(await notificationsSince(before), 'one notification for five appends so far').to.equal(1);
    // The window is an hour: closing the store sends what the quiet appends wait on.
    await store.close();
    expect(await notificationsSince(before), 'and one for the four left quiet').to.equal(2);
    await waitFor('all five appends in the other process', async () => other.seen.filter((e) => e.streamId === s).length === 5);
    expect(other.seen.filter((e) => e.streamId === s).map((e) => e.type)).to.deep.equal(['E0', 'E1', 'E2', 'E3', 'E4']);
  });

  it('sends the notification of the quiet appends by itself at the end of the window', async () => {
    const store = appender(20);
    const other = await watcher();
    const s = `trailing-${randomUUID()}`;
    const before = await notificationsNow();
    await store.append(s, [{ type: 'First', data: {} }], { expectedVersion: 'no_stream' });
    await waitFor('the first append in the other process', async () => other.seen.some((e) => e.streamId === s));
    await store.append(s, [{ type: 'Quiet', data: {} }], { expectedVersion: 0 });
    // Nothing closes the store: only the notification at the end of the window can wake the other.
    await waitFor('the notification of the quiet append', async () => (await notificationsSince(before)) === 2);
    await waitFor('the quiet append in the other process', async () => other.seen.some((e) => e.streamId === s && e.type === 'Quiet'));
  });

  it('sends the pending notification at once for a reader waiting on its writes (expedite)', async () => {
    const store = appender(HOUR_MS);
    const other = await watcher();
    const s = `waited-${randomUUID()}`;
    await store.append(s, [{ type: 'First', data: {} }], { expectedVersion: 'no_stream' });
    await waitFor('the first append in the other process', async () => other.seen.some((e) => e.streamId === s));
    await store.append(s, [{ type: 'Quiet', data: {} }], { expectedVersion: 0 });
    // The window is an hour: only the waiting reader can have the other process woken now.
    await store.expedite(() => waitFor('the quiet append in the other process', async () => other.seen.some((e) => e.streamId === s && e.type === 'Quiet')));
  });

  it('leaves the notification to the next append when the one that was to send it appended nothing', async () => {
    const store = appender(HOUR_MS);
    const s = `conflict-${randomUUID()}`;
    const before = await notificationsNow();
    const refused = await store.append(s, [{ type: 'Refused', data: {} }], { expectedVersion: 3 }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused, 'a version conflict').to.be.instanceOf(Error);
    await store.append(s, [{ type: 'Appended', data: {} }], { expectedVersion: 'no_stream' });
    expect(await notificationsSince(before), 'the append that did append notified').to.equal(1);
  });

  it('notifies for every append when the window is a few ms (a trailing notification would save nothing)', async () => {
    const store = appender(2);
    const s = `short-${randomUUID()}`;
    const before = await notificationsNow();
    for (let n = 0; n < 3; n++) await store.append(s, [{ type: `E${n}`, data: {} }], { expectedVersion: n === 0 ? 'no_stream' : n - 1 });
    expect(await notificationsSince(before)).to.equal(3);
  });

  it('leaves a batch across streams quiet within the window, and notifies for it after', async () => {
    const store = appender(HOUR_MS);
    const other = await watcher();
    const [a, b] = [`batch-a-${randomUUID()}`, `batch-b-${randomUUID()}`];
    const before = await notificationsNow();
    await store.append(a, [{ type: 'Opening', data: {} }], { expectedVersion: 'no_stream' });
    const outcomes = await store.appendMany([
      { streamId: a, events: [{ type: 'A', data: {} }], expectedVersion: 0 },
      { streamId: b, events: [{ type: 'B', data: {} }], expectedVersion: 'no_stream' },
    ]);
    expect(outcomes.every((o) => !(o instanceof Error))).to.equal(true);
    expect(await notificationsSince(before), 'the opening append only').to.equal(1);
    await store.close();
    expect(await notificationsSince(before), 'and one for the batch').to.equal(2);
    await waitFor('the batch in the other process', async () => other.seen.filter((e) => e.streamId === a || e.streamId === b).length === 3);
  });
});
