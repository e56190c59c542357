import type { Pool } from 'pg';
import { comparePositions, type EventStore } from '../eventstore/port';
import type { Logger } from '../log';
import type { Projection } from './consumer';
import { ConsumerRunner, readCheckpoint } from './runner';
import { resetProjection } from './tables';
import type { ProgressSink } from '../cli/progress';

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
  for (const projection of projections) {
    await resetProjection(pool, projection, schema);
    const runner = new ConsumerRunner(pool, store, projection, logger, schema);
    try {
      await runner.catchUp((events) => progress?.advance(events));
    } catch (err) {
      logger.info({ err, projection: projection.name }, 'another instance is replaying; waiting for it');
      await waitForHead(pool, store, projection.name);
    }
  }
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
