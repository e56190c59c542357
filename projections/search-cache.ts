import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import { SEARCH_CACHE_EVENT, type SearchResultCached } from '../src/agents/search/events';

/**
 * The web-search cache: the newest answer per cache key. Whether an entry is still fresh is decided
 * by the reader (its clock and SEARCH_CACHE_TTL_MS), so the rows stay a pure function of the log.
 */
export const searchCacheProjection: Projection = defineProjection<SearchResultCached>()({
  name: 'search_cache',
  tables: ['search_cache'],
  ddl: `
    CREATE TABLE search_cache (
      cache_key text PRIMARY KEY,
      query text NOT NULL,
      domain text,
      results jsonb NOT NULL,
      request_id text NOT NULL,
      fetched_at timestamptz NOT NULL,
      event_id uuid NOT NULL
    );`,
  handles: [SEARCH_CACHE_EVENT],
  async apply(tx, event) {
    const { data } = event;
    // Two concurrent misses may both append; the later fetch wins, whatever order they commit in.
    await tx.query(
      `INSERT INTO search_cache (cache_key, query, domain, results, request_id, fetched_at, event_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (cache_key) DO UPDATE SET query = $2, domain = $3, results = $4, request_id = $5, fetched_at = $6, event_id = $7
       WHERE search_cache.fetched_at <= EXCLUDED.fetched_at`,
      [data.key, data.query, data.domain, JSON.stringify(data.results), data.requestId, data.fetchedAt, event.id],
    );
  },
});
