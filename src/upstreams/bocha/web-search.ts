/**
 * Bocha's Web Search API, `POST {base}/web-search` with the base `https://api.bochaai.com/v1`
 * (https://bocha-ai.feishu.cn/wiki/RXEOw02rFiwzGSkd9mUcqoeAnNK): the request the gateway's web
 * search sends, and the reading of Bocha's answer `{code: 200, log_id, msg, data: {_type,
 * queryContext, webPages: {webSearchUrl, totalEstimatedMatches, value: [{id, name, url, displayUrl,
 * snippet, summary, siteName, siteIcon, datePublished, dateLastCrawled, …}], someResultsRemoved},
 * images, videos}}` (Bing-compatible).
 *
 * Sent: `query`; `freshness: "noLimit"` (the reference recommends it: a time range often finds
 * nothing, and the risk screening wants old records too); `summary: true` (a page's longer text,
 * where names and dates are more likely to be found than in the short snippet); `count` (1 to 50);
 * `include`, the ask's domains joined by `|`, when it names any (root domains or subdomains, at
 * most 20 by the reference). `page` is not sent: one page of results is what a search is.
 */
import type { WebSearchAdapter, WebSearchAsk, WebSearchHit, WebSearchReading } from '../web-search';
import { answerObject, calendarDate, isObject, text, unreadableAnswer } from '../web-search';
import type { WireAnswer, WireRequest } from '../wire';
import { bochaCode, bochaErrorOf } from './protocol';

/** Bocha's largest `count`. */
export const BOCHA_MAX_COUNT = 50;

export function bochaWebSearchRequest(ask: WebSearchAsk): WireRequest {
  return {
    method: 'POST',
    path: '/web-search',
    body: {
      query: ask.query,
      freshness: 'noLimit',
      summary: true,
      count: Math.min(ask.maxResults, BOCHA_MAX_COUNT),
      ...(ask.domains.length > 0 ? { include: ask.domains.join('|') } : {}),
    },
    model: ask.model,
  };
}

/**
 * Bocha's answer. A page's text is its `summary` (asked for), else its `snippet`; its date is
 * `datePublished`, else `dateLastCrawled`, which the reference says is the publication time too,
 * written in Beijing time with a `Z` (so its leading date is the one to keep, as calendarDate
 * does). A body whose `code` is not 200 is the error it names. An answer without `webPages` (what
 * Bocha answers when nothing is found is not checked against the provider) has no pages.
 */
export function readBochaWebSearch(answer: WireAnswer, channel: string): WebSearchReading {
  const body = answerObject(answer, channel, bochaErrorOf);
  const code = bochaCode(body);
  if (code !== null && code !== 200) throw bochaErrorOf(answer, channel);
  const data = body['data'];
  if (!isObject(data)) throw unreadableAnswer(channel, 'no data object');
  const pages = data['webPages'];
  const values = pages === undefined || pages === null ? [] : isObject(pages) ? pages['value'] : undefined;
  if (!Array.isArray(values)) throw unreadableAnswer(channel, 'a webPages without a value array');
  const logId = text(body['log_id']);
  return { hits: values.flatMap(hitOf), requestId: logId === '' ? null : logId };
}

function hitOf(page: unknown): WebSearchHit[] {
  if (!isObject(page)) return [];
  const url = text(page['url']);
  if (url === '') return [];
  return [
    {
      title: text(page['name']),
      url,
      snippet: text(page['summary']) || text(page['snippet']),
      publishedAt: calendarDate(page['datePublished']) || calendarDate(page['dateLastCrawled']),
    },
  ];
}

/** Bocha's web search as the gateway's web search runs it, through a channel of the `bocha` protocol. */
export const bochaWebSearch: WebSearchAdapter = {
  search: async (transport, ask, signal) => readBochaWebSearch(await transport.call(bochaWebSearchRequest(ask), signal), transport.name),
};
