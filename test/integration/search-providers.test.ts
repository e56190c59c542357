import { tavily } from '@tavily/core';
import { expect } from 'chai';
import { startSimulator, type RunningSimulator, type SimContext } from '../../simulator';
import { FICTIONAL_COMPANIES as CO } from '../../simulator/corpus';
import { mounted } from '../../simulator/providers/provider';
import { bochaProvider } from '../../simulator/providers/bocha';
import { tavilyProvider } from '../../simulator/providers/tavily';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { channelConfigs } from '../../src/config';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { bochaWebSearch } from '../../src/upstreams/bocha/web-search';
import { Channel, type ChannelConfig } from '../../src/upstreams/channel';
import { channelsServedBy } from '../../src/upstreams/registry';
import { tavilySearchRequest, tavilyWebSearch } from '../../src/upstreams/tavily/search';
import type { WebSearchAsk } from '../../src/upstreams/web-search';
import { DOCUMENTED_ANSWER, DOCUMENTED_REQUEST } from '../support/bocha-reference';
import { upstreamErrorOf } from '../support/wire-answer';

/**
 * The simulated search providers at their real paths, behind the channels file's entries: Tavily
 * driven by its official SDK (`@tavily/core`, only `apiBaseURL` pointed at the simulator), Bocha
 * (no official Node SDK) by the request example of its reference (test/support/bocha-reference.ts);
 * and the gateway's adapters reading what they answer.
 */
