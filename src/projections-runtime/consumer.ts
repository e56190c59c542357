import type { PoolClient } from 'pg';
import type { RecordedEvent } from '../eventstore/port';

interface ConsumerIdentity {
  /** Checkpoint and lease name; never rename a shipped consumer (it would replay from zero). */
  readonly name: string;
  /** Event types this consumer folds; others only advance its checkpoint. */
  readonly eventTypes: ReadonlySet<string>;
}

/** Folds one event at a time. */
export interface EventConsumer extends ConsumerIdentity {
  apply(tx: PoolClient, event: RecordedEvent): Promise<void>;
  readonly applyBatch?: never;
}

/**
 * Folds a run of events (only those of its types, in log order) at once: for the hot read models,
 * whose set-wise writes cost a few statements per batch instead of a few per event.
 */
export interface BatchConsumer extends ConsumerIdentity {
  applyBatch(tx: PoolClient, events: readonly RecordedEvent[]): Promise<void>;
  readonly apply?: never;
}

/**
 * Something that folds the global log inside a database transaction: a projection writing read
 * models, or a process manager writing due jobs. The runner commits the consumer's writes and its
 * checkpoint in the same transaction, so an event is applied exactly once even across crashes.
 * A consumer's only effects are its writes through that transaction (no state of its own, no calls
 * out): a batch may be folded again after a rollback (see GroupCommitter).
 */
export type Consumer = EventConsumer | BatchConsumer;

/** A consumer whose rows are a pure function of the log: it can be dropped, rebuilt and audited. */
export type Projection = Consumer & {
  /** Tables it owns, unqualified; they live in the schema the runner puts on the search_path. */
  readonly tables: readonly string[];
  /** CREATE TABLE statements for those tables, unqualified. */
  readonly ddl: string;
};

/** Folds `events` (any types, in log order) into `consumer` inside `tx`: the one way every caller applies events. */
export async function applyEvents(consumer: Consumer, tx: PoolClient, events: readonly RecordedEvent[]): Promise<void> {
  const relevant = events.filter((event) => consumer.eventTypes.has(event.type));
  if (relevant.length === 0) return;
  if (consumer.applyBatch) return consumer.applyBatch(tx, relevant);
  for (const event of relevant) await consumer.apply(tx, event);
}

/** Schema that holds the live read models. */
export const READ_MODEL_SCHEMA = 'rm';

/**
 * Events per read of the log when replaying it (rebuild, audit, a consumer catching up from a
 * reset): large pages make the per-read and per-transaction costs small next to the folding.
 */
export const REPLAY_PAGE_EVENTS = 10_000;
