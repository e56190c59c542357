import { expect } from 'chai';
import type { GlobalPosition, RecordedEvent } from '../../src/eventstore/port';
import { LogTail } from '../../src/eventstore/postgres/log-tail';

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

function ids(kept: { events: RecordedEvent[] } | null): string[] | null {
  return kept && kept.events.map((e) => e.id);
}

describe('LogTail: the stretch of the log the subscriptions have read', () => {
  it('keeps nothing before a page is remembered, and nothing for an empty page', () => {
    const tail = new LogTail(10);
    expect(tail.after(null, 5)).to.equal(null);
    tail.remember(at(1), []);
    expect(tail.after(at(1), 5)).to.equal(null);
    expect(tail.size).to.equal(0);
  });

  it('gives the kept events after any position within the stretch, at most `limit`, and where the stretch ends', () => {
    const tail = new LogTail(10);
    tail.remember(at(2), events(3, 6));
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
    tail.remember(at(2), events(3, 6));
    expect(tail.after(at(1), 10)).to.equal(null);
    expect(tail.after(null, 10)).to.equal(null);
    expect(tail.after(at(7), 10)).to.equal(null);
  });

  it('treats null as the start of the log', () => {
    const tail = new LogTail(10);
    tail.remember(null, events(1, 3));
    expect(ids(tail.after(null, 10))).to.deep.equal(['e1', 'e2', 'e3']);
    expect(ids(tail.after(at(1), 10))).to.deep.equal(['e2', 'e3']);
  });

  it('extends the stretch with a page read from its end, or one that overlaps it, without repeating an event', () => {
    const tail = new LogTail(20);
    tail.remember(at(0), events(1, 3));
    tail.remember(at(3), events(4, 5));
    tail.remember(at(2), events(3, 8)); // read from within it, by a reader that was behind
    tail.remember(at(0), events(1, 4)); // a page that ends within it adds nothing
    expect(ids(tail.after(at(0), 20))).to.deep.equal(['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8']);
    expect(tail.size).to.equal(8);
  });

  it('extends it with a page read from before its start that reaches past its end', () => {
    const tail = new LogTail(20);
    tail.remember(at(4), events(5, 6));
    tail.remember(at(2), events(3, 8));
    expect(ids(tail.after(at(4), 20))).to.deep.equal(['e5', 'e6', 'e7', 'e8']);
    // It still begins where it began: the events before are not known to be complete from any earlier point.
    expect(tail.after(at(3), 20)).to.equal(null);
  });

  it('starts over at a page read past its end: the events between were never read here', () => {
    const tail = new LogTail(20);
    tail.remember(at(0), events(1, 3));
    tail.remember(at(6), events(7, 9));
    expect(tail.after(at(3), 20)).to.equal(null);
    expect(ids(tail.after(at(6), 20))).to.deep.equal(['e7', 'e8', 'e9']);
  });

  it('keeps at most its capacity, letting the oldest go and moving its start past them', () => {
    const tail = new LogTail(3);
    tail.remember(at(0), events(1, 2));
    tail.remember(at(2), events(3, 5));
    expect(tail.size).to.equal(3);
    expect(ids(tail.after(at(2), 10))).to.deep.equal(['e3', 'e4', 'e5']);
    expect(tail.after(at(1), 10)).to.equal(null);
    // A page longer than the capacity keeps its last events.
    tail.remember(at(5), events(6, 12));
    expect(ids(tail.after(at(9), 10))).to.deep.equal(['e10', 'e11', 'e12']);
    expect(tail.after(at(8), 10)).to.equal(null);
  });

  it('refuses a capacity below one event', () => {
    expect(() => new LogTail(0)).to.throw(/at least one event/);
  });
});
