/** The list envelope of every paged endpoint (src/http/pagination.ts). */
export interface ListBody<T> {
  readonly object: 'list';
  readonly data: T[];
  readonly has_more: boolean;
  readonly next_after: string | null;
}

/**
 * A paged list as a screen shows it (the ledger, the request log, all keys, the tasks): the items
 * loaded so far, in the API's order, and the cursor of the page after them. Freshness
 * (web/src/fresh.ts) loads such a list again from its start, as far as it was shown, following the
 * API's cursors: the cursors are keyset positions, so a walk from the start holds every item once,
 * with no gap between pages, whatever changed meanwhile. Reloading only the first page would not
 * do: in an oldest-first list (the ledger) a new entry lands on a later page that is never fetched
 * again, and in a newest-first list the rows a refreshed first page pushes out fall between it and
 * the old cursor of the next page, and vanish.
 */
export interface Loaded<T> {
  readonly items: readonly T[];
  /** The API's cursor of the next page; null when the list is shown to its end. */
  readonly next: string | null;
}

/** The most items the API gives in one page (`limit`, src/http/pagination.ts). */
export const MAX_LIMIT = 100;

/** A page of the list at `path` (which may carry a query of its own): `limit` items after the cursor `after`. */
export function pageUrl(path: string, after: string | null, limit: number): string {
  const cursor = after === null ? '' : `&after=${encodeURIComponent(after)}`;
  return `${path}${path.includes('?') ? '&' : '?'}limit=${limit}${cursor}`;
}

/**
 * How many items a (re)load asks for: a first page, or as many as were shown; and when they were
 * the whole list, a page more, since a change may just have added an item to its end (a credit in
 * the oldest-first ledger), which should then appear without a "Load more".
 */
export function reloadCount(shown: Loaded<unknown> | null, pageSize: number): number {
  if (shown === null) return pageSize;
  return Math.max(pageSize, shown.items.length + (shown.next === null ? pageSize : 0));
}

/** The list's first `count` items (fewer if it has fewer), in requests of at most MAX_LIMIT that follow the cursors. */
export async function loadItems<T>(fetchPage: (after: string | null, limit: number) => Promise<ListBody<T>>, count: number): Promise<Loaded<T>> {
  const items: T[] = [];
  let next: string | null = null;
  do {
    const page: ListBody<T> = await fetchPage(next, Math.min(MAX_LIMIT, count - items.length));
    items.push(...page.data);
    next = page.has_more ? page.next_after : null;
  } while (next !== null && items.length < count);
  return { items, next };
}

/**
 * The list with the page loaded after the cursor `after` ("Load more"). A page asked for after
 * another cursor belongs to a list shown before a reload: it is dropped (the reload holds what it
 * would have added up to there), so no item shows twice or out of place.
 */
export function appended<T>(shown: Loaded<T>, after: string, page: ListBody<T>): Loaded<T> {
  if (shown.next !== after) return shown;
  return { items: [...shown.items, ...page.data], next: page.has_more ? page.next_after : null };
}
