import type { EventStore } from '../../src/eventstore/port';
import { idempotencyKeyStream } from '../../src/tasks/idempotency';

/**
 * The Retry-After a request with the key `key` is told while the first claim of the key holds it:
 * the whole seconds left on that claim's lease at the instant `t` it was answered (at least 1).
 * A test knows `t` only between a request's sending and its answer, and asserts the range.
 */
export async function leaseSecondsLeft(store: EventStore, accountId: string, key: string): Promise<(t: number) => number> {
  const [claim] = await store.readStream(idempotencyKeyStream(accountId, key));
  const leaseUntil = Date.parse((claim!.data as { leaseUntil: string }).leaseUntil);
  return (t) => Math.max(1, Math.ceil((leaseUntil - t) / 1000));
}
