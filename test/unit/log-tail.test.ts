import { expect } from 'chai';
import type { Pool } from 'pg';
import type { GlobalPosition, RecordedEvent } from '../../src/eventstore/port';
import { LogTail, type LogPage } from '../../src/eventstore/postgres/log-tail';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';

/** Positions of one transaction each (major) at positions 10, 20, … (minor), as the log numbers them. */
function at(n: number): GlobalPosition {
  return { major: BigInt(100 + n), minor: BigInt(n * 10) };
}

function event(n: number): RecordedEvent {
  return { id: `e${n}`, streamId: 's', revision: n, type: 'Tick', data: {}, metadata: {}, position: at(n), recordedAt: new Date(0) };
}

/** The events numbered `from` to `to`, as a page read after event `from - 1` returns them. */
function events(from: number, to: number): RecordedEvent[] {
  return Array.from({ length: to - from + 1 }, (_, i) => event(from + i));
}

function ids(kept: { events: readonly RecordedEvent[] } | null): string[] | null {
  return kept && kept.events.map((e) => e.id);
}

/**
 * A log of events 1 to `last`, read as the store reads it: a page after a position, remembered by
 * the tail (as the store's shared query does), `heldBack` as the test says. Records each read.
 */
function logOf(tail: LogTail, last: number, heldBack = false) {
  const reads: { from: GlobalPosition | null; limit: number }[] = [];
  const read = async (from: GlobalPosition | null, limit: number): Promise<LogPage> => {
    reads.push({ from, limit });
    const era = tail.era;
    const after = from === null ? 0 : Number(from.major) - 100;
    const page = events(after + 1, last).slice(0, limit);
    tail.remember(from, page, era);
    return { events: page, heldBack };
  };
  return { reads, read };
}

