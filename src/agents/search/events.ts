import { createHash } from 'node:crypto';

/** One result of a web search, as the provider returned it (strings, '' when absent). */
export interface SearchResult {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
  readonly published_at: string;
  readonly site: string;
}

/**
 * A successful search answer kept for reuse. Appended to `search-<key>`, one stream per cache
 * key; the `search_cache` projection keeps the newest entry of each key. Reports copy what they
 * used, so a newer entry never changes a stored report.
 */
export interface SearchResultCached {
  readonly type: 'SearchResultCached';
  readonly data: {
    readonly key: string;
    /** The normalized query the key was derived from. */
    readonly query: string;
    readonly domain: string | null;
    readonly results: readonly SearchResult[];
    /** The provider's request id of the search that was billed. */
    readonly requestId: string;
    readonly fetchedAt: string;
  };
}

export const SEARCH_CACHE_EVENT = 'SearchResultCached';

/**
 * Queries that differ only in letter case, full/half-width forms or spacing ask the same thing:
 * NFKC, lower case, single spaces, trimmed.
 */
export function normalizeQuery(query: string): string {
  return query.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * The cache key of a query in a search vertical on a set of domains: sha256 over the vertical, the
 * domains (sorted, each once: their order does not change the provider's answer) and the normalized
 * query. The domains are in it because the provider's answer depends on its domain filter: an edit
 * of `official_sources` must not be answered with pages filtered by the old set.
 */
export function searchCacheKey(query: string, domain: string | null, domains: readonly string[]): string {
  const filter = [...new Set(domains.map((d) => d.toLowerCase()))].sort();
  return createHash('sha256').update(JSON.stringify([domain ?? '', filter, normalizeQuery(query)])).digest('hex');
}

export function searchCacheStream(key: string): string {
  return `search-${key}`;
}
