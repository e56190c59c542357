import type { ModelEntry } from '../../billing/catalog';
import { newId } from '../../ids';
import type { Logger } from '../../log';
import { READ_MODEL_SCHEMA } from '../../projections-runtime/consumer';
import { UpstreamError } from '../../upstreams/errors';
import { searchCapabilities } from '../model-types';
import { normalizeQuery, SEARCH_CACHE_EVENT, searchCacheKey, searchCacheStream, type SearchResult, type SearchResultCached } from './events';
import { recordFact } from '../../domain/facts';
import type { Pool } from 'pg';
import type { Config } from '../../config';
import type { EventStore } from '../../eventstore/port';
import type { Clock } from '../../feature-types';
import type { Upstreams } from '../../upstreams/registry';

/** What the cached web search uses. */
export interface WebSearchDeps {
  readonly upstreams: Pick<Upstreams, 'channel'>;
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
}

/**
 * The web-search channel behind a read-through cache. A fresh cached answer (younger than
 * SEARCH_CACHE_TTL_MS by the gateway's clock) is reused; otherwise the provider is asked and its
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

  async search(query: string, domain: string | null, options: { requestId: string; logger: Logger }): Promise<SearchAnswer> {
    const key = searchCacheKey(query, domain);
    const cached = await this.cached(key, options.logger);
    if (cached) return cached;

    const answer = await this.deps.upstreams
      .channel(this.model.channel)
      .json<{ request_id?: unknown; results?: unknown }>('POST', '/search', { query, domain, max_results: searchCapabilities(this.model).max_results });
    if (!Array.isArray(answer.results)) throw new UpstreamError(502, 'the search provider answered without a results array', 'upstream_invalid_answer', 'protocol');
    const results = answer.results.flatMap(toResult);
    const requestId = typeof answer.request_id === 'string' && answer.request_id !== '' ? answer.request_id : newId('srch');
    const fetchedAt = this.deps.clock();
    const event: SearchResultCached = {
      type: SEARCH_CACHE_EVENT,
      data: { key, query: normalizeQuery(query), domain, results, requestId, fetchedAt: fetchedAt.toISOString() },
    };
    try {
      await recordFact(this.deps.store, searchCacheStream(key), event, { expected: 'any', metadata: { requestId: options.requestId } });
    } catch (err) {
      // The answer was paid for and is good; only its reuse is lost.
      options.logger.warn({ err, key }, 'could not cache a search answer');
    }
    return { results, requestId, fetchedAt, cached: false };
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
      return row ? { results: row.results, requestId: row.request_id, fetchedAt: row.fetched_at, cached: true } : null;
    } catch (err) {
      logger.warn({ err, key }, 'could not read the search cache; searching instead');
      return null;
    }
  }
}

function toResult(raw: unknown): SearchResult[] {
  if (typeof raw !== 'object' || raw === null) return [];
  const r = raw as Record<string, unknown>;
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  const url = text(r['url']);
  if (url === '') return [];
  let site = text(r['site']);
  if (site === '') {
    try {
      site = new URL(url).hostname;
    } catch {
      site = '';
    }
  }
  return [{ title: text(r['title']), url, snippet: text(r['snippet']), published_at: text(r['published_at']), site }];
}
