import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

/** The window while someone waits: short, still coalescing the notifications of one commit burst. */
const URGENT_WINDOW_MS = 2;

/**
 * One dedicated connection that LISTENs on a channel and fans notifications out to in-process
 * callbacks. Bursts of notifications (one per append) are coalesced into one callback per
 * window (`windowMs` after the first of them), or at once while someone waits on the work the
 * callbacks do (`expedite`). If the connection drops it reconnects; subscribers also poll slowly,
 * so a notification lost in between delays an event by at most one poll interval.
 */
export class NotificationListener {
  private client: PoolClient | null = null;
  private connecting: Promise<void> | null = null;
  private readonly callbacks = new Set<() => void>();
  private pending: NodeJS.Timeout | null = null;
  private closed = false;
  /** Callers inside expedite(): while any, notifications are delivered without the window. */
  private urgent = 0;
  /**
   * Counts the notification rounds delivered. Work started after round n has seen every append
   * notified up to n: the store shares a read among callers of the same round (see
   * PostgresEventStore.readPageForSubscription), never across rounds.
   */
  generation = 0;
  /**
   * The payload of this process's own notifications that stand for appends it has already
   * delivered here (AppendNotifier): ignored when they come back, not a second round.
   */
  readonly ownPayload = randomUUID();

  constructor(
    private readonly pool: Pool,
    private readonly channel: string,
    /** How long notifications gather before the callbacks run (unless someone waits). */
    readonly windowMs = URGENT_WINDOW_MS,
    /** Told when the listening connection is lost (it is whenever the server goes). */
    private readonly onConnectionLost: () => void = () => undefined,
  ) {}

  /**
   * An append of this process committed without a notification of its own (AppendNotifier):
   * delivered to this process's callbacks as a notification from the server would be.
   */
  appendedHere(): void {
    this.schedule();
  }

  /** Runs `work` with notifications delivered at once; one already waiting out its window goes now. */
  async expedite<T>(work: () => Promise<T>): Promise<T> {
    this.urgent++;
    if (this.pending) this.deliverSoon();
    try {
      return await work();
    } finally {
      this.urgent--;
    }
  }

  onNotify(callback: () => void): () => void {
    this.callbacks.add(callback);
    void this.ensureConnected();
    return () => this.callbacks.delete(callback);
  }

  private ensureConnected(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    try {
      const client = await this.pool.connect();
      client.on('notification', (message) => {
        if (message.payload !== this.ownPayload) this.schedule();
      });
      client.on('error', () => this.drop(client));
      await client.query(`LISTEN ${this.channel}`);
      if (this.closed) {
        client.release(true);
        return;
      }
      this.client = client;
      this.schedule(); // anything appended while we were not listening
    } catch {
      if (!this.closed) setTimeout(() => void this.ensureConnected(), 1000).unref();
    }
  }

  private drop(client: PoolClient): void {
    if (this.client !== client) return;
    this.client = null;
    client.release(true);
    this.onConnectionLost();
    if (!this.closed && this.callbacks.size > 0) setTimeout(() => void this.ensureConnected(), 200).unref();
  }

  private schedule(): void {
    // A notification can still arrive while close() waits for its UNLISTEN: no timer after close.
    if (this.pending || this.closed) return;
    this.pending = setTimeout(() => this.deliver(), this.urgent > 0 ? URGENT_WINDOW_MS : this.windowMs);
  }

  /** Replaces a pending delivery's window with the urgent one. */
  private deliverSoon(): void {
    clearTimeout(this.pending!);
    this.pending = setTimeout(() => this.deliver(), URGENT_WINDOW_MS);
  }

  private deliver(): void {
    this.pending = null;
    this.generation++;
    for (const cb of this.callbacks) cb();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pending) clearTimeout(this.pending);
    this.pending = null;
    await this.connecting;
    const client = this.client;
    this.client = null;
    if (client) {
      await client.query(`UNLISTEN ${this.channel}`).catch(() => undefined);
      client.release(true);
    }
  }
}
