import { expect } from 'chai';
import { readTavilySearch, tavilySearchRequest } from '../../src/upstreams/tavily/search';
import { tavilyProtocol } from '../../src/upstreams/tavily/protocol';
import { calendarDate, type WebSearchAsk } from '../../src/upstreams/web-search';
import { thrown, wireAnswer as answer } from '../support/wire-answer';

/**
 * The Tavily search adapter against the examples of Tavily's reference, the OpenAPI document of
 * https://docs.tavily.com/documentation/api-reference/endpoint/search (served at
 * https://tavily.com/.well-known/openapi.json; as mirrored in tryAGI/Tavily `src/libs/Tavily/openapi.yaml`):
 * the 200 answer's example values, and the example body of each documented error status (400,
 * 401, 429, 432, 433, 500). test/integration/tavily-sdk.test.ts drives the simulated Tavily with
 * the official SDK.
 */

const DOCUMENTED_ANSWER = {
  query: 'Who is Leo Messi?',
  answer: 'Lionel Messi, born in 1987, is an Argentine footballer widely regarded as one of the greatest players of his generation.',
  images: [],
  results: [
    {
      title: 'Lionel Messi Facts | Britannica',
      url: 'https://www.britannica.com/facts/Lionel-Messi',
      content: 'Lionel Messi, an Argentine footballer, is widely regarded as one of the greatest football players of his generation.',
      score: 0.81025416,
      raw_content: null,
      favicon: 'https://britannica.com/favicon.png',
    },
  ],
  auto_parameters: { topic: 'general', search_depth: 'basic' },
  response_time: '1.67',
  usage: { credits: 1 },
  request_id: '123e4567-e89b-12d3-a456-426614174111',
};

const DOCUMENTED_ERRORS: readonly [number, string][] = [
  [400, "<400 Bad Request, (e.g Invalid topic. Must be 'general' or 'news'.)>"],
  [401, 'Unauthorized: missing or invalid API key.'],
  [429, 'Your request has been blocked due to excessive requests. Please reduce rate of requests.'],
  [432, "<432 Custom Forbidden Error (e.g This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com)>"],
  [433, 'This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard.'],
  [500, 'Internal Server Error'],
];

const ASK: WebSearchAsk = { query: '青峦数据科技有限公司 裁判文书', domains: ['wenshu.court.gov.cn'], maxResults: 10, model: 'web-search' };

describe('Tavily search adapter (the reference’s examples)', () => {
  it('sends POST /search with the query, basic depth, the general topic, max_results and the domains as include_domains', () => {
    expect(tavilySearchRequest(ASK)).to.deep.equal({
      method: 'POST',
      path: '/search',
      body: { query: ASK.query, search_depth: 'basic', topic: 'general', max_results: 10, include_domains: ['wenshu.court.gov.cn'] },
      model: 'web-search',
    });
    // The whole web: no include_domains at all; Tavily's largest max_results is 20.
    expect(tavilySearchRequest({ ...ASK, domains: [], maxResults: 50 }).body).to.deep.equal({ query: ASK.query, search_depth: 'basic', topic: 'general', max_results: 20 });
  });

  it('reads the documented answer: title, url, content as the snippet, the request id', () => {
    expect(readTavilySearch(answer(200, DOCUMENTED_ANSWER), 'tavily')).to.deep.equal({
      hits: [{ title: 'Lionel Messi Facts | Britannica', url: 'https://www.britannica.com/facts/Lionel-Messi', snippet: DOCUMENTED_ANSWER.results[0]!.content, publishedAt: '' }],
      requestId: '123e4567-e89b-12d3-a456-426614174111',
    });
  });

  it('reads published_date as a calendar date when a result carries one, and skips results without a URL', () => {
    const results = [
      { ...DOCUMENTED_ANSWER.results[0], published_date: 'Sun, 01 Jun 2025 00:00:00 GMT' },
      { ...DOCUMENTED_ANSWER.results[0], url: 'https://example.com/b', published_date: '2024-12-05' },
      { ...DOCUMENTED_ANSWER.results[0], url: '' },
      'not a result',
    ];
    const reading = readTavilySearch(answer(200, { ...DOCUMENTED_ANSWER, results, request_id: undefined }), 'tavily');
    expect(reading.hits.map((h) => [h.url, h.publishedAt])).to.deep.equal([
      ['https://www.britannica.com/facts/Lionel-Messi', '2025-06-01'],
      ['https://example.com/b', '2024-12-05'],
    ]);
    expect(reading.requestId).to.equal(null);
    expect(readTavilySearch(answer(200, { ...DOCUMENTED_ANSWER, results: [] }), 'tavily').hits, 'an empty answer is an answer').to.deep.equal([]);
  });

  it('refuses an answer without a results array as the provider’s fault (502), not an empty answer', () => {
    const { results: _results, ...withoutResults } = DOCUMENTED_ANSWER;
    for (const body of [withoutResults, { ...DOCUMENTED_ANSWER, results: {} }, [], 'not json']) {
      const err = thrown(() => readTavilySearch(answer(200, body), 'tavily'));
      expect([err.status, err.kind], JSON.stringify(body)).to.deep.equal([502, 'protocol']);
    }
  });

  it('maps each documented error: the key and the account limits in the gateway’s words, the rest with Tavily’s message', () => {
    const errors = DOCUMENTED_ERRORS.map(([status, message]) => {
      const err = thrown(() => readTavilySearch(answer(status, { detail: { error: message } }, { 'retry-after': '7' }), 'tavily'));
      return [status, err.status, err.code, err.message.includes(message), err.retryAfter];
    });
    expect(errors).to.deep.equal([
      [400, 400, 'upstream_rejected', true, '7'],
      [401, 401, 'upstream_auth_failed', false, null],
      [429, 429, 'upstream_rate_limited', true, '7'],
      [432, 403, 'upstream_account_balance', false, null],
      [433, 403, 'upstream_account_balance', false, null],
      [500, 500, 'upstream_error', true, '7'],
    ]);
    // A body that is not Tavily's still gives its status's error, by status and content type, its text not echoed.
    const plain = tavilyProtocol.errorOf(answer(502, 'Bad Gateway', { 'content-type': 'text/plain' }), 'tavily');
    expect([plain.status, plain.code, plain.message]).to.deep.equal([502, 'upstream_error', 'channel tavily: the provider answered HTTP 502 (text/plain) without an error it documents']);
  });
});

describe('calendarDate (the publication date every search adapter hands over)', () => {
  it('keeps a leading date as written and reads any other date in UTC', () => {
    expect(calendarDate('2025-02-23T08:18:30+08:00')).to.equal('2025-02-23');
    expect(calendarDate('2024-07-22T00:00:00Z')).to.equal('2024-07-22');
    expect(calendarDate('2025-06-01')).to.equal('2025-06-01');
    expect(calendarDate('Wed, 15 Jan 2025 23:30:00 GMT')).to.equal('2025-01-15');
    expect(calendarDate('Wed, 15 Jan 2025 23:30:00 -0200')).to.equal('2025-01-16');
  });

  it('gives "" for what names no date', () => {
    for (const value of [undefined, null, '', '   ', 'yesterday', '2025-02-30', '2025-13-01T00:00:00Z', 20250601, {}]) expect(calendarDate(value), String(value)).to.equal('');
  });
});
