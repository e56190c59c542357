/**
 * The simulated web-search provider: `POST /v1/search {query, domain?, max_results?}` answers
 * `{request_id, query, results: [{title, url, snippet, published_at, site}]}` from the fixed
 * fictional corpus (corpus.ts). `domain` is a search vertical (`gongshang`, `sifa`, `shuiwu`).
 * Directives in the query steer it like the chat simulator: `[sim:fail]` (HTTP 500),
 * `[sim:status=NNN]`, `[sim:delay=MS]`; they are not search terms.
 */
import { searchCorpus } from './corpus';
import { parseDirectives, stripDirectives } from './directives';
import { codeForStatus, HttpError, sendError, sendJson, waitUnlessGone } from './http';
import type { ExtraRoute, SimContext } from './server';

const DEFAULT_MAX_RESULTS = 10;
const MAX_RESULTS = 50;

export function searchRoutes(): ExtraRoute[] {
  let seq = 0;
  // Request ids stay unique across simulator restarts that share a database (the gateway caches them).
  const run = Date.now().toString(36);
  return [{ method: 'POST', path: '/v1/search', handler: (ctx) => handleSearch(ctx, `srch_sim_${run}_${++seq}`) }];
}

async function handleSearch(ctx: SimContext, requestId: string): Promise<void> {
  const body = ctx.body as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'The request body must be a JSON object.', 'invalid_request');
  const query = body['query'];
  if (typeof query !== 'string' || query.trim() === '') throw new HttpError(400, 'query must be a non-empty string', 'invalid_request', 'query');
  const domain = body['domain'];
  if (domain !== undefined && domain !== null && typeof domain !== 'string') throw new HttpError(400, 'domain must be a string', 'invalid_request', 'domain');
  const max = body['max_results'];
  const maxResults = typeof max === 'number' && Number.isInteger(max) && max >= 1 ? Math.min(max, MAX_RESULTS) : DEFAULT_MAX_RESULTS;

  const directives = parseDirectives(query);
  if (directives.delayMs !== undefined && !(await waitUnlessGone(ctx.res, directives.delayMs))) return;
  const status = directives.status ?? (directives.fail ? 500 : undefined);
  if (status !== undefined) {
    sendError(ctx.res, status, `Simulated search error (HTTP ${status})`, codeForStatus(status));
    return;
  }
  const terms = stripDirectives(query).trim();
  sendJson(ctx.res, 200, { request_id: requestId, query: terms, results: searchCorpus(terms, typeof domain === 'string' ? domain : null, maxResults) });
}
