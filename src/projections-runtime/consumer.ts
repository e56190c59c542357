import type { PoolClient } from 'pg';
import type { RecordedEvent } from '../eventstore/port';

/**
 * Something that folds the global log inside a database transaction: a projection writing read
 * models, or a process manager writing due jobs. The runner commits the consumer's writes and its
 * checkpoint in the same transaction, so an event is applied exactly once even across crashes.
 */
export interface Consumer {
  /** Checkpoint and lease name; never rename a shipped consumer (it would replay from zero). */
  readonly name: string;
  /** Event types this consumer folds; others only advance its checkpoint. */
  readonly eventTypes: ReadonlySet<string>;
  apply(tx: PoolClient, event: RecordedEvent): Promise<void>;
}

/** A consumer whose rows are a pure function of the log: it can be dropped, rebuilt and audited. */
export interface Projection extends Consumer {
  /** Tables it owns, unqualified; they live in the schema the runner puts on the search_path. */
  readonly tables: readonly string[];
  /** CREATE TABLE statements for those tables, unqualified. */
  readonly ddl: string;
}

/** Schema that holds the live read models. */
export const READ_MODEL_SCHEMA = 'rm';