describe('simulated Tavily and Bocha, as their SDK and reference call them @integration', () => {
  let sim: RunningSimulator;
  let served: readonly ChannelConfig[];
  const channels: Channel[] = [];
  /** The bodies the simulated providers received, in order. */
  const received: unknown[] = [];

  const open = (name: string, change: Partial<ChannelConfig> = {}): Channel => {
    const channel = new Channel({ ...served.find((c) => c.name === name)!, ...change });
    channels.push(channel);
    return channel;
  };
  const keyOf = (name: string): string => {
    const auth = served.find((c) => c.name === name)!.auth;
    if (auth.kind !== 'bearer') throw new Error(`${name} has no Bearer key`);
    return auth.apiKey;
  };
  const ask = (query: string, domains: readonly string[], maxResults = 10): WebSearchAsk => ({ query, domains, maxResults, model: 'web-search' });

  before(async () => {
    sim = await startSimulator();
    // The providers' own routes, behind a recorder of the bodies they receive.
    sim.addRoutes(
      [...mounted(tavilyProvider), ...mounted(bochaProvider)].map((route) => ({
        ...route,
        handler: (ctx: SimContext) => {
          received.push(ctx.rawBody && ctx.rawBody.length > 0 ? JSON.parse(ctx.rawBody.toString('utf8')) : undefined);
          return route.handler(ctx);
        },
      })),
    );
    served = channelConfigs(channelsServedBy(sim.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 10_000, maxConcurrency: 4 }), 'fallback');
  });
  beforeEach(() => {
    received.length = 0;
  });
  after(async () => {
    await Promise.all(channels.map((c) => c.close()));
    await sim.close();
  });

  describe('Tavily through @tavily/core', () => {
    const client = () => tavily({ apiKey: keyOf('tavily'), apiBaseURL: served.find((c) => c.name === 'tavily')!.base_url });

    it('is reached at the base URL of the channels file’s entry, moved onto the simulator', () => {
      expect(served.find((c) => c.name === 'tavily')!.base_url).to.equal(`${sim.url}/tavily`);
    });

    it('answers the SDK’s search in Tavily’s shape, on the domains asked for; the gateway sends the SDK’s very body and reads the same pages', async () => {
      const query = `${CO.qingluan.name} 裁判文书`;
      const response = await client().search(query, { searchDepth: 'basic', topic: 'general', maxResults: 10, includeDomains: ['wenshu.court.gov.cn'] });
      expect(response.query).to.equal(query);
      expect(response.requestId).to.match(/^[0-9a-f-]{36}$/);
      expect(response.responseTime).to.be.a('number').greaterThan(0);
      expect(response.images).to.deep.equal([]);
      expect(response.results).to.have.length(1);
      const [result] = response.results;
      expect(result).to.deep.include({ url: 'https://wenshu.court.gov.cn/doc/2024-jing0108-minchu-12345', publishedDate: 'Mon, 02 Dec 2024 00:00:00 GMT' });
      expect(result!.title).to.include(CO.qingluan.name);
      expect(result!.content).to.include(`原告：${CO.qingluan.name}`);
      expect(result!.score).to.be.a('number').within(0, 1);
      const sdkBody = received[0];

      // The gateway's adapter: the same body on the wire, the same page read.
      const reading = await tavilyWebSearch.search(open('tavily'), ask(query, ['wenshu.court.gov.cn']));
      expect(received[1]).to.deep.equal(sdkBody);
      expect(received[1]).to.deep.equal(tavilySearchRequest(ask(query, ['wenshu.court.gov.cn'])).body);
      expect(reading.hits).to.deep.equal([{ title: result!.title, url: result!.url, snippet: result!.content, publishedAt: '2024-12-02' }]);
      expect(reading.requestId).to.match(/^[0-9a-f-]{36}$/).and.not.equal(response.requestId);
    });

    it('keeps to include_domains and away from exclude_domains: the rumour on a news site is found only when the search is not kept to the courts', async () => {
      const query = `${CO.qingluan.name} 失信被执行人`;
      const unfiltered = await client().search(query, { maxResults: 20 });
      expect(unfiltered.results.map((r) => r.url)).to.deep.equal(['https://news.example.com/2025/01/qingluan-rumour']);
      expect((await client().search(query, { includeDomains: ['court.gov.cn'] })).results).to.deep.equal([]);
      expect((await client().search(query, { excludeDomains: ['example.com'] })).results).to.deep.equal([]);
      // A domain keeps its subdomains: every official page about 青峦 on a court site.
      const courts = await client().search(CO.qingluan.name, { includeDomains: ['court.gov.cn'], maxResults: 20 });
      expect(courts.results.map((r) => new URL(r.url).hostname)).to.have.members(['wenshu.court.gov.cn', 'tingshen.court.gov.cn', 'zxgk.court.gov.cn', 'zxgk.court.gov.cn']);
      // The default is five results at most.
      expect((await client().search('有限公司')).results).to.have.length(5);
    });

    it('refuses another key, a bad body and a directive’s status in Tavily’s shape, as the SDK reads them; the gateway maps them', async () => {
      const wrongKey = tavily({ apiKey: 'tvly-not-the-key', apiBaseURL: `${sim.url}/tavily` });
      await expectRejection(wrongKey.search('x'), 'Unauthorized: missing or invalid API key.');
      await expectRejection(client().search('x', { maxResults: 21 }), 'max_results must be an integer from 0 to 20.');
      await expectRejection(client().search('x', { topic: 'sports' as 'news' }), 'Invalid topic. Must be one of general, news, finance.');
      await expectRejection(client().search('x [sim:status=432]'), "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com");

      const refused = await upstreamErrorOf(() => tavilyWebSearch.search(open('tavily', { auth: { kind: 'bearer', apiKey: 'tvly-not-the-key' } }), ask('x', [])));
      expect([refused.status, refused.code]).to.deep.equal([401, 'upstream_auth_failed']);
      const limited = await upstreamErrorOf(() => tavilyWebSearch.search(open('tavily'), ask('x [sim:status=429] [sim:retry-after=3]', [])));
      expect([limited.status, limited.code, limited.retryAfter, limited.message]).to.deep.equal([429, 'upstream_rate_limited', '3', 'Your request has been blocked due to excessive requests. Please reduce rate of requests.']);
      const failed = await upstreamErrorOf(() => tavilyWebSearch.search(open('tavily'), ask('x [sim:fail]', [])));
      expect([failed.status, failed.code, failed.message]).to.deep.equal([500, 'upstream_error', 'Internal Server Error']);
    });
  });

  describe('Bocha by its reference’s request example', () => {
    const post = (body: unknown, authorization: string | null = `Bearer ${keyOf('bocha')}`) =>
      fetch(`${served.find((c) => c.name === 'bocha')!.base_url}/web-search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(body),
      });

    it('is reached at the base URL of the channels file’s entry (its /v1 kept), moved onto the simulator', () => {
      expect(served.find((c) => c.name === 'bocha')!.base_url).to.equal(`${sim.url}/bocha/v1`);
    });

    it('answers the documented request in the documented shape: the same members at every level', async () => {
      const res = await post(DOCUMENTED_REQUEST);
      expect(res.status).to.equal(200);
      const body = (await res.json()) as typeof DOCUMENTED_ANSWER;
      expect(Object.keys(body)).to.have.members(Object.keys(DOCUMENTED_ANSWER));
      expect(Object.keys(body.data)).to.have.members(Object.keys(DOCUMENTED_ANSWER.data));
      expect(Object.keys(body.data.webPages)).to.have.members(Object.keys(DOCUMENTED_ANSWER.data.webPages));
      expect(body).to.deep.include({ code: 200, msg: null });
      expect(body.log_id).to.match(/^[0-9a-f]{16}$/);
      expect(body.data.queryContext).to.deep.equal(DOCUMENTED_ANSWER.data.queryContext);
      // The corpus knows nothing of Alibaba.
      expect(body.data.webPages.value).to.deep.equal([]);

      const found = await post({ ...DOCUMENTED_REQUEST, query: `${CO.songchuan.name} 税务行政处罚`, include: 'zxgk.court.gov.cn|chinatax.gov.cn' });
      const pages = ((await found.json()) as typeof DOCUMENTED_ANSWER).data.webPages.value;
      expect(pages).to.have.length(1);
      // Each page has the documented members, and the summary asked for.
      expect(Object.keys(pages[0]!)).to.have.members([...Object.keys(DOCUMENTED_ANSWER.data.webPages.value[0]!), 'summary', 'datePublished']);
      expect(pages[0]).to.deep.include({ url: 'https://shenzhen.chinatax.gov.cn/chufa/2025/0214-907', datePublished: '2025-02-20T00:00:00+08:00', dateLastCrawled: '2025-02-20T00:00:00Z' });
    });

    it('keeps to include, and the gateway’s adapter reads the summary, not the cut snippet', async () => {
      const query = `${CO.qingluan.name} 欠税公告`;
      const reading = await bochaWebSearch.search(open('bocha'), ask(query, ['chinatax.gov.cn']));
      expect(received[0]).to.deep.equal({ query, freshness: 'noLimit', summary: true, count: 10, include: 'chinatax.gov.cn' });
      expect(reading.hits).to.have.length(1);
      expect(reading.hits[0]).to.deep.include({ url: 'https://beijing.chinatax.gov.cn/qsgg/2017/0302-118', publishedAt: '2017-03-05' });
      expect(reading.hits[0]!.snippet).to.include(`纳税人名称：${CO.qingluan.name}`).and.include('公告日期：2017-03-02');
      expect(reading.requestId).to.match(/^[0-9a-f]{16}$/);
      expect((await bochaWebSearch.search(open('bocha'), ask(query, ['court.gov.cn']))).hits).to.deep.equal([]);
    });

    it('refuses as its error table says: no key 400, another key 401, no query 400, a directive’s 403 and 429; the gateway maps them', async () => {
      const table: [number, string][] = [];
      for (const [body, authorization] of [
        [DOCUMENTED_REQUEST, null],
        [DOCUMENTED_REQUEST, 'Bearer sk-not-the-key'],
        [{ ...DOCUMENTED_REQUEST, query: undefined }, undefined],
        [{ ...DOCUMENTED_REQUEST, query: 'x [sim:status=403]' }, undefined],
        [{ ...DOCUMENTED_REQUEST, query: 'x [sim:status=429]' }, undefined],
      ] as const) {
        const res = await post(body, authorization);
        const error = (await res.json()) as { code: string; message: string; log_id: string };
        expect(Object.keys(error)).to.deep.equal(['code', 'message', 'log_id']);
        expect(error.code).to.equal(String(res.status));
        table.push([res.status, error.message]);
      }
      expect(table).to.deep.equal([
        [400, 'The API KEY is missing'],
        [401, 'Invalid API KEY'],
        [400, 'Missing parameter query'],
        [403, 'You do not have enough money'],
        [429, 'You have reached the request limit'],
      ]);

      const balance = await upstreamErrorOf(() => bochaWebSearch.search(open('bocha'), ask('x [sim:status=403]', [])));
      expect([balance.status, balance.code]).to.deep.equal([403, 'upstream_account_balance']);
      const refused = await upstreamErrorOf(() => bochaWebSearch.search(open('bocha', { auth: { kind: 'bearer', apiKey: 'sk-not-the-key' } }), ask('x', [])));
      expect([refused.status, refused.code]).to.deep.equal([401, 'upstream_auth_failed']);
    });
  });
});

async function expectRejection(promise: Promise<unknown>, message: string): Promise<void> {
  let error: unknown;
  await promise.catch((err: unknown) => (error = err));
  expect(error, 'the SDK rejected').to.be.instanceOf(Error);
  expect((error as Error).message).to.equal(message);
}
