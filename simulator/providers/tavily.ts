/**
 * Tavily's search API, as https://docs.tavily.com/documentation/api-reference/endpoint/search (the
 * OpenAPI document https://tavily.com/.well-known/openapi.json) describes it, at the simulator's
 * `/tavily` prefix (the base URL of a Tavily channel, `https://api.tavily.com`): `POST /search`
 * with a Bearer key (the channels file's placeholder) answers `{query, answer, images, results:
 * [{title, url, content, score, raw_content, published_date?}], response_time, request_id,
 * usage?}` over the fictional corpus (simulator/corpus.ts): the pages holding every term of
 * `query`, on `include_domains` (or their subdomains) when given, never on `exclude_domains`, at
 * most `max_results` (default 5). A refusal is `{"detail": {"error": "<message>"}}` with the
 * reference's statuses and messages (401 for a missing or unknown key; 400 for a body the
 * reference refuses: no query, an unknown `search_depth` or `topic`, `max_results` outside 0..20,
 * domain lists that are not lists of strings or longer than the reference allows).
 * `published_date` is sent for a dated page as an HTTP date: the reference gives the member no
 * format (not checked against the provider). Directives in the query: search-steering.ts.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { onDomains, searchCorpus } from '../corpus';
import { sendJson } from '../http';
import type { ExtraRoute } from '../route';
import { hasAcceptedBearer } from './credentials';
import type { SimulatedProvider } from './provider';
import { bodyObject, steerSearch } from './search-steering';

/** The reference's messages for its error statuses. */
const MESSAGES: Readonly<Record<number, string>> = {
  401: 'Unauthorized: missing or invalid API key.',
  429: 'Your request has been blocked due to excessive requests. Please reduce rate of requests.',
  432: "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com",
  433: 'This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard.',
  500: 'Internal Server Error',
};

const DEPTHS = ['basic', 'advanced', 'fast', 'ultra-fast'];
const TOPICS = ['general', 'news', 'finance'];
const MAX_RESULTS = 20;
const DEFAULT_RESULTS = 5;
const MAX_INCLUDE_DOMAINS = 300;
const MAX_EXCLUDE_DOMAINS = 150;

function sendTavilyError(res: ServerResponse, status: number, message = MESSAGES[status] ?? `Simulated Tavily error (HTTP ${status})`, headers: Readonly<Record<string, string>> = {}): void {
  sendJson(res, status, { detail: { error: message } }, headers);
}

function domainList(value: unknown, max: number): readonly string[] | null {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > max || !value.every((d) => typeof d === 'string')) return null;
  return value.map((d: string) => d.trim().toLowerCase()).filter(Boolean);
}

/** `Sun, 01 Jun 2025 00:00:00 GMT` for a page dated `2025-06-01`. */
function httpDate(isoDate: string): string | undefined {
  return isoDate === '' ? undefined : new Date(`${isoDate}T00:00:00Z`).toUTCString();
}

function tavilyRoutes(): ExtraRoute[] {
  return [
    {
      method: 'POST',
      path: '/search',
      // Read raw: a body that is not JSON is refused in Tavily's shape, not the simulator's.
      body: 'raw',
      handler: async (ctx) => {
        const { res, rawBody } = ctx;
        if (!hasAcceptedBearer(ctx, 'tavily')) return sendTavilyError(res, 401);
        const started = performance.now();
        const body = bodyObject(rawBody);
        if (!body) return sendTavilyError(res, 400, 'The request body must be a JSON object.');
        const query = body['query'];
        if (typeof query !== 'string' || query.trim() === '') return sendTavilyError(res, 400, 'query is required and must be a non-empty string.');
        if (body['search_depth'] !== undefined && !DEPTHS.includes(String(body['search_depth']))) return sendTavilyError(res, 400, `Invalid search_depth. Must be one of ${DEPTHS.join(', ')}.`);
        if (body['topic'] !== undefined && !TOPICS.includes(String(body['topic']))) return sendTavilyError(res, 400, `Invalid topic. Must be one of ${TOPICS.join(', ')}.`);
        const max = body['max_results'] ?? DEFAULT_RESULTS;
        if (typeof max !== 'number' || !Number.isInteger(max) || max < 0 || max > MAX_RESULTS) return sendTavilyError(res, 400, `max_results must be an integer from 0 to ${MAX_RESULTS}.`);
        const include = domainList(body['include_domains'], MAX_INCLUDE_DOMAINS);
        const exclude = domainList(body['exclude_domains'], MAX_EXCLUDE_DOMAINS);
        if (!include || !exclude) return sendTavilyError(res, 400, 'include_domains and exclude_domains must be lists of domains.');

        const steering = await steerSearch(query, res);
        if (!steering) return;
        if ('refuse' in steering) return sendTavilyError(res, steering.refuse, undefined, steering.headers);
        const pages = searchCorpus(steering.terms, include, MAX_RESULTS)
          .filter((page) => !onDomains(page.url, exclude))
          .slice(0, max);
        const depth = body['search_depth'] === 'advanced' ? 2 : 1;
        sendJson(res, 200, {
          query,
          answer: null,
          images: [],
          results: pages.map((page, i) => ({
            url: page.url,
            title: page.title,
            content: page.snippet,
            score: Number((0.9 - i * 0.05).toFixed(2)),
            raw_content: null,
            ...(page.published_at ? { published_date: httpDate(page.published_at) } : {}),
          })),
          // Seconds, as Tavily reports them (two decimals; never 0).
          response_time: Math.max(0.01, Number(((performance.now() - started) / 1000).toFixed(2))),
          ...(body['include_usage'] === true ? { usage: { credits: depth } } : {}),
          request_id: randomUUID(),
        });
      },
    },
  ];
}

export const tavilyProvider: SimulatedProvider = {
  protocol: 'tavily',
  title: 'Tavily: web search',
  basePath: '',
  routes: tavilyRoutes,
};
