import type { Pool } from 'pg';
import { comparePositions, formatPosition, type EventStore } from '../eventstore/port';
import { storedPosition } from './checkpoint-commit';
import type { ConsumerRunner } from './runner';

export interface ConsumerStatus {
  readonly name: string;
  /** Last position folded, or null before the first event. */
  readonly position: string | null;
  /** Events of the log after that position, counted up to LAG_COUNT_LIMIT. */
  readonly behind: number;
  readonly behind_capped: boolean;
  /** How long the oldest event not yet folded has been in the log; 0 when caught up. */
  readonly lag_seconds: number;
  /** Whether this gateway process holds the consumer's lease. */
  readonly active_here: boolean;
  readonly updated_at: string | null;
}

const LAG_COUNT_LIMIT = 10_000;

/**
 * How far each consumer (read model or process manager) is behind the readable head of the log:
 * the operator's view of lag. A consumer held back by a long transaction shows events behind it
 * that do not shrink until that transaction ends.
 */
export async function consumerStatuses(pool: Pool, store: EventStore, runners: ReadonlyMap<string, ConsumerRunner>): Promise<{ head: string | null; consumers: ConsumerStatus[] }> {
  const head = await store.headPosition();
  const { rows } = await pool.query<{ name: string; major: string | null; minor: string | null; updated_at: Date }>(
    'SELECT name, major::text, minor::text, updated_at FROM consumer_checkpoints ORDER BY name',
  );
  const byName = new Map(rows.map((r) => [r.name, r]));
  const consumers: ConsumerStatus[] = [];
  for (const name of [...new Set([...runners.keys(), ...byName.keys()])].sort()) {
    const row = byName.get(name);
    // Here, the runner's own position: its checkpoint row may trail it by a moment (see ConsumerRunner.applyBatch).
    const stored = storedPosition(row);
    const position = runners.get(name)?.localPosition ?? stored;
    const caughtUp = head === null || (position !== null && comparePositions(position, head) >= 0);
    const pending = caughtUp ? [] : await store.readAll(position, LAG_COUNT_LIMIT + 1);
    const behind = pending.length;
    consumers.push({
      name,
      position: position ? formatPosition(position) : null,
      behind: Math.min(behind, LAG_COUNT_LIMIT),
      behind_capped: behind > LAG_COUNT_LIMIT,
      lag_seconds: pending[0] ? Math.max(0, (Date.now() - pending[0].recordedAt.getTime()) / 1000) : 0,
      active_here: runners.get(name)?.isActive ?? false,
      updated_at: row?.updated_at.toISOString() ?? null,
    });
  }
  return { head: head ? formatPosition(head) : null, consumers };
}
