import {
  type AppendResult,
  type EventMetadata,
  type EventStore,
  WrongExpectedVersionError,
} from '../eventstore/port';
import type { SnapshotStore } from '../eventstore/snapshots';
import { ambientMetadata, outsideAmbientMetadata } from '../eventstore/ambient-metadata';
import type { Logger } from '../log';
import type { Decider, DomainEvent } from './decider';
import { withChanges } from './with-changes';

export interface CommandResult<State, Event> {
  /** Events this command appended; empty when it was an idempotent no-op. */
  readonly events: readonly Event[];
  readonly state: State;
  /** Stream revision after the command; -1 when the stream still does not exist. */
  readonly revision: number;
  /** Global position of the last appended event, for read-your-writes; null when nothing was appended. */
  readonly position: AppendResult['position'] | null;
}

interface Cached<State> {
  readonly revision: number;
  readonly state: State;
}

const MAX_CONFLICT_RETRIES = 20;

interface Pending<Command, Event, State> {
  readonly command: Command;
  readonly metadata: EventMetadata;
  /** The caller's `accepted`, made safe to call on every attempt. */
  readonly accepted: (() => void) | undefined;
  readonly resolve: (result: CommandResult<State, Event>) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Loads an aggregate's state, runs its decider and appends the result with the expected version.
 *
 * Cost does not grow with the stream: states are cached per stream with the revision they reflect
 * (the cache is only ever advanced with events read from the store or appended by us at the
 * expected version, so a stale entry costs one short read, never a wrong decision), and a
 * snapshot is saved (SnapshotStore) every `snapshotEvery` events for cold loads.
 *
 * The cached state is trusted for writes (the expected version checks it) and re-read for answers
 * that write nothing. Commands on one stream are group-committed inside this process: while an append is in flight,
 * new commands queue; the next round decides all of them in order on one loaded state and appends
 * their events in one append. A hot account thus costs one round trip per batch, not per request.
 * A conflict with another process retries the whole round on fresh state, never overwrites.
 */
export class CommandHandler<Command, Event extends DomainEvent, State> {
  private readonly cache = new Map<string, Cached<State>>();
  private readonly queues = new Map<string, Pending<Command, Event, State>[]>();

  constructor(
    private readonly store: EventStore,
    private readonly snapshots: SnapshotStore,
    private readonly decider: Decider<Command, Event, State>,
    private readonly logger: Logger,
    private readonly options: {
      snapshotEvery?: number;
      cacheSize?: number;
      maxBatch?: number;
      /** Sees each command's events once they are durable, with the state they were decided on. */
      onAppended?: (events: readonly Event[], decidedOn: State) => void;
    } = {},
  ) {}

  /**
   * `accepted`, when given, is called (once) when the command was first decided with events and
   * their append is about to start, possibly before this method returns: the caller may begin
   * work that only becomes visible after the returned promise resolves. The decision may still be
   * undone: the promise rejects if the append fails, or if a conflict's retry refuses the command.
   */
  handle(streamId: string, command: Command, given: EventMetadata = {}, accepted?: () => void): Promise<CommandResult<State, Event>> {
    // The caller's request origin (the dashboard's session) is captured now: the append may run
    // later, batched with other requests' commands, outside this request.
    const metadata = withChanges(ambientMetadata(), given);
    return new Promise((resolve, reject) => {
      const pending = { command, metadata, accepted: accepted ? this.once(accepted) : undefined, resolve, reject };
      const queue = this.queues.get(streamId);
      if (queue) {
        queue.push(pending);
        return;
      }
      this.queues.set(streamId, [pending]);
      void outsideAmbientMetadata(() => this.drain(streamId));
    });
  }

  /**
   * `accepted` at most once, and never throwing into the round: a round that threw would leave
   * its stream's queue behind, and every later command on the stream would wait for ever.
   */
  private once(accepted: () => void): () => void {
    let pending: (() => void) | undefined = accepted;
    return () => {
      const call = pending;
      pending = undefined;
      try {
        call?.();
      } catch (err) {
        this.logger.error({ err }, 'a command\'s accepted callback threw');
      }
    };
  }

