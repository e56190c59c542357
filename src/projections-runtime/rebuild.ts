import type { Pool } from 'pg';
import { comparePositions, type EventStore } from '../eventstore/port';
import type { Logger } from '../log';
import { REPLAY_PAGE_EVENTS, type Projection } from './consumer';
import { ConsumerRunner, readCheckpoint } from './runner';
import { resetProjection } from './tables';
import type { ProgressSink } from './progress-sink';

/**
 * Resets each projection and replays it to the head of the log. When a live gateway owns the
 * projection, its runner sees the moved checkpoint and replays it instead; then this waits.
 */
export async function rebuildProjections(
  pool: Pool,
  store: EventStore,
  projections: readonly Projection[],
  schema: string,
  logger: Logger,
  progress?: ProgressSink,
): Promise<void> {
  const head = await store.headPosition();
  progress?.setTotal(head && store.countEvents ? (await store.countEvents(head)) * projections.length : head ? null : 0);
  const replaying: ConsumerRunner[] = [];
  const replayedElsewhere: string[] = [];
  for (const projection of projections) {
    await resetProjection(pool, projection, schema);
    const runner = new ConsumerRunner(pool, store, projection, logger, schema);
    await runner.startCatchUp();
    // A live gateway that already replays from the reset is left to it.
    if (runner.caughtUpTo === null) replaying.push(runner);
    else replayedElsewhere.push(projection.name);
  }
  // The log is read once, in large pages, and every page is folded by every projection (each
  // commits its page with its checkpoint): the replay costs one read of the log, not one per
  // projection. The projections fold a page side by side, each on its own connection, while the
  // next page is read: one projection's rows are computed here while PostgreSQL writes another's.
  let next = store.readAll(null, REPLAY_PAGE_EVENTS);
  try {
    while (replaying.length > 0) {
      const page = await next;
      if (page.length === 0) break;
      next = store.readAll(page[page.length - 1]!.position, REPLAY_PAGE_EVENTS);
      await Promise.all(
        [...replaying].map(async (runner) => {
          try {
            await runner.foldPage(page);
            progress?.advance(page.length);
          } catch (err) {
            logger.info({ err, projection: runner.consumer.name }, 'another instance is replaying; waiting for it');
            replaying.splice(replaying.indexOf(runner), 1);
            replayedElsewhere.push(runner.consumer.name);
          }
        }),
      );
    }
  } finally {
    // A read ahead that is no longer wanted must not fail unheard.
    next.catch(() => undefined);
  }
  for (const name of replayedElsewhere) await waitForHead(pool, store, name);
}

async function waitForHead(pool: Pool, store: EventStore, name: string): Promise<void> {
  const head = await store.headPosition();
  if (!head) return;
  for (;;) {
    const at = await readCheckpoint(pool, name);
    if (at && comparePositions(at, head) >= 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
