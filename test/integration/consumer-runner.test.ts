import { expect } from 'chai';
import type { Database } from '../../src/db/database';
import { migrate } from '../../src/db/migrations';
import type { GlobalPosition, RecordedEvent } from '../../src/eventstore/port';
import { comparePositions } from '../../src/eventstore/port';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { ALL_MIGRATIONS } from '../../src/gateway';
import { createLogger } from '../../src/log';
import type { Consumer, EventConsumer } from '../../src/projections-runtime/consumer';
import { LeaseHolder } from '../../src/projections-runtime/leases';
import { CheckpointMoved, GroupCommitter } from '../../src/projections-runtime/checkpoint-commit';
import { ConsumerRunner, readCheckpoint, type ConsumerRunnerOptions } from '../../src/projections-runtime/runner';
import { countingPool, PAGE_READ } from '../support/counting-pool';
import { createTestDatabase } from '../support/database';
import { waitFor } from '../support/wait';

describe('consumers: shared log reads and lazy checkpoints @integration', () => {
  let db: Database;
  const logger = createLogger('silent');
  before(async () => {
    db = await createTestDatabase(20);
    await migrate(db.pool, ALL_MIGRATIONS);
  });
  after(async () => db.close());

  it('lets the subscriptions woken by one notification share their read of the log', async () => {
    const reads = countingPool(db.pool, PAGE_READ);
    // A slow fallback poll: every read below is a notification's.
    const store = new PostgresEventStore({ pool: reads.pool, pollIntervalMs: 30_000 });
    let asked = 0;
    const readPage = store.readPageForSubscription.bind(store);
    store.readPageForSubscription = (from, limit) => {
      asked++;
      return readPage(from, limit);
    };
    // After a marker of its own: the head below xmin could lie before an earlier test's last events.
    const from = (await store.append('shared-start', [{ type: 'Tick', data: {} }], { expectedVersion: 'any' })).position;
    const seen = Array.from({ length: 6 }, () => [] as RecordedEvent[]);
    const subscriptions = seen.map((mine) => store.subscribe({ from, onBatch: async (batch) => void mine.push(...batch) }));
    try {
      // The first append starts the subscriptions' readers from `from`; count from the second on.
      await store.append('shared-0', [{ type: 'Tick', data: {} }], { expectedVersion: 'any' });
      await waitFor('all saw the first', async () => seen.every((mine) => mine.length === 1));
      const askedBefore = asked;
      const readBefore = reads.count();
      for (let i = 1; i <= 5; i++) {
        // The first page read of the round waits until all six subscriptions have asked for it.
        const askedThisRound = asked;
        reads.hold();
        await store.append(`shared-${i}`, [{ type: 'Tick', data: {} }], { expectedVersion: 'any' });
        await waitFor(`all six woke for append ${i}`, async () => asked - askedThisRound >= 6);
        reads.release();
        await waitFor(`all saw append ${i}`, async () => seen.every((mine) => mine.length === i + 1));
      }
      // Unshared, each ask is a query of its own. Shared, the six asks of a round are one query
      // (re-reads behind another transaction, which the machine may run at any time, come on top).
      const sharedAway = asked - askedBefore - (reads.count() - readBefore);
      expect(sharedAway, `${asked - askedBefore} asks, ${reads.count() - readBefore} queries`).to.be.at.least(25);
      for (const mine of seen) expect(mine.map((e) => e.streamId)).to.deep.equal(['shared-0', 'shared-1', 'shared-2', 'shared-3', 'shared-4', 'shared-5']);
    } finally {
      // A failed wait must not leave reads held, or closing would wait on them for ever.
      reads.release();
      await Promise.all(subscriptions.map((s) => s.close()));
      await store.close();
    }
  });

  it('reads each event once for subscriptions that finish their batches at different times', async () => {
    const reads = countingPool(db.pool, PAGE_READ);
    const store = new PostgresEventStore({ pool: reads.pool, pollIntervalMs: 30_000 });
    const fast: RecordedEvent[] = [];
    const slow: RecordedEvent[] = [];
    let holdSlow = false;
    let releaseSlow: () => void = () => undefined;
    const from = (await store.append('tail-start', [{ type: 'Tick', data: {} }], { expectedVersion: 'any' })).position;
    const subscriptions = [
      store.subscribe({ from, onBatch: async (batch) => void fast.push(...batch) }),
      store.subscribe({
        from,
        onBatch: async (batch) => {
          slow.push(...batch);
          // The writing consumer: its batch takes until its transaction commits (here, until released).
          if (holdSlow) await new Promise<void>((resolve) => (releaseSlow = resolve));
        },
      }),
    ];
    try {
      holdSlow = true;
      await store.append('tail-0', [{ type: 'Tick', data: {} }], { expectedVersion: 'any' });
      await waitFor('both saw the first', async () => fast.length === 1 && slow.length === 1);
      holdSlow = false;
      const rowsBefore = reads.eventRows();
      // While the slow one still folds the first, the fast one reads on.
      await store.append('tail-1', [{ type: 'Tick', data: {} }], { expectedVersion: 'any' });
      await store.append('tail-2', [{ type: 'Tick', data: {} }, { type: 'Tick', data: {} }], { expectedVersion: 'any' });
      await waitFor('the fast one saw all', async () => fast.length === 4);
      releaseSlow();
      await waitFor('the slow one saw all', async () => slow.length === 4);
      // Three events appended since: read once, by the fast one; the slow one has them from memory.
      expect(reads.eventRows() - rowsBefore).to.equal(3);
      const order = ['tail-0', 'tail-1', 'tail-2', 'tail-2'];
      expect(fast.map((e) => e.streamId)).to.deep.equal(order);
      expect(slow.map((e) => e.id)).to.deep.equal(fast.map((e) => e.id));
    } finally {
      // A failed assertion must not leave the slow one's batch waiting, or closing would wait for ever.
      holdSlow = false;
      releaseSlow();
      await Promise.all(subscriptions.map((s) => s.close()));
      await store.close();
    }
  });

  it('lets the kept stretch of the log go when the listening connection is lost, as it is when the server goes', async () => {
    const reads = countingPool(db.pool, PAGE_READ);
    const store = new PostgresEventStore({ pool: reads.pool, pollIntervalMs: 30_000 });
    const seen: RecordedEvent[] = [];
    const from = (await store.append('lost-start', [{ type: 'Tick', data: {} }], { expectedVersion: 'any' })).position;
    const subscription = store.subscribe({ from, onBatch: async (batch) => void seen.push(...batch) });
    try {
      await store.append('lost-1', [{ type: 'Tick', data: {} }, { type: 'Tick', data: {} }], { expectedVersion: 'any' });
      await waitFor('the subscription saw both', async () => seen.length === 2);
      let rows = reads.eventRows();
      expect((await store.readPageForSubscription(from, 10)).events).to.have.length(2);
      expect(reads.eventRows() - rows, 'kept: nothing read again').to.equal(0);
      await db.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND query = 'LISTEN es_appended' AND pid <> pg_backend_pid()`,
      );
      await waitFor('the stretch let go: both read again', async () => {
        rows = reads.eventRows();
        const page = await store.readPageForSubscription(from, 10);
        return page.events.length === 2 && reads.eventRows() - rows === 2;
      });
    } finally {
      await subscription.close();
      await store.close();
    }
  });

  it('lets notified appends gather for the batching window, which a reader waiting on a read model cuts short', async () => {
    // A window and a fallback poll of an hour: only expedite delivers within the test.
    const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 3_600_000, batchWindowMs: 3_600_000 });
    const seen: RecordedEvent[][] = [];
    const from = (await store.append('gathered-start', [{ type: 'Tick', data: {} }], { expectedVersion: 'any' })).position;
    const subscription = store.subscribe({ from, onBatch: async (batch) => void seen.push(batch) });
    try {
      const appended = await Promise.all(
        ['gathered-0', 'gathered-1', 'gathered-2'].map((stream) => store.append(stream, [{ type: 'Tick', data: {} }], { expectedVersion: 'any' })),
      );
      const last = appended.map((a) => a.position).sort(comparePositions).at(-1)!;
      await store.expedite(() => waitFor('the appends delivered', async () => seen.flat().some((e) => comparePositions(e.position, last) === 0), 30_000));
      expect(seen.flat().map((e) => e.streamId).sort()).to.deep.equal(['gathered-0', 'gathered-1', 'gathered-2']);
    } finally {
      await subscription.close();
      await store.close();
    }
  });

  it('commits a consumer’s checkpoint with its own events at once, and after foreign events only later, in one transaction', async () => {
    const transactions = countingPool(db.pool, /FROM consumer_checkpoints WHERE name IN .* FOR UPDATE/);
    const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 30_000 });
    const applied: RecordedEvent[] = [];
    const consumer: EventConsumer = { name: 'test-lazy', eventTypes: new Set(['Mine']), apply: async (_tx, event) => void applied.push(event) };
    // A flush delay longer than the test: the foreign events' checkpoint is written only at stop.
    const runner = new ConsumerRunner(transactions.pool, store, consumer, logger, 'public', { checkpointFlushMs: 3_600_000 });
    const leases = new LeaseHolder(db.pool, logger);
    runner.start(leases);
    let stopped = false;
    try {
      await waitFor('the lease', async () => runner.isActive);
      const mine = (await store.append('lazy-mine', [{ type: 'Mine', data: { n: 0 } }], { expectedVersion: 'any' })).position;
      await waitFor('its own event folded and stored', async () => {
        const stored = await readCheckpoint(db.pool, 'test-lazy');
        return stored !== null && comparePositions(stored, mine) >= 0;
      });
      const before = transactions.count();
      let last = mine;
      for (let i = 0; i < 20; i++) last = (await store.append(`lazy-other-${i}`, [{ type: 'Other', data: {} }], { expectedVersion: 'any' })).position;
      // In memory at once (what this process's readers wait for)...
      await waitFor('the foreign events passed in memory', async () => runner.localPosition !== null && comparePositions(runner.localPosition, last) >= 0);
      // ...while the row still holds the last own event, and no transaction was spent on them.
      expect(comparePositions((await readCheckpoint(db.pool, 'test-lazy'))!, mine)).to.equal(0);
      expect(transactions.count() - before).to.equal(0);
      // Stopping stores the position in one transaction.
      await runner.stop();
      stopped = true;
      expect(comparePositions((await readCheckpoint(db.pool, 'test-lazy'))!, last)).to.equal(0);
      expect(transactions.count() - before, 'checkpoint transactions for 20 foreign appends').to.equal(1);
      expect(applied.map((e) => e.type)).to.deep.equal(['Mine']);
    } finally {
      if (!stopped) await runner.stop();
      await leases.close();
      await store.close();
    }
  });

  it('stores the checkpoint of foreign events shortly after, and replays from a reset checkpoint', async () => {
    // A short fallback poll: the resubscription after the reset reads without waiting for another append.
    const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 50 });
    const applied: RecordedEvent[] = [];
    const consumer: EventConsumer = { name: 'test-lazy-timer', eventTypes: new Set(['MineToo']), apply: async (_tx, event) => void applied.push(event) };
    const runner = new ConsumerRunner(db.pool, store, consumer, logger, 'public');
    const leases = new LeaseHolder(db.pool, logger);
    runner.start(leases);
    try {
      await waitFor('the lease', async () => runner.isActive);
      await store.append('lazy-timer-mine', [{ type: 'MineToo', data: { n: 0 } }], { expectedVersion: 'any' });
      const last = (await store.append('lazy-timer-other', [{ type: 'Other', data: {} }], { expectedVersion: 'any' })).position;
      await waitFor('the checkpoint row caught up', async () => {
        const stored = await readCheckpoint(db.pool, 'test-lazy-timer');
        return stored !== null && comparePositions(stored, last) >= 0;
      });

      // A reset checkpoint (a rebuild) is noticed: the consumer replays from the start.
      await db.pool.query("UPDATE consumer_checkpoints SET major = NULL, minor = NULL WHERE name = 'test-lazy-timer'");
      await store.append('lazy-timer-other-after-reset', [{ type: 'Other', data: {} }], { expectedVersion: 'any' });
      await waitFor('the replay', async () => applied.length === 2);
      expect(applied.map((e) => e.streamId)).to.deep.equal(['lazy-timer-mine', 'lazy-timer-mine']);
    } finally {
      await runner.stop();
      await leases.close();
      await store.close();
    }
  });

  describe('a group commit', () => {
    before(async () => {
      await db.pool.query('CREATE TABLE group_applied (consumer text NOT NULL, event_id text NOT NULL)');
    });

    /** A consumer that records each event it folds in group_applied, and throws on the types in `poison`. */
    function recording(name: string, poison: readonly string[] = []): EventConsumer {
      return {
        name,
        eventTypes: new Set(['Grouped', 'Poison']),
        async apply(tx, event) {
          if (poison.includes(event.type)) throw new Error(`${name} cannot fold ${event.type}`);
          await tx.query('INSERT INTO group_applied (consumer, event_id) VALUES ($1, $2)', [name, event.id]);
        },
      };
    }

    /**
     * The recorded event at `position`, once the log shows it: a read of the log stops below the
     * oldest transaction open on the server (another suite's, on a shared server), and may miss it for a while.
     */
    function readBack(store: PostgresEventStore, from: GlobalPosition | null, position: GlobalPosition): Promise<RecordedEvent> {
      return waitFor('the event in the log', async () => (await store.readAll(from, 100_000)).find((e) => comparePositions(e.position, position) === 0));
    }

    async function applied(consumer: string, eventId: string): Promise<number> {
      const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM group_applied WHERE consumer = $1 AND event_id = $2', [consumer, eventId]);
      return Number(rows[0]!.n);
    }

    /**
     * Runners for `consumers` sharing one GroupCommitter on a pool that counts transactions, named
     * by the consumers their opening statement locks. Their subscriptions deliver nothing by
     * themselves: `deliverToAll` appends an event and hands it to every runner in one go, as one
     * notification does (the test decides that they wake together, not the machine's timing). Its
     * outcomes come in the order the runners subscribed. The runners get `options` besides the committer.
     */
    async function withGroup(
      consumers: readonly Consumer[],
      test: (group: { transactions: () => string[]; deliverToAll: (type: string) => Promise<{ event: RecordedEvent; outcomes: PromiseSettledResult<void>[] }> }) => Promise<void>,
      options: Omit<ConsumerRunnerOptions, 'committer'> = {},
    ): Promise<void> {
      const opened: string[] = [];
      const counted = new Proxy(db.pool, {
        get(target, property) {
          if (property === 'connect') {
            return async () =>
              new Proxy(await target.connect(), {
                get(client, clientProperty) {
                  const value = Reflect.get(client, clientProperty) as unknown;
                  if (typeof value !== 'function') return value;
                  if (clientProperty !== 'query') return value.bind(client);
                  return (text: unknown, ...rest: unknown[]) => {
                    if (typeof text === 'string' && text.startsWith('BEGIN')) opened.push([...text.matchAll(/'([^']+)'/g)].map((m) => m[1]).sort().join(' '));
                    return value.call(client, text, ...rest);
                  };
                },
              });
          }
          const value = Reflect.get(target, property) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 30_000 });
      const deliveries: ((batch: RecordedEvent[]) => Promise<void>)[] = [];
      store.subscribe = (options) => {
        deliveries.push(options.onBatch);
        let close!: () => void;
        const done = new Promise<void>((resolve) => (close = resolve));
        return { done, close: async () => close() };
      };
      const committer = new GroupCommitter(counted, 'public', logger);
      const runners = consumers.map((consumer) => new ConsumerRunner(counted, store, consumer, logger, 'public', { ...options, committer }));
      const leases = new LeaseHolder(db.pool, logger);
      for (const runner of runners) runner.start(leases);
      try {
        await waitFor('every runner subscribed', async () => deliveries.length === runners.length);
        await test({
          transactions: () => [...opened],
          async deliverToAll(type) {
            const { position } = await store.append(`group-${type}`, [{ type, data: {} }], { expectedVersion: 'any' });
            const event = await readBack(store, null, position);
            return { event, outcomes: await Promise.allSettled(deliveries.map((onBatch) => onBatch([event]))) };
          },
        });
      } finally {
        await Promise.all(runners.map((runner) => runner.stop()));
        await leases.close();
        await store.close();
      }
    }

    it('starts consumers together: their leases in one statement, their checkpoints opened by one pair, each from where it stood', async () => {
      await db.pool.query("INSERT INTO consumer_checkpoints (name, major, minor) VALUES ('start-a', 1, 7), ('start-b', NULL, NULL)");
      const leaseQueries = countingPool(db.pool, /pg_try_advisory_lock/);
      const checkpointQueries = countingPool(db.pool, /consumer_checkpoints/);
      const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 30_000 });
      const from = new Map<string, GlobalPosition | null>();
      const committer = new GroupCommitter(checkpointQueries.pool, 'public', logger);
      const names = ['start-a', 'start-b', 'start-c'];
      // The statements made until the last runner subscribed (later ones, such as a checkpoint
      // flush, are not the start's).
      let atStart: { leases: number; checkpoints: number } | null = null;
      // Each runner subscribes through a store of its own, which notes the position it starts from.
      const runners = names.map((name) => {
        const own: PostgresEventStore = Object.create(store);
        own.subscribe = (options) => {
          from.set(name, options.from);
          if (from.size === names.length) atStart = { leases: leaseQueries.count(), checkpoints: checkpointQueries.count() };
          return store.subscribe(options);
        };
        return new ConsumerRunner(checkpointQueries.pool, own, recording(name), logger, 'public', { committer });
      });
      const leases = new LeaseHolder(leaseQueries.pool, logger);
      try {
        for (const runner of runners) runner.start(leases);
        const counted = await waitFor('every runner subscribed', async () => atStart);
        expect(counted.leases, 'lease statements').to.equal(1);
        expect(counted.checkpoints, 'checkpoint statements: the rows made, then read').to.equal(2);
        expect(from.get('start-a')).to.deep.equal({ major: 1n, minor: 7n });
        expect(from.get('start-b')).to.equal(null);
        expect(from.get('start-c')).to.equal(null);
        const { rows } = await db.pool.query<{ name: string }>("SELECT name FROM consumer_checkpoints WHERE name LIKE 'start-%' ORDER BY name");
        expect(rows.map((r) => r.name)).to.deep.equal(names);
      } finally {
        await Promise.all(runners.map((runner) => runner.stop()));
        await leases.close();
        await store.close();
      }
    });

    it('folds the batch of every consumer woken by one notification in one transaction, with their checkpoints', async () => {
      await withGroup([recording('group-a'), recording('group-b'), recording('group-c')], async ({ transactions, deliverToAll }) => {
        const { event, outcomes } = await deliverToAll('Grouped');
        expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled', 'fulfilled']);
        expect(transactions(), 'the transactions, by the consumers each locks').to.deep.equal(['group-a group-b group-c']);
        for (const name of ['group-a', 'group-b', 'group-c']) {
          expect(comparePositions((await readCheckpoint(db.pool, name))!, event.position), name).to.equal(0);
          expect(await applied(name, event.id), name).to.equal(1);
        }
      });
    });

    it('stores a trailing checkpoint in the transaction of the next batch the others fold, once it has trailed a quarter of the flush delay', async () => {
      let now = 0;
      // A flush delay longer than the test: its timer never stores the idle consumer's row, only a batch can.
      const flushMs = 3_600_000;
      const idle: EventConsumer = { name: 'ride-idle', eventTypes: new Set(['NeverAppended']), apply: async () => undefined };
      await withGroup(
        [recording('ride-active'), idle],
        async ({ transactions, deliverToAll }) => {
          await deliverToAll('Foreign');
          expect(transactions(), 'an event neither folds').to.deep.equal([]);
          now += flushMs / 4 - 1;
          await deliverToAll('Grouped');
          expect(transactions(), 'trailing for just under a quarter').to.deep.equal(['ride-active']);
          expect(await readCheckpoint(db.pool, 'ride-idle')).to.equal(null);
          now += 1;
          const { event, outcomes } = await deliverToAll('Grouped');
          expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled']);
          expect(transactions(), 'trailing for a quarter').to.deep.equal(['ride-active', 'ride-active ride-idle']);
          expect(comparePositions((await readCheckpoint(db.pool, 'ride-idle'))!, event.position)).to.equal(0);
          expect(comparePositions((await readCheckpoint(db.pool, 'ride-active'))!, event.position)).to.equal(0);
        },
        { checkpointFlushMs: flushMs, now: () => now },
      );
    });

    it('lets a failing consumer fail alone: the others commit, each event once', async () => {
      await withGroup([recording('poison-a'), recording('poison-b', ['Poison']), recording('poison-c')], async ({ transactions, deliverToAll }) => {
        const { event, outcomes } = await deliverToAll('Poison');
        // In the order the runners subscribed, which is theirs to choose.
        expect(outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : ['fulfilled'])).sort()).to.deep.equal([
          'Error: poison-b cannot fold Poison',
          'fulfilled',
          'fulfilled',
        ]);
        // The shared transaction (rolled back), then one for each consumer.
        expect(transactions().sort()).to.deep.equal(['poison-a', 'poison-a poison-b poison-c', 'poison-b', 'poison-c']);
        for (const name of ['poison-a', 'poison-c']) {
          expect(comparePositions((await readCheckpoint(db.pool, name))!, event.position), name).to.equal(0);
          expect(await applied(name, event.id), name).to.equal(1);
        }
        expect(await readCheckpoint(db.pool, 'poison-b')).to.equal(null);
        expect(await applied('poison-b', event.id)).to.equal(0);
      });
    });

    it('commits the others at once while one consumer’s row is locked elsewhere (a rebuild), and that one once the row is free', async () => {
      const committer = new GroupCommitter(db.pool, 'public', logger);
      const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 30_000 });
      const holder = await db.pool.connect();
      let held = true;
      try {
        const { position } = await store.append('busy-group', [{ type: 'Grouped', data: {} }], { expectedVersion: 'any' });
        const event = await readBack(store, null, position);
        const names = ['busy-a', 'busy-b', 'busy-c'];
        for (const name of names) await db.pool.query('INSERT INTO consumer_checkpoints (name) VALUES ($1)', [name]);
        await holder.query("BEGIN; SELECT 1 FROM consumer_checkpoints WHERE name = 'busy-b' FOR UPDATE");
        const commits = names.map((name) => committer.commit({ consumer: recording(name), expected: null, batch: [event], last: position }));
        // Waiting for busy-b's row with the others would never end while the row is held.
        await Promise.all([commits[0], commits[2]]);
        expect(await applied('busy-b', event.id)).to.equal(0);
        await holder.query('COMMIT');
        held = false;
        await commits[1];
        for (const name of names) {
          expect(comparePositions((await readCheckpoint(db.pool, name))!, position), name).to.equal(0);
          expect(await applied(name, event.id), name).to.equal(1);
        }
      } finally {
        if (held) await holder.query('ROLLBACK');
        holder.release();
        await store.close();
      }
    });

    it('refuses with CheckpointMoved only the requests whose row moved; the others of the group commit', async () => {
      const counted = countingPool(db.pool, /^BEGIN/);
      const transactions = counted.count;
      const committer = new GroupCommitter(counted.pool, 'public', logger);
      const store = new PostgresEventStore({ pool: db.pool, pollIntervalMs: 30_000 });
      try {
        const { position } = await store.append('moved-group', [{ type: 'Grouped', data: {} }], { expectedVersion: 'any' });
        const event = await readBack(store, null, position);
        const names = ['moved-a', 'moved-b', 'moved-c', 'moved-d'];
        for (const name of names.slice(0, 3)) await db.pool.query('INSERT INTO consumer_checkpoints (name) VALUES ($1)', [name]);
        // moved-b's row is somewhere its runner never left it; moved-d's is gone (its tables were recreated).
        await db.pool.query("UPDATE consumer_checkpoints SET major = 1, minor = 1 WHERE name = 'moved-b'");
        const before = transactions();
        const outcomes = await Promise.allSettled(names.map((name) => committer.commit({ consumer: recording(name), expected: null, batch: [event], last: position })));
        expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
        expect((outcomes[1] as PromiseRejectedResult).reason).to.be.instanceOf(CheckpointMoved);
        expect((outcomes[3] as PromiseRejectedResult).reason).to.be.instanceOf(CheckpointMoved);
        // The group's, then moved-d's alone: a row the group did not lock may be held elsewhere.
        expect(transactions() - before).to.equal(2);
        for (const name of ['moved-a', 'moved-c']) {
          expect(comparePositions((await readCheckpoint(db.pool, name))!, position), name).to.equal(0);
          expect(await applied(name, event.id), name).to.equal(1);
        }
        expect(await readCheckpoint(db.pool, 'moved-b')).to.deep.equal({ major: 1n, minor: 1n });
        expect(await applied('moved-b', event.id)).to.equal(0);
        expect(await applied('moved-d', event.id)).to.equal(0);
      } finally {
        await store.close();
      }
    });
  });
});
