import type { PoolClient } from 'pg';
import type { DomainEvent } from '../domain/decider';
import type { RecordedEvent } from '../eventstore/port';
import type { Projection } from './consumer';

/**
 * A recorded event of the union `E`, its `type` and `data` narrowed together: a `switch` on
 * `event.type` gives each case its own data. Distributes over the union's members.
 */
export type Recorded<E extends DomainEvent> = E extends DomainEvent ? Omit<RecordedEvent<E['data']>, 'type' | 'data'> & { readonly type: E['type']; readonly data: E['data'] } : never;

/** The recorded events of `E` whose type is one of `T`. */
export type RecordedOf<E extends DomainEvent, T extends E['type']> = Recorded<Extract<E, { type: T }>>;

interface ProjectionIdentity<T extends string> {
  /** Checkpoint and lease name; never rename a shipped projection (it would replay from zero). */
  readonly name: string;
  readonly tables: readonly string[];
  readonly ddl: string;
  /** The event types it folds; only these reach its handler, others only advance its checkpoint. */
  readonly handles: readonly T[];
}

interface EachEvent<E extends DomainEvent, T extends E['type']> extends ProjectionIdentity<T> {
  apply(tx: PoolClient, event: RecordedOf<E, T>): Promise<void>;
  readonly applyBatch?: never;
}

interface WholeBatch<E extends DomainEvent, T extends E['type']> extends ProjectionIdentity<T> {
  /** A run of its events, in log order (see BatchConsumer). */
  applyBatch(tx: PoolClient, events: readonly RecordedOf<E, T>[]): Promise<void>;
  readonly apply?: never;
}

/**
 * Defines a projection over the event union `E` (one stream's, or several streams' joined with
 * `|`): `handles` may only name types of `E`, and the handler sees exactly those, typed. Called in
 * two steps so that `E` is given and the handled types are inferred:
 *
 *   defineProjection<AccountEvent>()({ name, tables, ddl, handles: ['CreditAdded'], async apply(tx, event) { … } })
 */
export function defineProjection<E extends DomainEvent>() {
  return <const T extends E['type']>(spec: EachEvent<E, T> | WholeBatch<E, T>): Projection => {
    const identity = { name: spec.name, tables: spec.tables, ddl: spec.ddl, eventTypes: new Set<string>(spec.handles) };
    // The runner hands a consumer only the events of its `eventTypes` (applyEvents), and a type
    // names one shape in the log: this is the one place a recorded event meets its static type.
    if (spec.applyBatch) {
      const applyBatch = spec.applyBatch;
      return { ...identity, applyBatch: (tx, events) => applyBatch(tx, events as readonly RecordedOf<E, T>[]) };
    }
    const apply = spec.apply;
    return { ...identity, apply: (tx, event) => apply(tx, event as RecordedOf<E, T>) };
  };
}
