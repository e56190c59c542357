import { ambientMetadata } from '../eventstore/ambient-metadata';
import type { AppendResult, EventMetadata, EventStore, ExpectedVersion } from '../eventstore/port';
import type { DomainEvent } from './decider';
import { withChanges } from './with-changes';

/**
 * Records a fact: an event that no decision on its stream's state precedes (images were generated,
 * a search was answered, a risk report was written, an idempotency key was claimed at the revision
 * its reader saw). Everything that writes events does so here or through a decider's
 * CommandHandler, never with EventStore.append directly (test/unit/event-writers.test.ts).
 *
 * The expected version is the only check: 'no_stream' for a fact that opens its own stream (a
 * second write is a bug or a replayed request, refused with WrongExpectedVersionError), a revision
 * for a claim that must not race another, 'any' for facts that may repeat (a cache refresh).
 */
export function recordFact<E extends DomainEvent>(
  store: Pick<EventStore, 'append'>,
  streamId: string,
  fact: E,
  options: { readonly expected: ExpectedVersion; readonly metadata?: EventMetadata },
): Promise<AppendResult> {
  // The request's ambient metadata (e.g. the dashboard session), as the command handler adds it.
  const metadata = withChanges(ambientMetadata(), options.metadata ?? {});
  return store.append(streamId, [{ type: fact.type, data: fact.data, metadata }], { expectedVersion: options.expected });
}
