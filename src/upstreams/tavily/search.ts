/**
 * Tavily Search, `POST {base}/search` (https://docs.tavily.com/documentation/api-reference/endpoint/search;
 * the OpenAPI document https://tavily.com/.well-known/openapi.json): the request the gateway's web
 * search sends, and the reading of Tavily's answer `{query, answer?, images, results: [{title, url,
 * content, score, raw_content?, favicon?, published_date?}], response_time, usage?, request_id}`.
 *
 * Sent: `query`; `search_depth: "basic"` (one API credit: the gateway sells a search at one flat
 * rate, and `advanced` costs Tavily two); `topic: "general"`; `max_results` (Tavily takes 0 to 20);
 * `include_domains` when the ask names domains (Tavily takes up to 300). Everything else is left to
 * Tavily's defaults: no LLM answer, no raw content, no images, no auto parameters (which may raise
 * the depth, and the cost, on their own).
 */
import type { WebSearchAdapter, WebSearchAsk, WebSearchHit, WebSearchReading } from '../web-search';
import { answerObject, calendarDate, isObject, text, unreadableAnswer } from '../web-search';
import type { WireAnswer, WireRequest } from '../wire';
import { tavilyProtocol } from './protocol';

/** Tavily's largest `max_results`. */
export const TAVILY_MAX_RESULTS = 20;

export function tavilySearchRequest(ask: WebSearchAsk): WireRequest {
  return {
    method: 'POST',
    path: '/search',
    body: {
      query: ask.query,
      search_depth: 'basic',
      topic: 'general',
      max_results: Math.min(ask.maxResults, TAVILY_MAX_RESULTS),
      ...(ask.domains.length > 0 ? { include_domains: [...ask.domains] } : {}),
    },
    model: ask.model,
  };
}

/**
 * Tavily's answer. `content` is Tavily's text about the page (for `basic` depth one summary per
 * URL); `published_date` is read as a calendar date when Tavily gives one (its reference documents
 * the member without a format; it is not sent for every result).
 */
export function readTavilySearch(answer: WireAnswer, channel: string): WebSearchReading {
  const body = answerObject(answer, channel, tavilyProtocol.errorOf);
  const results = body['results'];
  if (!Array.isArray(results)) throw unreadableAnswer(channel, 'no results array');
  const requestId = text(body['request_id']);
  return { hits: results.flatMap(hitOf), requestId: requestId === '' ? null : requestId };
}

function hitOf(result: unknown): WebSearchHit[] {
  if (!isObject(result)) return [];
  const url = text(result['url']);
  if (url === '') return [];
  return [{ title: text(result['title']), url, snippet: text(result['content']), publishedAt: calendarDate(result['published_date']) }];
}

/** Tavily's search as the gateway's web search runs it, through a channel of the `tavily` protocol. */
export const tavilyWebSearch: WebSearchAdapter = {
  search: async (transport, ask, signal) => readTavilySearch(await transport.call(tavilySearchRequest(ask), signal), transport.name),
};
