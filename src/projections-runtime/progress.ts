import type { Pool } from 'pg';
import { comparePositions, type EventStore, type GlobalPosition } from '../eventstore/port';
import { readCheckpoint, type ConsumerRunner } from './runner';

/**
 * A read model a request needs had not caught up within the wait (PROJECTION_WAIT_MS): the caller
 * should retry. By default the message says a write was recorded and only its answer is missing
 * (retry the read, or the write where it is idempotent); a request refused before it wrote
 * anything says so in its own `message`.
 */
export class ReadModelBehindError extends Error {
  constructor(
    readonly what: string,
    message = `${what} was recorded, but its view is still catching up; retry shortly`,
  ) {
    super(message);
    this.name = 'ReadModelBehindError';
  }
}

/**
 * Read-your-writes: a write waits until the consumers it affects have folded its position, so a
 * GET after a successful POST never shows the world before it. A consumer run by this process is
 * watched in memory; one run by another gateway instance is polled in its checkpoint row.
 */
export class ConsumerProgress {
  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
    private readonly runners: ReadonlyMap<string, ConsumerRunner>,
    private readonly pollMs = 20,
  ) {}

  /** Resolves true once every named consumer reached `position`, false after timeoutMs. */
  async waitFor(position: GlobalPosition, names: readonly string[], timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    return this.store.expedite(async () => {
      for (const name of names) {
        if (!(await this.waitForOne(position, name, deadline))) return false;
      }
      return true;
    });
  }

  /**
   * The reading side of read-your-writes: waits until the named consumers have folded everything
   * already appended to one stream. Hot paths (reservations, settlements) append without waiting
   * and their readers call this instead, so only a reader pays for freshness.
   */
  async waitForStream(streamId: string, names: readonly string[], timeoutMs: number): Promise<boolean> {
    const head = await this.store.streamHead(streamId);
    return head === null || this.waitFor(head.position, names, timeoutMs);
  }

  /**
   * The reading side of read-your-writes for a read over many streams: waits until the named
   * consumers have folded every event committed so far (EventStore.committedHead).
   */
  async waitForCommitted(names: readonly string[], timeoutMs: number): Promise<boolean> {
    const head = await this.store.committedHead();
    return head === null || this.waitFor(head, names, timeoutMs);
  }

  private async waitForOne(position: GlobalPosition, name: string, deadline: number): Promise<boolean> {
    const runner = this.runners.get(name);
    for (;;) {
      const reached = runner?.localPosition ?? (await readCheckpoint(this.pool, name));
      if (reached && comparePositions(reached, position) >= 0) return true;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(this.pollMs, remaining));
        runner?.once('advanced', done);
        function done(): void {
          clearTimeout(timer);
          runner?.off('advanced', done);
          resolve();
        }
      });
    }
  }
}