  /** Runs rounds until the stream's queue is empty; one drain per stream at a time. */
  private async drain(streamId: string): Promise<void> {
    const queue = this.queues.get(streamId)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, this.options.maxBatch ?? 256);
      await this.round(streamId, batch);
    }
    this.queues.delete(streamId);
  }

  /**
   * One round. The cached state is used as it is, without reading the stream: the append's
   * expected version verifies it, so a stale cache costs a conflict and a retry, never a wrong
   * write. An answer that appends nothing (a refusal, an idempotent no-op) has no such check, so
   * it is only given on state freshly read from the store.
   */
  private async round(streamId: string, batch: Pending<Command, Event, State>[]): Promise<void> {
    let verified = false;
    for (let attempt = 0; ; attempt++) {
      let current: Cached<State>;
      try {
        const cached = verified ? undefined : this.cache.get(streamId);
        current = cached ?? (await this.load(streamId));
        verified = cached === undefined;
      } catch (err) {
        for (const p of batch) p.reject(err);
        return;
      }
      // Decide each command on the state left by the ones before it; a refused command is
      // answered alone and leaves no trace in the batch.
      let state = current.state;
      const decided: { pending: Pending<Command, Event, State>; events: Event[]; decidedOn: State; state: State }[] = [];
      const refused: { pending: Pending<Command, Event, State>; err: unknown }[] = [];
      for (const pending of batch) {
        try {
          const decidedOn = state;
          const events = this.decider.decide(pending.command, decidedOn);
          state = events.reduce(this.decider.evolve, decidedOn);
          decided.push({ pending, events, decidedOn, state });
        } catch (err) {
          refused.push({ pending, err });
        }
      }
      if (!verified && (refused.length > 0 || decided.some((d) => d.events.length === 0))) {
        verified = true;
        continue;
      }
      for (const r of refused) r.pending.reject(r.err);
      const accepted = decided.filter((d) => d.events.length > 0);
      if (accepted.length === 0) {
        for (const d of decided) d.pending.resolve({ events: [], state: d.state, revision: current.revision, position: null });
        return;
      }
      for (const d of accepted) d.pending.accepted?.();
      try {
        const result = await this.store.append(
          streamId,
          accepted.flatMap((d) => d.events.map((e) => ({ type: e.type, data: e.data, metadata: d.pending.metadata }))),
          { expectedVersion: current.revision === -1 ? 'no_stream' : current.revision },
        );
        const next = { revision: result.nextExpectedVersion, state };
        this.remember(streamId, next);
        this.maybeSnapshot(streamId, current.revision, next);
        if (this.options.onAppended) for (const d of accepted) this.options.onAppended(d.events, d.decidedOn);
        let revision = current.revision;
        for (const d of decided) {
          revision += d.events.length;
          d.pending.resolve({ events: d.events, state: d.state, revision, position: d.events.length > 0 ? result.position : null });
        }
        return;
      } catch (err) {
        this.cache.delete(streamId);
        verified = true;
        if (!(err instanceof WrongExpectedVersionError) || attempt >= MAX_CONFLICT_RETRIES) {
          for (const d of decided) d.pending.reject(err);
          return;
        }
        // Re-decide every command that was not refused, on the other writer's newer state.
        batch = decided.map((d) => d.pending);
      }
    }
  }

  /** Current state without deciding anything. */
  async load(streamId: string): Promise<Cached<State>> {
    let cached = this.cache.get(streamId) ?? (await this.loadSnapshot(streamId)) ?? { revision: -1, state: this.decider.initialState() };
    const newer = await this.store.readStream(streamId, { fromRevision: cached.revision + 1 });
    if (newer.length > 0) {
      let state = cached.state;
      for (const e of newer) state = this.decider.evolve(state, { type: e.type, data: e.data } as Event);
      cached = { revision: newer[newer.length - 1]!.revision, state };
      this.remember(streamId, cached);
    }
    return cached;
  }

  private remember(streamId: string, entry: Cached<State>): void {
    // Map keeps insertion order: re-inserting makes this the most recently used entry.
    this.cache.delete(streamId);
    this.cache.set(streamId, entry);
    const limit = this.options.cacheSize ?? 10_000;
    if (this.cache.size > limit) this.cache.delete(this.cache.keys().next().value!);
  }

  private loadSnapshot(streamId: string): Promise<Cached<State> | null> {
    return this.snapshots.load<State>(streamId, this.decider.snapshotVersion);
  }

  private maybeSnapshot(streamId: string, before: number, after: Cached<State>): void {
    const every = this.options.snapshotEvery ?? 500;
    if (Math.floor((before + 1) / every) === Math.floor((after.revision + 1) / every)) return;
    // Not awaited: a snapshot only shortens later cold loads, so the command never waits for it.
    this.snapshots.save(streamId, this.decider.snapshotVersion, after).catch((err: unknown) => this.logger.warn({ err, streamId }, 'snapshot write failed'));
  }

  /** Drops cached state, e.g. for a test that tampers with the store behind our back. */
  forget(streamId?: string): void {
    if (streamId) this.cache.delete(streamId);
    else this.cache.clear();
  }
}
