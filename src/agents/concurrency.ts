/**
 * `fn` over every item with at most `limit` calls in flight; results in the order of `items`.
 * A rejection stops new calls from starting, waits for the calls already in flight to finish, and
 * then rejects the whole with the first error: a caller that bills for finished calls sees them all
 * finished before it learns of the failure (callers that must not fail catch inside `fn`).
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  // An object, not a `let`: the workers set it, and the compiler cannot see assignments in closures.
  const state: { next: number; failure: { error: unknown } | null } = { next: 0, failure: null };
  const worker = async (): Promise<void> => {
    while (state.failure === null && state.next < items.length) {
      const index = state.next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        state.failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (state.failure) throw state.failure.error;
  return results;
}
