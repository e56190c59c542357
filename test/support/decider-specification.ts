import { expect } from 'chai';
import { DomainError, type Decider, type DomainEvent } from '../../src/domain/decider';

/**
 * Given events / when command / then events, after Emmett's DeciderSpecification: a decider test
 * states the history, the command and the events it decides (or the refusal), never the state in
 * between, so it reads as the behaviour a client sees and survives any change of the state's shape.
 *
 *   const given = DeciderSpecification.for(accountDecider);
 *   given([opened, credited]).when(reserve).then([reserved]);
 *   given([opened]).when(reserveTooMuch).thenThrows('insufficient_balance');
 */
export interface WhenStep<Event> {
  /** The command decides exactly these events, in this order. */
  then(expected: readonly Event[]): void;
  /** The command is accepted and changes nothing (an idempotent repeat, a late report). */
  thenNothingHappened(): void;
  /** The command is refused with a DomainError of this code (and these details, when given). */
  thenThrows(code: string, details?: Record<string, unknown>): void;
}

export interface GivenStep<Command, Event> {
  when(command: Command): WhenStep<Event>;
}

export const DeciderSpecification = {
  for<Command, Event extends DomainEvent, State>(decider: Decider<Command, Event, State>): (given?: readonly Event[]) => GivenStep<Command, Event> {
    return (given = []) => ({
      when(command) {
        const decide = (): Event[] => decider.decide(command, given.reduce(decider.evolve, decider.initialState()));
        const accepted = (): Event[] => {
          try {
            return decide();
          } catch (err) {
            throw new Error(`the command was refused (${err instanceof DomainError ? err.code : String(err)}); the test expected it to be accepted`);
          }
        };
        return {
          then: (expected) => expect(accepted()).to.deep.equal(expected),
          thenNothingHappened: () => expect(accepted()).to.deep.equal([]),
          thenThrows(code, details) {
            let events: Event[];
            try {
              events = decide();
            } catch (err) {
              expect(err).to.be.instanceOf(DomainError);
              expect((err as DomainError).code).to.equal(code);
              if (details) expect((err as DomainError).details).to.deep.include(details);
              return;
            }
            expect.fail(`the command was accepted with ${JSON.stringify(events)}; the test expected it refused with ${code}`);
          },
        };
      },
    });
  },
};
