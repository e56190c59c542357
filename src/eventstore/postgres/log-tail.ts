import { comparePositions, type GlobalPosition, type RecordedEvent } from '../port';

/** A page of the global log, and whether more lay committed past what that read could see. */
export interface LogPage {
  readonly events: RecordedEvent[];
  /**
   * Committed events exist that the read could not see, held back by an older transaction still
   * open (anywhere on the server). Decided in the page's own snapshot: a second query could find
   * the holder gone, and the events visible, after the page had missed them.
   */
  readonly heldBack: boolean;
}

/**
 * The latest stretch of the global log this process's subscriptions have read, kept so that a
 * subscription reading it later takes it from memory instead of reading the same rows again.
 *
 * Subscriptions woken together share one read, but they do not finish their batches together: a
 * consumer that folds nothing of a batch reads on at once when a notification came meanwhile
 * (under load, one always has), one that writes after its transaction commits. By then the first
 * has read the events in between, and the second read them again: every event crossed the wire
 * and was parsed about twice (4.01–4.08 event rows read a chat request of two events, 64
 * connections). A page holds only events below the snapshot's xmin, which no later commit can
 * join or precede, and it is complete from where it was read to its last event: so any stretch
 * read is final, and two stretches that touch make one. What is kept is one such stretch, `start`
 * (exclusive) to its last event.
 *
 * Final assumes that a commit, once seen, stays: true of the durable commits the gateway runs
 * with. A server that loses commits it had shown (`synchronous_commit` off and a crash, a
 * failover to a standby that lagged) would also reuse their transaction ids. The store forgets
 * the stretch when a page read fails and when its notification connection is lost (as it is
 * whenever the server goes), and a read that began before that is not kept. A loss of commits
 * that neither shows is not seen here, nor by the consumers that go on from their positions.
 */
export class LogTail {
  private events: RecordedEvent[] = [];
  /** The position the first kept event follows (null: the start of the log); undefined before any read is kept. */
  private start: GlobalPosition | null | undefined = undefined;
  /** Counts the times the stretch was let go: a page read before the latest is not kept. */
  private forgotten = 0;

  /** `capacity`: the most events kept; the oldest go first. */
  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`a log tail keeps at least one event (${capacity})`);
  }

  /** How many events are kept (at most the capacity). */
  get size(): number {
    return this.events.length;
  }

  /**
   * A page of at most `limit` events after `from`: the kept events after it, and what `read`
   * gives past them (read from their end), or `read` alone when `from` lies outside the stretch.
   * As fresh as `read` from `from` itself, unless the kept events fill the page: then no read is
   * needed, since its reader reads on at once.
   */
  async page(from: GlobalPosition | null, limit: number, read: (from: GlobalPosition | null, limit: number) => Promise<LogPage>): Promise<LogPage> {
    const kept = this.after(from, limit);
    if (kept === null) return read(from, limit);
    if (kept.events.length === limit) return { events: kept.events, heldBack: false };
    const rest = await read(kept.end, limit);
    const events = kept.events.concat(rest.events);
    // A page cut short is full: its reader reads on at once, whatever lies held back.
    return events.length > limit ? { events: events.slice(0, limit), heldBack: false } : { events, heldBack: rest.heldBack };
  }

  /**
   * Lets the kept stretch go (the server may not be the one that served it), and every page read
   * before now: pass `era` to remember, taken when the read began.
   */
  forget(): void {
    this.events = [];
    this.start = undefined;
    this.forgotten++;
  }

  /** What to pass to `remember` for a page read that begins now. */
  get era(): number {
    return this.forgotten;
  }

  /**
   * The kept events after `from`, at most `limit` of them, and the position they reach (`end`:
   * the last kept event's, from which a read continues them); null when `from` lies outside what
   * is kept.
   */
  after(from: GlobalPosition | null, limit: number): { events: RecordedEvent[]; end: GlobalPosition | null } | null {
    if (this.start === undefined || compare(from, this.start) < 0) return null;
    const end = this.end();
    if (compare(from, end) > 0) return null;
    const first = this.firstAfter(from);
    return { events: this.events.slice(first, first + limit), end };
  }

  /**
   * Keeps `events`, a page read after `from` that began in `era` (nothing, when the stretch was let
   * go since). A page that touches or overlaps what is kept extends it; one past it, with a gap
   * between, replaces it (the subscriptions have moved on); one that ends before it adds nothing.
   */
  remember(from: GlobalPosition | null, events: readonly RecordedEvent[], era: number): void {
    if (events.length === 0 || era !== this.forgotten) return;
    if (this.start === undefined || compare(from, this.end()) > 0) {
      this.start = from;
      this.events = events.slice();
    } else {
      const end = this.end();
      for (const event of events) if (compare(event.position, end) > 0) this.events.push(event);
    }
    const excess = this.events.length - this.capacity;
    if (excess > 0) {
      this.start = this.events[excess - 1]!.position;
      this.events = this.events.slice(excess);
    }
  }

  private end(): GlobalPosition | null {
    return this.events.length > 0 ? this.events[this.events.length - 1]!.position : (this.start as GlobalPosition | null);
  }

  /** The index of the first kept event after `from` (the events are in log order). */
  private firstAfter(from: GlobalPosition | null): number {
    let low = 0;
    let high = this.events.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compare(this.events[middle]!.position, from) <= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/** comparePositions, with null (the start of the log) before every position. */
function compare(a: GlobalPosition | null, b: GlobalPosition | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  return comparePositions(a, b);
}
