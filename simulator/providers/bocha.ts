/**
 * Bocha's Web Search API (博查), as its reference page https://bocha-ai.feishu.cn/wiki/RXEOw02rFiwzGSkd9mUcqoeAnNK
 * describes it, at the simulator's `/bocha` prefix and the real base path `/v1` (a Bocha channel's
 * base URL is `https://api.bochaai.com/v1`): `POST /web-search {query, freshness?, summary?,
 * include?, exclude?, count?}` with a Bearer key (the channels file's placeholder) answers
 * `{code: 200, log_id, msg: null, data: {_type: "SearchResponse", queryContext: {originalQuery},
 * webPages: {webSearchUrl, totalEstimatedMatches, value: [{id, name, url, displayUrl, snippet,
 * summary?, siteName, siteIcon, datePublished, dateLastCrawled, cachedPageUrl, language,
 * isFamilyFriendly, isNavigational}], someResultsRemoved}, images: null, videos: null}}` over the
 * fictional corpus (simulator/corpus.ts): the pages holding every term of `query`, on `include`'s
 * domains (or their subdomains; `|` or `,` between them) when given, never on `exclude`'s, at most
 * `count` (1 to 50, default 10). A page's `snippet` is the start of its text, its `summary` (only
 * with `summary: true`) the whole; its dates are the reference's forms (`datePublished` with
 * `+08:00`, `dateLastCrawled` the same Beijing time written with `Z`). `freshness` is checked
 * against the reference's values and not applied (the corpus is small).
 *
 * Refusals are the reference's error table: the HTTP status with `{"code": "<status>", "message",
 * "log_id"}` — 400 `The API KEY is missing` (no Authorization header), 401 `Invalid API KEY`, 400
 * `Missing parameter query`, 403 `You do not have enough money`, 429 `You have reached the request
 * limit`, 500. Other refusals of a bad body (a count out of range, more than 20 domains) are 400s
 * whose messages are the simulator's own. Directives in the query: search-steering.ts.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { onDomains, searchCorpus } from '../corpus';
import { sendJson } from '../http';
import type { ExtraRoute } from '../route';
import { hasAcceptedBearer } from './credentials';
import type { SimulatedProvider } from './provider';
import { bodyObject, steerSearch } from './search-steering';

/** The reference's messages for its error statuses. */
const MESSAGES: Readonly<Record<number, string>> = {
  401: 'Invalid API KEY',
  403: 'You do not have enough money',
  429: 'You have reached the request limit',
  500: 'Internal server error',
};

const MAX_COUNT = 50;
const DEFAULT_COUNT = 10;
const MAX_DOMAINS = 20;
const SNIPPET_CHARS = 40;
const FRESHNESS = /^(?:noLimit|oneDay|oneWeek|oneMonth|oneYear|\d{4}-\d{2}-\d{2}(?:\.\.\d{4}-\d{2}-\d{2})?)$/;

/** A log id in Bocha's form (16 hex digits). */
function logId(): string {
  return randomBytes(8).toString('hex');
}

function sendBochaError(res: ServerResponse, status: number, message = MESSAGES[status] ?? `Simulated Bocha error (HTTP ${status})`, headers: Readonly<Record<string, string>> = {}): void {
  sendJson(res, status, { code: String(status), message, log_id: logId() }, headers);
}

/** `include` / `exclude`: domains separated by `|` or `,`; null when it is not a string of at most 20. */
function domainList(value: unknown): readonly string[] | null {
  if (value === undefined || value === null || value === '') return [];
  if (typeof value !== 'string') return null;
  const domains = value.split(/[|,]/).map((d) => d.trim().toLowerCase()).filter(Boolean);
  return domains.length <= MAX_DOMAINS ? domains : null;
}

function bochaRoutes(): ExtraRoute[] {
  return [
    {
      method: 'POST',
      path: '/web-search',
      // Read raw: a body that is not JSON is refused in Bocha's shape, not the simulator's.
      body: 'raw',
      handler: async (ctx) => {
        const { req, res, rawBody } = ctx;
        if (!req.headers.authorization) return sendBochaError(res, 400, 'The API KEY is missing');
        if (!hasAcceptedBearer(ctx, 'bocha')) return sendBochaError(res, 401);
        const body = bodyObject(rawBody) ?? {};
        const query = body['query'];
        if (typeof query !== 'string' || query.trim() === '') return sendBochaError(res, 400, 'Missing parameter query');
        const count = body['count'] ?? DEFAULT_COUNT;
        if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_COUNT) return sendBochaError(res, 400, `count must be an integer from 1 to ${MAX_COUNT}`);
        const freshness = body['freshness'] ?? 'noLimit';
        if (typeof freshness !== 'string' || !FRESHNESS.test(freshness)) return sendBochaError(res, 400, 'Invalid parameter freshness');
        const include = domainList(body['include']);
        const exclude = domainList(body['exclude']);
        if (!include || !exclude) return sendBochaError(res, 400, `include and exclude take at most ${MAX_DOMAINS} domains, separated by | or ,`);

        const steering = await steerSearch(query, res);
        if (!steering) return;
        if ('refuse' in steering) return sendBochaError(res, steering.refuse, undefined, steering.headers);
        const pages = searchCorpus(steering.terms, include, MAX_COUNT)
          .filter((page) => !onDomains(page.url, exclude))
          .slice(0, count);
        const withSummary = body['summary'] === true;
        sendJson(res, 200, {
          code: 200,
          log_id: logId(),
          msg: null,
          data: {
            _type: 'SearchResponse',
            queryContext: { originalQuery: query },
            webPages: {
              webSearchUrl: '',
              totalEstimatedMatches: pages.length,
              value: pages.map((page) => ({
                id: null,
                name: page.title,
                url: page.url,
                displayUrl: page.url,
                snippet: [...page.snippet].length > SNIPPET_CHARS ? `${[...page.snippet].slice(0, SNIPPET_CHARS).join('')}...` : page.snippet,
                ...(withSummary ? { summary: page.snippet } : {}),
                siteName: new URL(page.url).hostname,
                siteIcon: `https://th.bochaai.com/favicon?domain_url=${encodeURIComponent(page.url)}`,
                datePublished: page.published_at ? `${page.published_at}T00:00:00+08:00` : null,
                dateLastCrawled: page.published_at ? `${page.published_at}T00:00:00Z` : null,
                cachedPageUrl: null,
                language: null,
                isFamilyFriendly: null,
                isNavigational: null,
              })),
              someResultsRemoved: false,
            },
            images: null,
            videos: null,
          },
        });
      },
    },
  ];
}

export const bochaProvider: SimulatedProvider = {
  protocol: 'bocha',
  title: 'Bocha: web search',
  basePath: '/v1',
  routes: bochaRoutes,
};
