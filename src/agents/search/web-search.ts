import type { ModelEntry } from '../../billing/catalog';
import { newId } from '../../ids';
import type { Logger } from '../../log';
import { READ_MODEL_SCHEMA } from '../../projections-runtime/consumer';
import type { WebSearchHit } from '../../upstreams/web-search';
import { webSearchAdapterOf } from '../../upstreams/web-search-adapters';
import { searchCapabilities } from '../model-types';
import { normalizeQuery, SEARCH_CACHE_EVENT, searchCacheKey, searchCacheStream, type SearchResult, type SearchResultCached } from './events';
import { recordFact } from '../../domain/facts';
import type { Pool } from 'pg';
import type { Config } from '../../config';
import type { EventStore } from '../../eventstore/port';
import type { Clock } from '../../feature-types';
import type { Router } from '../../upstreams/routing/router';

/** What the cached web search uses. */
export interface WebSearchDeps {
  /** Picks the search model's channel, failing over before an answer (src/upstreams/routing). */
  readonly router: Pick<Router, 'attempt'>;
  readonly clock: Clock;
  readonly store: Pick<EventStore, 'append'>;
  readonly pool: Pick<Pool, 'query'>;
  readonly config: Pick<Config, 'searchCacheTtlMs'>;
}

export interface SearchAnswer {
  readonly results: readonly SearchResult[];
  /** The provider's request id of the search that produced these results (for a cached answer: the original one). */
  readonly requestId: string;
  readonly fetchedAt: Date;
  /** Answered from the cache: not billed. */
  readonly cached: boolean;
  /** The channel that answered the search; null for an answer from the cache (no channel was asked). */
  readonly channel: string | null;
}

/**
 * The web-search model's channel, through its protocol's adapter (src/upstreams/web-search.ts),
 * behind a read-through cache. A fresh cached answer (younger than SEARCH_CACHE_TTL_MS by the
 * gateway's clock) is reused; otherwise the provider is asked and its
 * answer, empty or not, is appended as a `SearchResultCached` event. Billing is the caller's: a
 * non-cached answer is one billable search; a failure throws UpstreamError and is neither billed
 * nor cached. The cache is best effort both ways: an unreadable cache is a miss, an answer that
 * cannot be cached is still returned.
 */
export class WebSearch {
  constructor(
    private readonly deps: WebSearchDeps,
    readonly model: ModelEntry,
  ) {}

  /**
   * One search: `query` in the search vertical `vertical` (the cache key's, never sent), asked of
   * the provider for pages on `domains` only (the channel's protocol turns that into its own
   * domain filter).
   */
  async search(ask: { query: string; vertical: string; domains: readonly string[] }, options: { requestId: string; logger: Logger }): Promise<SearchAnswer> {
    const { query, vertical } = ask;
    const key = searchCacheKey(query, vertical, ask.domains);
    const cached = await this.cached(key, options.logger);
    if (cached) return cached;

    const searched = { query, domains: ask.domains, maxResults: searchCapabilities(this.model).max_results, model: this.model.id };
    const { value: reading, channel } = await this.deps.router.attempt(this.model, (channel) => webSearchAdapterOf(channel).search(channel, searched));
    const results = reading.hits.map(toResult);
    const requestId = reading.requestId ?? newId('srch');
    const fetchedAt = this.deps.clock();
    const event: SearchResultCached = {
      type: SEARCH_CACHE_EVENT,
      data: { key, query: normalizeQuery(query), domain: vertical, results, requestId, fetchedAt: fetchedAt.toISOString() },
    };
    try {
      await recordFact(this.deps.store, searchCacheStream(key), event, { expected: 'any', metadata: { requestId: options.requestId } });
    } catch (err) {
      // The answer was paid for and is good; only its reuse is lost.
      options.logger.warn({ err, key }, 'could not cache a search answer');
    }
    return { results, requestId, fetchedAt, cached: false, channel };
  }

  /**
   * The fresh cached answer of `key`, or null. A cache that cannot be read is a miss: the search
   * is then asked (and billed) like any other, instead of failing a request that may already have
   * paid for other searches.
   */
  private async cached(key: string, logger: Logger): Promise<SearchAnswer | null> {
    try {
      const freshAfter = new Date(this.deps.clock().getTime() - this.deps.config.searchCacheTtlMs);
      const { rows } = await this.deps.pool.query<{ results: SearchResult[]; request_id: string; fetched_at: Date }>(
        `SELECT results, request_id, fetched_at FROM ${READ_MODEL_SCHEMA}.search_cache WHERE cache_key = $1 AND fetched_at > $2`,
        [key, freshAfter],
      );
      const row = rows[0];
      return row ? { results: row.results, requestId: row.request_id, fetchedAt: row.fetched_at, cached: true, channel: null } : null;
    } catch (err) {
      logger.warn({ err, key }, 'could not read the search cache; searching instead');
      return null;
    }
  }
}

/** A provider's page as the cache keeps it; `site` is the page's host. */
function toResult(hit: WebSearchHit): SearchResult {
  let site = '';
  try {
    site = new URL(hit.url).hostname;
  } catch {
    // a URL the platform cannot parse keeps no site
  }
  return { title: hit.title, url: hit.url, snippet: hit.snippet, published_at: hit.publishedAt, site };
}
