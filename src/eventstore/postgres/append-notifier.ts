import type { Pool } from 'pg';
import type { NotificationListener } from './notification-listener';

/**
 * Below this window every append notifies: the trailing notification is a round trip of its own,
 * and with a window of a few ms there would be about one of them for every notification saved.
 */
const MIN_SPACING_MS = 10;

/**
 * Decides which appends notify subscribers at their commit (the es_appended NOTIFY): at most one
 * per subscription window from this process. Every subscriber, here and in other processes, lets
 * notifications gather for that window before it reads, so more than one in a window only costs:
 * each one wakes PostgreSQL's listening backends and every listening process (about 70 µs of CPU
 * across the three for each append, where one connection's requests notify twice each).
 *
 * An append left quiet wakes this process's subscribers directly once it has committed, and the
 * other processes get one notification at the end of the window, sent after the quiet appends it
 * stands for have committed. If the process dies before sending it, the other processes still
 * find those appends at their next poll: a notification only shortens the wait.
 */
export class AppendNotifier {
  /** When the last notification was decided on (this.now()), whether its append committed or not. */
  private lastNotified = -Infinity;
  private trailing: NodeJS.Timeout | null = null;
  /** The least time between two notifications; 0 when every append notifies. */
  private readonly spacingMs: number;

  constructor(
    private readonly pool: Pool,
    private readonly listener: NotificationListener,
    windowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.spacingMs = windowMs >= MIN_SPACING_MS ? windowMs : 0;
  }

  /** Whether the append about to be sent notifies at its commit; one that does not reports its commit to quietCommitted. */
  shouldNotify(): boolean {
    const now = this.now();
    if (now - this.lastNotified < this.spacingMs) return false;
    this.lastNotified = now;
    return true;
  }

  /** The append that was to notify appended nothing (it failed, or every stream's version check did): the next one may. */
  notUsed(): void {
    this.lastNotified = -Infinity;
  }

  /** A quiet append committed: this process's subscribers are woken now, the others' at the end of the window. */
  quietCommitted(): void {
    this.listener.appendedHere();
    if (this.trailing) return;
    this.trailing = setTimeout(() => void this.notifyNow(), Math.max(0, this.lastNotified + this.spacingMs - this.now()));
    // A process on its way out is not held up for it: the other processes poll.
    this.trailing.unref();
  }

  /** Sends the notification the quiet appends are waiting on now, if any are (on close, or for a reader waiting on its writes). */
  async flush(): Promise<void> {
    if (this.trailing) await this.notifyNow();
  }

  private async notifyNow(): Promise<void> {
    if (this.trailing) clearTimeout(this.trailing);
    this.trailing = null;
    this.lastNotified = this.now();
    // A failed notification (the database away) leaves the other processes to their poll.
    await this.pool.query("SELECT pg_notify('es_appended', $1)", [this.listener.ownPayload]).catch(() => undefined);
  }
}
