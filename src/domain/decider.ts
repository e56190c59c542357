/**
 * A pure aggregate: decide turns a command and the current state into new events (or throws a
 * DomainError), evolve folds one event into the state. No I/O, no clock: time comes in commands.
 */
export interface Decider<Command, Event extends DomainEvent, State> {
  readonly initialState: () => State;
  readonly decide: (command: Command, state: State) => Event[];
  readonly evolve: (state: State, event: Event) => State;
  /** Bump when the state shape changes so that stored snapshots of the old shape are ignored. */
  readonly snapshotVersion: number;
}

export interface DomainEvent {
  readonly type: string;
  readonly data: unknown;
}

/** A refused command. `code` is stable and reaches API clients. */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
