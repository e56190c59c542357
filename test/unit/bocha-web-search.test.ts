import { expect } from 'chai';
import { bochaWebSearchRequest, readBochaWebSearch } from '../../src/upstreams/bocha/web-search';
import type { WebSearchAsk } from '../../src/upstreams/web-search';
import { DOCUMENTED_ANSWER, DOCUMENTED_REQUEST } from '../support/bocha-reference';
import { thrown, wireAnswer as answer } from '../support/wire-answer';

/**
 * The Bocha web-search adapter against the examples of Bocha's reference, the "Web Search API"
 * page https://bocha-ai.feishu.cn/wiki/RXEOw02rFiwzGSkd9mUcqoeAnNK, as published verbatim in
 * fengin/search-server `src/search/proxy/bocha/api_doc.md` and timi233/ent_agent
 * `docs/api/bocha-api.md`: its request example, its answer example (the first two pages of
 * it, members as documented), the `datePublished` / `summary` members of the later revision, and
 * its error table. Bocha publishes no Node SDK we know of (none on npm), so these fixtures are the
 * contract; test/integration/search-providers.test.ts sends the reference's request example to the
 * simulated Bocha.
 */

/** The reference's error table: HTTP status, body. */
const DOCUMENTED_ERRORS: readonly [number, { code: string; message: string; log_id: string }][] = [
  [403, { code: '403', message: 'You do not have enough money', log_id: 'c66aac17eab1bb7e' }],
  [400, { code: '400', message: 'Missing parameter query', log_id: 'c66aac17eab1bb7e' }],
  [400, { code: '400', message: 'The API KEY is missing', log_id: 'c66aac17eab1bb7e' }],
  [401, { code: '401', message: 'Invalid API KEY', log_id: 'c66aac17eab1bb7e' }],
  [429, { code: '429', message: 'You have reached the request limit', log_id: 'c66aac17eab1bb7e' }],
  [500, { code: '500', message: 'xxxx', log_id: 'c66aac17eab1bb7e' }],
];

const ASK: WebSearchAsk = { query: DOCUMENTED_REQUEST.query, domains: [], maxResults: 50, model: 'web-search' };

describe('Bocha web-search adapter (the reference’s examples)', () => {
  it('sends the reference’s request example for a whole-web search of 50 results, and the domains as `include` joined by |', () => {
    expect(bochaWebSearchRequest(ASK)).to.deep.equal({ method: 'POST', path: '/web-search', body: DOCUMENTED_REQUEST, model: 'web-search' });
    expect(bochaWebSearchRequest({ ...ASK, domains: ['zxgk.court.gov.cn', 'gsxt.gov.cn'], maxResults: 10 }).body).to.deep.equal({
      ...DOCUMENTED_REQUEST,
      count: 10,
      include: 'zxgk.court.gov.cn|gsxt.gov.cn',
    });
  });

  it('reads the documented answer: name as the title, the snippet when there is no summary, the Beijing date of dateLastCrawled, log_id', () => {
    expect(readBochaWebSearch(answer(200, DOCUMENTED_ANSWER), 'bocha')).to.deep.equal({
      hits: [
        {
          title: '阿里巴巴发布2024年ESG报告　持续推进减碳与数字化普惠',
          url: 'https://www.alibabagroup.com/document-1752073403914780672',
          snippet: DOCUMENTED_ANSWER.data.webPages.value[0]!.snippet,
          publishedAt: '2024-07-22',
        },
        {
          title: '阿里巴巴发布2024年ESG报告，阿里云数据中心清洁能源占比达56.0%',
          url: 'http://tech.cnr.cn/techph/20240722/t20240722_526807992.shtml',
          snippet: DOCUMENTED_ANSWER.data.webPages.value[1]!.snippet,
          publishedAt: '2024-07-22',
        },
      ],
      requestId: 'd71841ad20095f61',
    });
  });

  it('prefers the summary to the snippet and datePublished to dateLastCrawled (the later revision’s members)', () => {
    const page = { ...DOCUMENTED_ANSWER.data.webPages.value[0]!, summary: '详细摘要内容：阿里巴巴集团发布2024财年ESG报告。', datePublished: '2024-07-21T23:58:00+08:00' };
    const reading = readBochaWebSearch(answer(200, { ...DOCUMENTED_ANSWER, data: { ...DOCUMENTED_ANSWER.data, webPages: { ...DOCUMENTED_ANSWER.data.webPages, value: [page] } } }), 'bocha');
    expect(reading.hits).to.deep.equal([{ title: page.name, url: page.url, snippet: page.summary, publishedAt: '2024-07-21' }]);
  });

  it('reads an answer without webPages as no pages, and refuses one it cannot read as the provider’s fault (502)', () => {
    const none = readBochaWebSearch(answer(200, { ...DOCUMENTED_ANSWER, data: { ...DOCUMENTED_ANSWER.data, webPages: null } }), 'bocha');
    expect(none).to.deep.equal({ hits: [], requestId: 'd71841ad20095f61' });
    for (const body of [{ ...DOCUMENTED_ANSWER, data: null }, { ...DOCUMENTED_ANSWER, data: { webPages: { value: 'x' } } }, 'not json']) {
      const err = thrown(() => readBochaWebSearch(answer(200, body), 'bocha'));
      expect([err.status, err.kind], JSON.stringify(body)).to.deep.equal([502, 'protocol']);
    }
  });

  it('maps the error table: a missing or invalid key and the balance in the gateway’s words, the rest with Bocha’s message', () => {
    const errors = DOCUMENTED_ERRORS.map(([status, body]) => {
      const err = thrown(() => readBochaWebSearch(answer(status, body), 'bocha'));
      return [status, body.message, err.status, err.code, err.message.includes(body.message)];
    });
    expect(errors).to.deep.equal([
      [403, 'You do not have enough money', 403, 'upstream_account_balance', false],
      [400, 'Missing parameter query', 400, 'upstream_rejected', true],
      [400, 'The API KEY is missing', 401, 'upstream_auth_failed', false],
      [401, 'Invalid API KEY', 401, 'upstream_auth_failed', false],
      [429, 'You have reached the request limit', 429, 'upstream_rate_limited', true],
      [500, 'xxxx', 500, 'upstream_error', true],
    ]);
  });

  it('reads a 200 whose body names another code as that error', () => {
    const err = thrown(() => readBochaWebSearch(answer(200, DOCUMENTED_ERRORS[0]![1]), 'bocha'));
    expect([err.status, err.code]).to.deep.equal([403, 'upstream_account_balance']);
  });
});
