import type { Pool } from 'pg';
import { comparePositions, type EventStore, type GlobalPosition, type RecordedEvent } from '../eventstore/port';
import type { Logger } from '../log';
import { REPLAY_PAGE_EVENTS, type Projection } from './consumer';
import { CheckpointMoved } from './checkpoint-commit';
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
  let next = readAhead(store, null);
  while (replaying.length > 0) {
    const page = await next;
    if (page.length === 0) break;
    next = readAhead(store, page[page.length - 1]!.position);
    await Promise.all(
      [...replaying].map(async (runner) => {
        try {
          await runner.foldPage(page);
          progress?.advance(page.length);
        } catch (err) {
          if (!(err instanceof CheckpointMoved)) throw err;
          logger.info({ projection: runner.consumer.name }, 'another instance is replaying; waiting for it');
          replaying.splice(replaying.indexOf(runner), 1);
          replayedElsewhere.push(runner.consumer.name);
        }
      }),
    );
  }
  for (const name of replayedElsewhere) await waitForHead(pool, store, name);
}

/**
 * The page after `position`, read while the current one is folded. Its failure is handled once
 * the page is awaited (or, when the replay stops first, not at all) instead of ending the process
 * as an unhandled rejection in the meantime.
 */
function readAhead(store: EventStore, position: GlobalPosition | null): Promise<RecordedEvent[]> {
  const page = store.readAll(position, REPLAY_PAGE_EVENTS);
  page.catch(() => undefined);
  return page;
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
