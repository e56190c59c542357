import type { PoolClient } from 'pg';
import type { DomainEvent } from '../domain/decider';
import type { RecordedEvent } from '../eventstore/port';
import type { Consumer, Projection } from './consumer';

/**
 * A recorded event of the union `E`, its `type` and `data` narrowed together: a `switch` on
 * `event.type` gives each case its own data. Distributes over the union's members.
 */
export type Recorded<E extends DomainEvent> = E extends DomainEvent ? Omit<RecordedEvent<E['data']>, 'type' | 'data'> & { readonly type: E['type']; readonly data: E['data'] } : never;

/** The recorded events of `E` whose type is one of `T`. */
export type RecordedOf<E extends DomainEvent, T extends E['type']> = Recorded<Extract<E, { type: T }>>;

interface ConsumerIdentity<T extends string> {
  /** Checkpoint and lease name; never rename a shipped consumer (it would replay from zero). */
  readonly name: string;
  /** The event types it folds; only these reach its handler, others only advance its checkpoint. */
  readonly handles: readonly T[];
}

interface EachEvent<E extends DomainEvent, T extends E['type']> extends ConsumerIdentity<T> {
  apply(tx: PoolClient, event: RecordedOf<E, T>): Promise<void>;
  readonly applyBatch?: never;
}

interface WholeBatch<E extends DomainEvent, T extends E['type']> extends ConsumerIdentity<T> {
  /** A run of its events, in log order (see BatchConsumer). */
  applyBatch(tx: PoolClient, events: readonly RecordedOf<E, T>[]): Promise<void>;
  readonly apply?: never;
}

type ConsumerSpec<E extends DomainEvent, T extends E['type']> = EachEvent<E, T> | WholeBatch<E, T>;

interface ReadModel {
  /** Tables it owns, unqualified (see Projection). */
  readonly tables: readonly string[];
  readonly ddl: string;
}

/**
 * Defines a consumer (a process manager) over the event union `E` (one stream's, or several
 * streams' joined with `|`): `handles` may only name types of `E`, and the handler sees exactly
 * those, typed. Called in two steps so that `E` is given and the handled types are inferred:
 *
 *   defineConsumer<TaskEvent>()({ name, handles: ['TaskSubmitted'], async apply(tx, event) { … } })
 */
export function defineConsumer<E extends DomainEvent>() {
  return <const T extends E['type']>(spec: ConsumerSpec<E, T>): Consumer => {
    const name = spec.name;
    const eventTypes = new Set<string>(spec.handles);
    // The runner hands a consumer only the events of its `eventTypes` (applyEvents), and a type
    // names one shape in the log: this is the one place a recorded event meets its static type.
    if (spec.applyBatch) {
      const applyBatch = spec.applyBatch;
      return { name, eventTypes, applyBatch: (tx, events) => applyBatch(tx, events as readonly RecordedOf<E, T>[]) };
    }
    const apply = spec.apply;
    return { name, eventTypes, apply: (tx, event) => apply(tx, event as RecordedOf<E, T>) };
  };
}

/** A consumer that owns read models (see Projection), defined as with defineConsumer. */
export function defineProjection<E extends DomainEvent>() {
  return <const T extends E['type']>(spec: ConsumerSpec<E, T> & ReadModel): Projection =>
    Object.assign(defineConsumer<E>()<T>(spec), { tables: spec.tables, ddl: spec.ddl });
}