describe('LogTail: the stretch of the log the subscriptions have read', () => {
  it('keeps nothing before a page is remembered, and nothing for an empty page', () => {
    const tail = new LogTail(10);
    expect(tail.after(null, 5)).to.equal(null);
    tail.remember(at(1), [], tail.era);
    expect(tail.after(at(1), 5)).to.equal(null);
    expect(tail.size).to.equal(0);
  });

  it('gives the kept events after any position within the stretch, at most `limit`, and where the stretch ends', () => {
    const tail = new LogTail(10);
    tail.remember(at(2), events(3, 6), tail.era);
    expect(ids(tail.after(at(2), 10))).to.deep.equal(['e3', 'e4', 'e5', 'e6']);
    expect(ids(tail.after(at(4), 10))).to.deep.equal(['e5', 'e6']);
    expect(ids(tail.after(at(3), 2))).to.deep.equal(['e4', 'e5']);
    // At its end: nothing kept after it, and the read goes on from there.
    expect(tail.after(at(6), 10)).to.deep.equal({ events: [], end: at(6) });
    expect(tail.after(at(2), 10)!.end).to.deep.equal(at(6));
    // A position between two events (a checkpoint of another kind of read) is within it too.
    expect(ids(tail.after({ major: at(4).major, minor: at(4).minor + 1n }, 10))).to.deep.equal(['e5', 'e6']);
  });

  it('says nothing of positions before the stretch or past it', () => {
    const tail = new LogTail(10);
    tail.remember(at(2), events(3, 6), tail.era);
    expect(tail.after(at(1), 10)).to.equal(null);
    expect(tail.after(null, 10)).to.equal(null);
    expect(tail.after(at(7), 10)).to.equal(null);
  });

  it('treats null as the start of the log', () => {
    const tail = new LogTail(10);
    tail.remember(null, events(1, 3), tail.era);
    expect(ids(tail.after(null, 10))).to.deep.equal(['e1', 'e2', 'e3']);
    expect(ids(tail.after(at(1), 10))).to.deep.equal(['e2', 'e3']);
  });

  it('extends the stretch with a page read from its end, or one that overlaps it, without repeating an event', () => {
    const tail = new LogTail(20);
    tail.remember(at(0), events(1, 3), tail.era);
    tail.remember(at(3), events(4, 5), tail.era);
    tail.remember(at(2), events(3, 8), tail.era); // read from within it, by a reader that was behind
    tail.remember(at(0), events(1, 4), tail.era); // a page that ends within it adds nothing
    expect(ids(tail.after(at(0), 20))).to.deep.equal(['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8']);
    expect(tail.size).to.equal(8);
  });

  it('extends it with a page read from before its start that reaches past its end', () => {
    const tail = new LogTail(20);
    tail.remember(at(4), events(5, 6), tail.era);
    tail.remember(at(2), events(3, 8), tail.era);
    expect(ids(tail.after(at(4), 20))).to.deep.equal(['e5', 'e6', 'e7', 'e8']);
    // It still begins where it began: the events before are not known to be complete from any earlier point.
    expect(tail.after(at(3), 20)).to.equal(null);
  });

  it('starts over at a page read past its end: the events between were never read here', () => {
    const tail = new LogTail(20);
    tail.remember(at(0), events(1, 3), tail.era);
    tail.remember(at(6), events(7, 9), tail.era);
    expect(tail.after(at(3), 20)).to.equal(null);
    expect(ids(tail.after(at(6), 20))).to.deep.equal(['e7', 'e8', 'e9']);
  });

  it('keeps at most its capacity, letting the oldest go and moving its start past them', () => {
    const tail = new LogTail(3);
    tail.remember(at(0), events(1, 2), tail.era);
    tail.remember(at(2), events(3, 5), tail.era);
    expect(tail.size).to.equal(3);
    expect(ids(tail.after(at(2), 10))).to.deep.equal(['e3', 'e4', 'e5']);
    expect(tail.after(at(1), 10)).to.equal(null);
    // A page longer than the capacity keeps its last events.
    tail.remember(at(5), events(6, 12), tail.era);
    expect(ids(tail.after(at(9), 10))).to.deep.equal(['e10', 'e11', 'e12']);
    expect(tail.after(at(8), 10)).to.equal(null);
  });

  it('reads a page after a position outside the stretch from that position', async () => {
    const tail = new LogTail(10);
    const log = logOf(tail, 5);
    const page = await tail.page(at(1), 10, log.read);
    expect(ids(page)).to.deep.equal(['e2', 'e3', 'e4', 'e5']);
    expect(log.reads).to.deep.equal([{ from: at(1), limit: 10 }]);
  });

  it('gives the kept events and reads only past them, from the end of the stretch', async () => {
    const tail = new LogTail(10);
    tail.remember(at(0), events(1, 3), tail.era);
    const log = logOf(tail, 6, true);
    const page = await tail.page(at(1), 10, log.read);
    expect(ids(page)).to.deep.equal(['e2', 'e3', 'e4', 'e5', 'e6']);
    // What lies held back is as the read past the kept events found it.
    expect(page.heldBack).to.equal(true);
    expect(log.reads).to.deep.equal([{ from: at(3), limit: 10 }]);
    // The read extended the stretch: a later reader has all of it.
    expect(ids(tail.after(at(0), 10))).to.deep.equal(['e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
  });

  it('reads nothing when the kept events fill the page', async () => {
    const tail = new LogTail(10);
    tail.remember(at(0), events(1, 6), tail.era);
    const log = logOf(tail, 9, true);
    const page = await tail.page(at(2), 3, log.read);
    expect(ids(page)).to.deep.equal(['e3', 'e4', 'e5']);
    expect(page.heldBack).to.equal(false);
    expect(log.reads).to.deep.equal([]);
  });

  it('cuts the kept events and the read past them to the page, which is then full and holds nothing back', async () => {
    const tail = new LogTail(10);
    tail.remember(at(0), events(1, 3), tail.era);
    const log = logOf(tail, 9, true);
    const page = await tail.page(at(1), 4, log.read);
    expect(ids(page)).to.deep.equal(['e2', 'e3', 'e4', 'e5']);
    expect(page.heldBack).to.equal(false);
    expect(log.reads).to.deep.equal([{ from: at(3), limit: 4 }]);
  });

  it('keeps the several events of one transaction apart by their positions', () => {
    const tail = new LogTail(10);
    const oneTransaction = [1, 2, 3].map((n) => ({ ...event(n), position: { major: 200n, minor: BigInt(n) } }));
    tail.remember({ major: 199n, minor: 0n }, oneTransaction, tail.era);
    expect(ids(tail.after({ major: 200n, minor: 1n }, 10))).to.deep.equal(['e2', 'e3']);
    tail.remember({ major: 200n, minor: 2n }, [oneTransaction[2]!, { ...event(4), position: { major: 201n, minor: 4n } }], tail.era);
    expect(ids(tail.after({ major: 199n, minor: 0n }, 10))).to.deep.equal(['e1', 'e2', 'e3', 'e4']);
  });

  it('keeps its own list: the page it was given may change afterwards', () => {
    const tail = new LogTail(10);
    const page = events(1, 3);
    tail.remember(at(0), page, tail.era);
    page.pop();
    page.push(event(9));
    expect(ids(tail.after(at(0), 10))).to.deep.equal(['e1', 'e2', 'e3']);
  });

  it('forgets the stretch: every position is outside it until a page is remembered again', async () => {
    const tail = new LogTail(10);
    tail.remember(at(0), events(1, 3), tail.era);
    tail.forget();
    expect(tail.size).to.equal(0);
    expect(tail.after(at(0), 10)).to.equal(null);
    const log = logOf(tail, 3);
    expect(ids(await tail.page(at(1), 10, log.read))).to.deep.equal(['e2', 'e3']);
    expect(log.reads).to.deep.equal([{ from: at(1), limit: 10 }]);
  });

  it('keeps no page whose read began before the stretch was let go', () => {
    const tail = new LogTail(10);
    const era = tail.era;
    tail.forget();
    tail.remember(at(0), events(1, 3), era);
    expect(tail.after(at(0), 10)).to.equal(null);
    tail.remember(at(0), events(1, 3), tail.era);
    expect(ids(tail.after(at(0), 10))).to.deep.equal(['e1', 'e2', 'e3']);
  });

  it('reads from the position itself when it lies before the stretch or past it', async () => {
    const tail = new LogTail(10);
    tail.remember(at(3), events(4, 5), tail.era);
    const log = logOf(tail, 9);
    expect(ids(await tail.page(at(7), 10, log.read))).to.deep.equal(['e8', 'e9']);
    // That page, past the stretch, replaced it: the stretch now begins at 7.
    expect(ids(await tail.page(at(5), 10, log.read))).to.deep.equal(['e6', 'e7', 'e8', 'e9']);
    expect(log.reads).to.deep.equal([
      { from: at(7), limit: 10 },
      { from: at(5), limit: 10 },
    ]);
  });

  it('refuses a capacity below one event', () => {
    expect(() => new LogTail(0)).to.throw(/at least one event/);
  });
});

describe('PostgresEventStore: subscriptions read past what they have read', () => {
  /**
   * A pool that answers the page reads as PostgreSQL would over events 1 to `last` (nothing held
   * back), counts the event rows it returns, and fails its reads while `failing`.
   */
  function pagePool(last: number) {
    const state = { rows: 0, failing: false, last };
    const pool = {
      async query(config: { values: unknown[] }) {
        if (state.failing) throw new Error('connection terminated');
        const [limit, major] = config.values as [number, string?];
        const after = major === undefined ? 0 : Number(major) - 100;
        const page = events(after + 1, state.last).slice(0, limit);
        state.rows += page.length;
        const rows = page.map((e) => ({
          position: String(e.position.minor),
          tx_text: String(e.position.major),
          stream_id: e.streamId,
          revision: String(e.revision),
          event_id: e.id,
          type: e.type,
          data: e.data,
          metadata: e.metadata,
          recorded_at: e.recordedAt,
          held_back: false,
        }));
        return { rows: rows.length > 0 ? rows : [{ held_back: false }] };
      },
    };
    return { pool: pool as unknown as Pool, state };
  }

  it('reads each event once for readers at different places in the stretch, and lets the stretch go when a read fails', async () => {
    const { pool, state } = pagePool(5);
    const store = new PostgresEventStore({ pool });
    expect(ids(await store.readPageForSubscription(at(0), 10))).to.deep.equal(['e1', 'e2', 'e3', 'e4', 'e5']);
    state.last = 7;
    expect(ids(await store.readPageForSubscription(at(2), 10))).to.deep.equal(['e3', 'e4', 'e5', 'e6', 'e7']);
    expect(state.rows).to.equal(7);
    state.failing = true;
    let failed: unknown = null;
    await store.readPageForSubscription(at(3), 10).catch((err: unknown) => (failed = err));
    expect(String(failed)).to.match(/connection terminated/);
    state.failing = false;
    // Forgotten: read again from the database, all of it.
    expect(ids(await store.readPageForSubscription(at(3), 10))).to.deep.equal(['e4', 'e5', 'e6', 'e7']);
    expect(state.rows).to.equal(11);
  });

  it('fails every subscription that shared a failed read, and reads again for them after', async () => {
    const { pool, state } = pagePool(4);
    const store = new PostgresEventStore({ pool });
    expect(ids(await store.readPageForSubscription(at(0), 10))).to.deep.equal(['e1', 'e2', 'e3', 'e4']);
    state.failing = true;
    const outcomes = await Promise.allSettled([store.readPageForSubscription(at(1), 10), store.readPageForSubscription(at(2), 10)]);
    expect(outcomes.map((o) => o.status)).to.deep.equal(['rejected', 'rejected']);
    state.failing = false;
    expect(ids(await store.readPageForSubscription(at(2), 10))).to.deep.equal(['e3', 'e4']);
    expect(state.rows).to.equal(6);
  });
});
