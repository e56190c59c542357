import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pricing } from '../../src/billing/money';
import { DEFAULT_CATALOG_FILE, type ModelEntry } from '../../src/billing/catalog';
import { isOfficialUrl } from '../../src/agents/risk/evidence';
import { testTempDir } from '../support/temp-dirs';
import { expect } from 'chai';
import OpenAI from 'openai';
import { isValidCreditCode } from '../../src/agents/risk/credit-code';
import { extractSubject } from '../../src/agents/risk/extract';
import { CAVEATS, type RiskUsage } from '../../src/agents/risk/report';
import { screenCompany } from '../../src/agents/risk/screen-company';
import { agentCapabilities, searchPricing } from '../../src/agents/model-types';
import { tokenCharge } from '../../src/billing/money';
import { countTokens } from '../../src/billing/tokens';
import { chatPricing } from '../../src/chat/model-type';
import { DIMENSIONS, type DimensionType } from '../../src/agents/risk/dimensions';
import type { Channel } from '../../src/upstreams/channel';
import type { WireRequest } from '../../src/upstreams/wire';
import type { Router } from '../../src/upstreams/routing/router';
import { chatRoutes } from '../../simulator/chat';
import { FICTIONAL_COMPANIES as CO } from '../../simulator/corpus';
import type { ExtraRoute, SimContext } from '../../simulator';
import { mounted } from '../../simulator/providers/provider';
import { tavilyProvider } from '../../simulator/providers/tavily';
import { expectChatChunkFrames } from '../support/sse-frames';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { latestSettlement } from '../support/settlements';

const DAY = 86_400_000;
const NINE = ['cpws', 'zxgg', 'shixin', 'ktgg', 'fygg', 'sifacdk', 'satparty_qs', 'satparty_chufa', 'satparty_fzc'];
const RISK = '/v1/agent/risk/chat/completions';

describe('risk screening agent @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  let now = new Date('2026-03-01T08:00:00Z');
  /** Queries the simulated search provider received, in order. */
  let providerQueries: string[] = [];
  /**
   * How a test steers the simulator, which reads the directives in what it receives: the searches
   * that get `[sim:fail]` (all, or those of some dimensions), and the directives added to the
   * writer's prompt (e.g. `[sim:fail]`, `[sim:tokens=6]`, `[sim:stall]`).
   */
  let failingSearches: 'all' | readonly DimensionType[] = [];
  /** Each search's query and the domains the gateway asked the provider to keep to, in order. */
  let providerDomains: { query: string; include_domains: string[] | undefined }[] = [];
  /** The simulated provider answers as if it had no domain filter (the filter is taken out before it searches). */
  let ignoreDomainFilter = false;
  let writerDirectives = '';
  let perQuery: number;
  let writerPricing: ReturnType<typeof chatPricing>;

  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000', SSE_PING_MS: '200', UPSTREAM_TIMEOUT_MS: '1500' }, { clock: () => now });
    // Count what reaches the provider, and steer it: the real simulated routes behind spies.
    gw.simulator.addRoutes([steeredSearch(tavilySearchRoute()), steeredWriter(chatRoutes().find((r) => r.path === '/v1/chat/completions')!)]);
    ({ key, accountId } = await gw.fundedAccount(1_000_000_000));
    perQuery = searchPricing(gw.catalog.get('web-search')!).per_query;
    writerPricing = chatPricing(gw.catalog.get('chat-fast')!);
    expect(perQuery).to.be.greaterThan(0);
  });
  beforeEach(() => {
    // Every test starts after the previous test's cache entries expired.
    now = new Date(now.getTime() + 2 * DAY);
    providerQueries = [];
    providerDomains = [];
    ignoreDomainFilter = false;
    failingSearches = [];
    writerDirectives = '';
  });
  afterEach(async () => {
    const me = await gw.api(key, 'GET', '/v1/account');
    expect(me.body.balance.frozen, 'no reservation is left open').to.equal(0);
    await gw.expectAuditClean();
  });
  after(async () => gw.close());

  const user = (content: string, extra: Record<string, unknown> = {}) => ({ messages: [{ role: 'user', content }], ...extra });

  /** The dimension a search query is for (its label ends the query), or undefined for an identity search. */
  const dimensionOf = (query: string): DimensionType | undefined => DIMENSIONS.find((d) => query.endsWith(` ${d.label}`))?.data_type;

  /** The catalog's web-search channel is Tavily's: its simulated search route, at its full path. */
  const tavilySearchRoute = (): ExtraRoute => mounted(tavilyProvider).find((r) => r.path === '/tavily/search')!;

  /** A search request as the simulated Tavily receives it (raw JSON). */
  const searchBody = (ctx: SimContext): { query: string; include_domains?: string[] } => JSON.parse(ctx.rawBody!.toString('utf8'));

  /** The simulated search route, handed `body` instead of what the gateway sent. */
  const withBody = (ctx: SimContext, body: unknown): SimContext => ({ ...ctx, rawBody: Buffer.from(JSON.stringify(body)) });

  function steeredSearch(real: ExtraRoute): ExtraRoute {
    return {
      ...real,
      handler: (ctx) => {
        const { include_domains: domains, ...body } = searchBody(ctx);
        providerQueries.push(body.query);
        providerDomains.push({ query: body.query, include_domains: domains });
        const dimension = dimensionOf(body.query);
        const fails = failingSearches === 'all' || (dimension !== undefined && failingSearches.includes(dimension));
        const query = fails ? `${body.query} [sim:fail]` : body.query;
        return real.handler(withBody(ctx, { ...body, query, ...(ignoreDomainFilter ? {} : { include_domains: domains }) }));
      },
    };
  }

  function steeredWriter(real: ExtraRoute): ExtraRoute {
    return {
      ...real,
      handler: (ctx) => {
        const body = ctx.body as { messages: { role: string; content: string }[] };
        if (!writerDirectives) return real.handler(ctx);
        const last = body.messages[body.messages.length - 1]!;
        return real.handler({ ...ctx, body: { ...body, messages: [...body.messages.slice(0, -1), { ...last, content: `${last.content}\n${writerDirectives}` }] } });
      },
    };
  }

  async function available(k = key): Promise<number> {
    return (await gw.api(k, 'GET', '/v1/account')).body.balance.available as number;
  }

  /** Calls the endpoint and measures what the account was charged. */
  async function screen(body: unknown, k = key, path = RISK) {
    const before = await available(k);
    const res = await gw.api(k, 'POST', path, body);
    return { ...res, charge: before - (await available(k)) };
  }

  /** searches × the web-search rate + the writer's tokens at the writer's prices. */
  function expectedCharge(usage: { query_calls: number; prompt_tokens: number; completion_tokens: number }): number {
    return usage.query_calls * perQuery + tokenCharge(writerPricing, usage.prompt_tokens, usage.completion_tokens);
  }

  /** The raw answer: its text exactly as the gateway sent it. */
  async function rawCall(method: string, path: string, body?: unknown, k = key): Promise<{ status: number; text: string; contentType: string | null }> {
    const res = await fetch(gw.url + path, {
      method,
      headers: { authorization: `Bearer ${k}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') };
  }

  /**
   * The exact framing of a successful risk stream: the assistant role chunk, content deltas, a
   * `finish_reason: "stop"` chunk, one `choices: []` chunk with usage and risk_result, then
   * `data: [DONE]`; nothing but `: ping` comments in between, and no `event:` lines. Returns the
   * chunks and the streamed text.
   */
  function expectRiskFrames(text: string): { chunks: any[]; content: string; last: any } {
    const { id, chunks, content, last } = expectChatChunkFrames(text, { model: 'risk-agent' }, ['usage', 'risk_result']);
    expect(id).to.match(/^risk_/);
    expect(last.usage).to.deep.equal(last.risk_result.usage);
    expect(last.risk_result.id).to.equal(id);
    expect(last.risk_result.report.summary).to.equal(content);
    return { chunks, content, last };
  }

  function expectShapeA(res: { status: number; body: any; headers: Headers }, status: number, code: string): void {
    expect(res.status).to.equal(status);
    expect(res.body).to.have.all.keys('error', 'request_id');
    expect(res.body.error).to.have.all.keys('message', 'code');
    expect(res.body.error.code).to.equal(code);
    expect(res.body.error.message).to.be.a('string').and.not.equal('');
    expect(res.body.request_id).to.equal(res.headers.get('x-request-id'));
  }

  /** A report that searched no dimension still lists all nine: unverified, without leads, as its coverage counts them. */
  function expectNineUnqueried(report: { dimensions: any[]; coverage: unknown; fetched_at: number }): void {
    expect(report.dimensions.map((d) => d.data_type)).to.deep.equal(NINE);
    for (const d of report.dimensions) {
      expect(d).to.deep.include({ status: 'unverified', hit_count: null, evidence_count: 0, samples: [], fetched_at: report.fetched_at });
      expect(d.domain).to.be.oneOf(['sifa', 'shuiwu']);
      expect(d.label).to.be.a('string').and.not.equal('');
    }
    expect(report.coverage).to.deep.equal({ total: 9, queried: 0, failed: 0, with_evidence: 0, unverified: 9 });
  }

  describe('identity', () => {
    it('matched: a unique labelled name with a valid code in an official registry page; identify makes exactly one search', async () => {
      const res = await screen(user(`请核实「${CO.qingluan.name}」的身份`, { identify: true }));
      expect(res.status).to.equal(200);
      expect(providerQueries, 'one search reached the provider').to.have.length(1);
      expect(res.body.company).to.deep.equal({
        keyword: CO.qingluan.name,
        resolved_name: CO.qingluan.name,
        credit_code: CO.qingluan.code,
        status: '存续',
        identity_status: 'matched',
        sources: [{ title: `${CO.qingluan.name} - 企业信用信息公示`, url: `https://www.gsxt.gov.cn/corp/${CO.qingluan.code}` }],
      });
      expect(isValidCreditCode(res.body.company.credit_code)).to.equal(true);
      expectNineUnqueried(res.body.report);
      expect(res.body.usage).to.deep.include({ query_calls: 1, query_cached: false, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
      expect(res.body.usage.query_request_ids).to.have.length(1);
      expect(res.charge).to.equal(perQuery);
      expect(res.body.choices[0].message.content).to.equal(res.body.report.summary);
      expect(res.body.report.summary).to.include(CAVEATS);
      // Stored, and readable as it was answered.
      const stored = await gw.api(key, 'GET', `/v1/agent/risk/reports/${res.body.id}`);
      expect(stored.status).to.equal(200);
      expect(stored.body).to.deep.equal(res.body);
    });

    it('matched from a credit code alone, through the alias path', async () => {
      const res = await screen(user(`统一社会信用代码 ${CO.qingluan.code.toLowerCase()}`, { identify: true }), key, '/v1/agent/risk/chat/completion');
      expect(res.status).to.equal(200);
      expect(res.body.company).to.deep.include({ keyword: CO.qingluan.code, resolved_name: CO.qingluan.name, credit_code: CO.qingluan.code, identity_status: 'matched' });
      expect(providerQueries).to.deep.equal([CO.qingluan.code]);
      expect(res.charge).to.equal(perQuery);
    });

    it('user_provided: a partial name that fits two registered companies, and a name only an unofficial site knows', async () => {
      const ambiguous = await screen(user('请筛查「松川物流」', { identify: true }));
      expect(ambiguous.status).to.equal(200);
      expect(ambiguous.body.company).to.deep.include({ keyword: '松川物流', resolved_name: '', credit_code: '', identity_status: 'user_provided' });
      expect(ambiguous.body.company.sources.map((s: { url: string }) => s.url)).to.have.members([
        `https://www.gsxt.gov.cn/corp/${CO.songchuan.code}`,
        `https://www.gsxt.gov.cn/corp/${CO.songchuanShenzhen.code}`,
      ]);
      expect(ambiguous.body.report.warnings.join('\n')).to.include('fits 2 companies');
      expect(providerQueries).to.have.length(1);

      // The full name of one of them is unique: matched.
      const full = await screen(user(`「${CO.songchuanShenzhen.name}」`, { identify: true }));
      expect(full.body.company).to.deep.include({ resolved_name: CO.songchuanShenzhen.name, credit_code: CO.songchuanShenzhen.code, status: '注销', identity_status: 'matched' });

      // A labelled name and a valid code, but on an aggregator: not an official document.
      const unofficial = await screen(user(`${CO.yunshan.name}的风险`, { identify: true }));
      expect(unofficial.body.company).to.deep.include({ keyword: CO.yunshan.name, resolved_name: '', credit_code: '', identity_status: 'user_provided' });
      expect(unofficial.body.company.sources).to.deep.equal([]);
      expect(ambiguous.charge + full.charge + unofficial.charge).to.equal(3 * perQuery);
    });

    it('company_unresolved: a valid code with no legal name anywhere; the identity search stays billed and nothing else runs', async () => {
      expect(isValidCreditCode(CO.nameless.code)).to.equal(true);
      const res = await screen(user(`筛查 ${CO.nameless.code}`));
      expect(res.status).to.equal(200);
      expect(res.body.company).to.deep.equal({
        keyword: CO.nameless.code,
        resolved_name: '',
        credit_code: CO.nameless.code,
        status: '',
        identity_status: 'company_unresolved',
        sources: [],
      });
      expect(providerQueries, 'the identity search only').to.deep.equal([CO.nameless.code]);
      // One item per dimension all the same, none searched: consistent with coverage.
      expectNineUnqueried(res.body.report);
      expect(res.body.usage).to.deep.include({ query_calls: 1, prompt_tokens: 0, completion_tokens: 0 });
      expect(res.charge).to.equal(perQuery);
    });

    it('never borrows another company\'s credit code: a name with a code the registry gives to another company', async () => {
      // 松川's code, supplied with 青峦's name (whose registry page shows another code).
      const res = await screen(user(`${CO.qingluan.name} ${CO.songchuan.code}`));
      expect(res.status).to.equal(200);
      expect(providerQueries, 'the name search, the code lookup, nine dimensions').to.have.length(11);
      expect(providerQueries[1]).to.equal(CO.songchuan.code);
      expect(res.body.company).to.deep.include({ keyword: CO.qingluan.name, resolved_name: '', credit_code: '', status: '', identity_status: 'user_provided' });
      const warning = res.body.report.warnings.find((w: string) => w.startsWith('official registry documents contradict'));
      expect(warning, res.body.report.warnings.join('\n')).to.be.a('string');
      for (const part of [CO.qingluan.name, CO.qingluan.code, CO.songchuan.name, CO.songchuan.code]) expect(warning).to.include(part);
      // The name is still screened as written; nothing the result shows carries 松川's code.
      expect(res.body.cards).to.have.length.greaterThan(0);
      for (const card of res.body.cards) expect(card.credit_code).to.equal('');
      expect(JSON.stringify({ company: res.body.company, cards: res.body.cards })).not.to.include(CO.songchuan.code);
      expect(res.body.usage.query_calls).to.equal(11);
      expect(res.charge).to.equal(expectedCharge(res.body.usage));

      // Identify mode searches once: the name's registry page alone contradicts the code.
      now = new Date(now.getTime() + 2 * DAY);
      providerQueries = [];
      const identify = await screen(user(`「${CO.qingluan.name}」${CO.songchuan.code}`, { identify: true }));
      expect(providerQueries).to.have.length(1);
      expect(identify.body.company).to.deep.include({ credit_code: '', identity_status: 'user_provided' });
      const named = identify.body.report.warnings.find((w: string) => w.startsWith('official registry documents contradict'));
      expect(named).to.include(`${CO.qingluan.name} has credit code ${CO.qingluan.code}`).and.include(`${CO.songchuan.code} is not used`);
      expect(JSON.stringify(identify.body.company)).not.to.include(CO.songchuan.code);

      // The code with its own company's name still matches, with no lookup.
      providerQueries = [];
      const own = await screen(user(`${CO.songchuan.name} ${CO.songchuan.code}`, { identify: true }));
      expect(own.body.company).to.deep.include({ identity_status: 'matched', credit_code: CO.songchuan.code, resolved_name: CO.songchuan.name });
      expect(own.body.report.warnings.join('\n')).not.to.include('contradict');
    });

    it('a wrong check character is never valid: from the client, and in an official page', async () => {
      // The client's code fails its check: not searched, not matched, warned about; nothing to bill.
      const bad = await screen(user('请筛查 91110000600037341N'));
      expect(bad.status).to.equal(200);
      expect(bad.body.company).to.deep.include({ keyword: '91110000600037341N', credit_code: '', identity_status: 'company_unresolved' });
      expect(bad.body.report.warnings[0]).to.include('91110000600037341N').and.include('check character');
      expect(providerQueries).to.deep.equal([]);
      expect(bad.charge).to.equal(0);

      // The registry page of 白鹭湾 shows a code with a wrong check character: the name stays user_provided.
      expect(isValidCreditCode(CO.bailuwan.code)).to.equal(false);
      const typo = await screen(user(`「${CO.bailuwan.name}」`, { identify: true }));
      expect(typo.body.company).to.deep.include({ identity_status: 'user_provided', resolved_name: '', credit_code: '' });
      expect(typo.body.report.warnings.join('\n')).to.include(CO.bailuwan.code).and.include('fails the check character');

      // A name with a mistyped code: the code is ignored, the name still matches the registry's valid code.
      const mistyped = `${CO.qingluan.code.slice(0, 17)}${CO.qingluan.code[17] === 'Q' ? 'R' : 'Q'}`;
      const named = await screen(user(`${CO.qingluan.name}（${mistyped}）`, { identify: true }));
      expect(named.body.company).to.deep.include({ identity_status: 'matched', credit_code: CO.qingluan.code });
      expect(named.body.report.warnings[0]).to.include(mistyped);
      expect(typo.charge + named.charge).to.equal(2 * perQuery);
    });
  });

  describe('screening', () => {
    it('searches all nine dimensions; one failing dimension does not fail the report and is not billed', async () => {
      failingSearches = ['shixin'];
      const res = await screen(user(`请筛查：${CO.qingluan.name}`));
      expect(res.status).to.equal(200);
      expect(providerQueries, 'the identity search and nine dimension searches').to.have.length(10);
      const report = res.body.report;
      expect(report).to.deep.include({ source: 'web_search', rating: 'unknown', score: null });
      expect(report.dimensions.map((d: { data_type: string }) => d.data_type)).to.deep.equal(NINE);
      const byType = Object.fromEntries(report.dimensions.map((d: { data_type: string }) => [d.data_type, d]));
      expect(byType.shixin).to.deep.include({ status: 'failed', evidence_count: 0, hit_count: null, domain: 'sifa', label: '失信被执行人' });
      expect(byType.cpws).to.deep.include({ status: 'evidence_found', evidence_count: 1 });
      expect(byType.fygg).to.deep.include({ status: 'unverified', evidence_count: 0 });
      expect(byType.satparty_qs).to.deep.include({ domain: 'shuiwu', status: 'evidence_found' });
      expect(report.coverage).to.deep.equal({ total: 9, queried: 9, failed: 1, with_evidence: 5, unverified: 3 });
      for (const d of report.dimensions) {
        expect(d.hit_count).to.equal(null);
        expect(d.evidence_count).to.equal(d.samples.length);
        expect(d.fetched_at).to.equal(Math.floor(now.getTime() / 1000));
        for (const s of d.samples) {
          expect(s).to.have.all.keys('entry_id', 'title', 'date', 'source_type', 'source_url', 'excerpt', 'page_published_at', 'verification_status', 'retrieval_method', 'fields_missing');
          expect(s).to.deep.include({ verification_status: 'unverified', retrieval_method: 'search_api' });
        }
      }
      // A page without dates says so.
      expect(byType.sifacdk.samples[0]).to.deep.include({ date: '', page_published_at: '', fields_missing: ['date', 'page_published_at'] });
      expect(report.warnings.join('\n')).to.include('shixin').and.include('search failed');
      expect(report.warnings.join('\n')).to.include('oldest 2017-03-02').and.include('historical records do not establish current status');
      expect(report.summary).to.include('missing evidence does not establish that there is no risk');
      expect(report.summary).to.include('Historical records do not establish the current status');
      expect(report.summary).to.include('needs verification');
      expect(res.body.choices).to.deep.equal([{ index: 0, message: { role: 'assistant', content: report.summary }, finish_reason: 'stop' }]);
      // The failed search is not billed; the nine answered ones and the writer are.
      expect(res.body.usage).to.deep.include({ query_calls: 9, query_cached: false });
      expect(res.body.usage.query_request_ids).to.have.length(9);
      expect(res.body.usage.prompt_tokens).to.be.greaterThan(0);
      expect(res.charge).to.equal(expectedCharge(res.body.usage));
    });

    it('asks the provider for each search on its official domains, and shows cards only for those pages that name the company exactly', async () => {
      const res = await screen(user(`「${CO.qingluan.name}」`));
      expect(res.status).to.equal(200);
      // Each search is filtered to the catalog's domains of its kind: the registry's, then each dimension's.
      const sources = agentCapabilities(gw.catalog.get('risk-agent')!).official_sources;
      expect(providerDomains).to.have.length(10);
      expect(providerDomains[0]).to.deep.equal({ query: `${CO.qingluan.name} 统一社会信用代码`, include_domains: sources.identity });
      for (const sent of providerDomains.slice(1)) expect(sent.include_domains, sent.query).to.deep.equal(sources[dimensionOf(sent.query)!]);
      expect(new Set(providerDomains.slice(1).map((sent) => dimensionOf(sent.query)))).to.have.property('size', 9);

      const cards = res.body.cards;
      // zxgg: an official page about 北京青峦数据科技有限公司 (a longer name): a lead, no card.
      expect(cards.map((c: { data_type: string }) => c.data_type)).to.deep.equal(['cpws', 'ktgg', 'sifacdk', 'satparty_qs']);
      const dims = Object.fromEntries(res.body.report.dimensions.map((d: { data_type: string }) => [d.data_type, d]));
      expect(dims.zxgg.samples[0]).to.deep.include({ source_type: 'official', title: '被执行人公告：北京青峦数据科技有限公司' });
      // The rumour on a news site is not on the court sites the shixin search is filtered to.
      expect(dims.shixin).to.deep.include({ status: 'unverified', samples: [] });
      for (const card of cards) {
        expect(card).to.deep.include({ card_type: 'risk_summary', rating: 'unknown', score: null, hit_count: null, source: 'web_search', source_type: 'official', credit_code: CO.qingluan.code });
        expect(card.evidence_count).to.equal(card.samples.length);
        expect(card.samples.every((s: { source_url: string }) => isOfficialUrl(s.source_url, sources[card.data_type as DimensionType])), card.data_type).to.equal(true);
        expect(card.samples.every((s: { title: string; excerpt: string }) => `${s.title}${s.excerpt}`.includes(CO.qingluan.name))).to.equal(true);
      }
      // A partial name is never an exact mention of a longer legal name: leads, but no cards.
      const partial = await screen(user('「松川物流」'));
      expect(partial.body.company.identity_status).to.equal('user_provided');
      expect(partial.body.report.coverage.with_evidence).to.be.greaterThan(0);
      expect(partial.body.cards).to.deep.equal([]);
    });

    it("does not trust the provider's domain filter: a page off the official domains is a lead, never a card", async () => {
      ignoreDomainFilter = true;
      const res = await screen(user(`「${CO.qingluan.name}」`));
      expect(res.status).to.equal(200);
      const dims = Object.fromEntries(res.body.report.dimensions.map((d: { data_type: string }) => [d.data_type, d]));
      // The provider answered the shixin search with an unofficial page naming the company exactly.
      expect(dims.shixin.samples).to.have.length(1);
      expect(dims.shixin.samples[0]).to.deep.include({ source_type: 'web', source_url: 'https://news.example.com/2025/01/qingluan-rumour' });
      expect(`${dims.shixin.samples[0].title}${dims.shixin.samples[0].excerpt}`).to.include(CO.qingluan.name);
      expect(res.body.cards.map((c: { data_type: string }) => c.data_type)).to.deep.equal(['cpws', 'ktgg', 'sifacdk', 'satparty_qs']);
      expect(res.charge).to.equal(expectedCharge(res.body.usage));
    });

    it("takes the official domains from the catalog: a risk agent whose every search is the tax bureaus' keeps only the tax card", async () => {
      const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: ModelEntry[] };
      const agent = catalog.models.find((m) => m.id === 'risk-agent')!;
      const taxOnly = Object.fromEntries(['identity', ...NINE].map((key) => [key, ['chinatax.gov.cn']]));
      const edited = { models: catalog.models.map((m) => (m === agent ? { ...m, capabilities: { ...m.capabilities, official_sources: taxOnly } } : m)) };
      const dir = testTempDir('risk-catalog-');
      writeFileSync(join(dir, 'catalog.json'), JSON.stringify(edited));
      const taxGateway = await startTestGateway({ CATALOG_FILE: join(dir, 'catalog.json'), RATE_LIMIT_PER_MINUTE: '100000' });
      try {
        const other = await taxGateway.fundedAccount(10_000_000);
        const r = await taxGateway.api(other.key, 'POST', RISK, user(`「${CO.qingluan.name}」`));
        expect(r.status).to.equal(200);
        expect(r.body.cards.map((c: { data_type: string }) => c.data_type)).to.deep.equal(['satparty_qs']);
        // The registry is not official there: the identity cannot be matched.
        expect(r.body.company.identity_status).to.equal('user_provided');
        await taxGateway.expectAuditClean();
      } finally {
        await taxGateway.close();
      }
    });

    it('reuses cached searches for 24 hours without billing them, then searches again; stored reports keep their data', async () => {
      const first = await screen(user(`「${CO.songchuan.name}」`));
      expect(first.status).to.equal(200);
      expect(providerQueries).to.have.length(10);
      expect(first.body.usage).to.deep.include({ query_calls: 10, query_cached: false });
      expect(first.charge).to.equal(expectedCharge(first.body.usage));
      const firstSearchCharge = 10 * perQuery;
      expect(first.charge).to.be.greaterThan(firstSearchCharge);

      // 23 hours later: every search is answered by the cache; only the writer is billed.
      now = new Date(now.getTime() + 23 * 3_600_000);
      providerQueries = [];
      const second = await screen(user(`「${CO.songchuan.name}」`));
      expect(providerQueries, 'no search reached the provider').to.deep.equal([]);
      expect(second.body.usage).to.deep.include({ query_calls: 0, query_cached: true, query_cached_calls: 10, query_request_ids: [] });
      expect(second.charge).to.equal(tokenCharge(writerPricing, second.body.usage.prompt_tokens, second.body.usage.completion_tokens));
      expect(second.body.report.dimensions.map((d: { fetched_at: number }) => d.fetched_at)).to.deep.equal(first.body.report.dimensions.map((d: { fetched_at: number }) => d.fetched_at));
      expect(second.body.report.warnings.join('\n')).to.include('came from the search cache');
      expect(second.body.cards).to.deep.equal(first.body.cards);

      // Past 24 hours: searched and billed again.
      now = new Date(now.getTime() + 2 * 3_600_000);
      const third = await screen(user(`「${CO.songchuan.name}」`));
      expect(providerQueries).to.have.length(10);
      expect(third.body.usage).to.deep.include({ query_calls: 10, query_cached: false });
      expect(third.charge).to.equal(expectedCharge(third.body.usage));
      expect(third.body.report.dimensions[0].fetched_at).to.equal(Math.floor(now.getTime() / 1000));

      // The newer cache entries did not touch the stored reports.
      const stored = await gw.api(key, 'GET', `/v1/agent/risk/reports/${first.body.id}`);
      expect(stored.body).to.deep.equal(first.body);
      expect(stored.body.report.dimensions[0].fetched_at).to.be.lessThan(third.body.report.dimensions[0].fetched_at);
    });

    it('bills the writer by the usage it reports, not by the gateway’s own count, plain and streamed', async () => {
      writerDirectives = '[sim:usage=1234,56]';
      const plain = await screen(user(`「${CO.qingluan.name}」`));
      expect(plain.status).to.equal(200);
      expect(plain.body.usage).to.deep.include({ prompt_tokens: 1234, completion_tokens: 56 });
      expect(plain.charge).to.equal(expectedCharge(plain.body.usage));
      // The writer's call is the charge's main call; the searches went to the search model's channel.
      const { settled } = await latestSettlement(gw, accountId);
      const searchChannel = gw.catalog.get('web-search')!.channel;
      const writerChannel = gw.catalog.get('chat-fast')!.channel;
      expect(searchChannel).to.not.equal(writerChannel);
      expect([settled.channel, settled.channels]).to.deep.equal([writerChannel, [searchChannel, writerChannel].sort()]);

      const { status, text, charge } = await (async () => {
        const before = await available();
        writerDirectives = '[sim:usage=987,65]';
        const raw = await rawCall('POST', RISK, { ...user(`「${CO.qingluan.name}」`), stream: true });
        return { ...raw, charge: before - (await available()) };
      })();
      expect(status).to.equal(200);
      const { last } = expectRiskFrames(text);
      expect(last.usage).to.deep.include({ prompt_tokens: 987, completion_tokens: 65 });
      expect(charge).to.equal(expectedCharge(last.usage));
      await gw.expectAuditClean();
    });

    it('bills the completed searches when the writer fails, and writes the summary itself', async () => {
      writerDirectives = '[sim:fail]';
      const res = await screen(user(`「${CO.qingluan.name}」`));
      expect(res.status).to.equal(200);
      expect(res.body.usage).to.deep.include({ query_calls: 10, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
      expect(res.charge).to.equal(10 * perQuery);
      // No writer served: the searches' channel is the charge's only one.
      const { settled } = await latestSettlement(gw, accountId);
      expect([settled.channel, settled.channels]).to.deep.equal([gw.catalog.get('web-search')!.channel, undefined]);
      expect(res.body.report.warnings.join('\n')).to.include('the report writer failed');
      // cpws, zxgg, ktgg, sifacdk, satparty_qs (the shixin rumour is on no court site: filtered out at the provider).
      expect(res.body.report.summary).to.match(/^Screening of 青峦数据科技有限公司: 5 of 9 dimensions show unverified web leads/);
      expect(res.body.report.summary).to.include(CAVEATS);
      expect((await gw.api(key, 'GET', `/v1/agent/risk/reports/${res.body.id}`)).body.report.summary).to.equal(res.body.report.summary);
    });

    it('reads only the last 10 messages', async () => {
      const filler = (n: number) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `还有别的吗？${i}` }));
      // The company is named in the 12th message from the end: not read.
      const outside = await screen({ messages: [{ role: 'user', content: `「${CO.qingluan.name}」` }, { role: 'assistant', content: '好的' }, ...filler(10)] });
      expectShapeA(outside, 400, 'company_required');
      expect(outside.charge).to.equal(0);
      // The only user message is the 11th from the end: not read either.
      const noUser = await screen({ messages: [{ role: 'user', content: `「${CO.qingluan.name}」` }, ...Array.from({ length: 10 }, () => ({ role: 'assistant', content: '……' }))] });
      expectShapeA(noUser, 400, 'user_message_required');
      expect(providerQueries).to.deep.equal([]);
      // Named in the 10th from the end: read.
      const inside = await screen({ messages: [{ role: 'user', content: `「${CO.songchuan.name}」` }, { role: 'user', content: `「${CO.qingluan.name}」` }, ...filler(9)], identify: true });
      expect(inside.status).to.equal(200);
      expect(inside.body.company.keyword).to.equal(CO.qingluan.name);
    });

    it('streams the writer as chat-completion chunks, then the whole result, as the openai SDK parses it', async () => {
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1/agent/risk`, maxRetries: 0 });
      const before = await available();
      writerDirectives = '[sim:tokens=6]';
      const stream = await client.chat.completions.create({ model: 'risk-agent', stream: true, messages: [{ role: 'user', content: `「${CO.qingluan.name}」` }] });
      const chunks: any[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const charge = before - (await available());
      expect(new Set(chunks.map((c) => c.id)).size).to.equal(1);
      expect(chunks[0].choices[0].delta.role).to.equal('assistant');
      const text = chunks.flatMap((c) => c.choices.map((ch: any) => ch.delta.content ?? '')).join('');
      expect(text.startsWith('word1 word2 word3 word4 word5 word6')).to.equal(true);
      const last = chunks[chunks.length - 1];
      expect(last.choices).to.deep.equal([]);
      const result = last.risk_result;
      expect(result.id).to.equal(chunks[0].id);
      expect(result.object).to.equal('chat.completion');
      expect(result.report.summary).to.equal(text);
      expect(result.choices[0].message.content).to.equal(text);
      expect(result.report.dimensions).to.have.length(9);
      expect(result.cards.length).to.be.greaterThan(0);
      expect(last.usage).to.deep.equal(result.usage);
      expect(result.usage).to.deep.include({ query_calls: 10, completion_tokens: 6 });
      expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).to.equal(true);
      expect(charge).to.equal(expectedCharge(result.usage));
      expect((await gw.api(key, 'GET', `/v1/agent/risk/reports/${result.id}`)).body).to.deep.equal(result);

      // A failure after the stream opened arrives as a shape A error event; nothing is billed.
      const beforeFailure = await available();
      failingSearches = 'all';
      const failing = await fetch(gw.url + RISK, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(user(`「${CO.songchuan.name}」`, { stream: true })),
      });
      expect(failing.headers.get('content-type')).to.match(/^text\/event-stream/);
      const frames = (await failing.text()).split('\n\n').filter((f) => f.startsWith('data: '));
      const error = JSON.parse(frames[frames.length - 1]!.slice(6));
      expect(error).to.deep.equal({ error: { message: error.error.message, code: 'search_unavailable' }, request_id: failing.headers.get('x-request-id') });
      expect(await available()).to.equal(beforeFailure);
    });
    it('streams what a stalling writer delivered, then the fallback, and bills its delivered tokens', async () => {
      const before = await available();
      writerDirectives = '[sim:stall]';
      const res = await fetch(gw.url + RISK, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(user(`「${CO.songchuan.name}」`, { stream: true })),
      });
      expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
      const raw = await res.text();
      const { content: text, last } = expectRiskFrames(raw);
      // The writer stalled for longer than a ping interval: comments kept the stream alive.
      expect(raw).to.include('\n\n: ping\n\n');
      const result = last.risk_result;
      expect(text.startsWith('Simulated answer\n\nScreening of 松川物流有限公司')).to.equal(true);
      expect(result.report.warnings.join('\n')).to.include('the report writer failed').and.include('timed out');
      // The two words it delivered, counted by the writer's (chat-fast's) tokenizer.
      expect(result.usage).to.deep.include({ query_calls: 10, completion_tokens: countTokens('Simulated answer', 'o200k_base') });
      expect(result.usage.prompt_tokens).to.be.greaterThan(0);
      expect(before - (await available())).to.equal(expectedCharge(result.usage));
    });
  });

  describe('stored reports, bounded searches, interrupted screenings', () => {
    it('answers a stored report byte for byte as it was answered, key order included, plain and streamed', async () => {
      const plain = await rawCall('POST', RISK, user(`「${CO.qingluan.name}」`));
      expect(plain.status).to.equal(200);
      expect(plain.contentType).to.match(/^application\/json/);
      const answer = JSON.parse(plain.text);
      // The documented order, which PostgreSQL's jsonb would not keep (it sorts keys by length).
      expect(Object.keys(answer)).to.deep.equal(['id', 'object', 'created', 'model', 'company', 'report', 'choices', 'cards', 'usage']);
      expect(Object.keys(answer.report)).to.deep.equal(['source', 'rating', 'score', 'summary', 'fetched_at', 'coverage', 'warnings', 'dimensions']);
      expect(answer.cards.length).to.be.greaterThan(0);
      const stored = await rawCall('GET', `/v1/agent/risk/reports/${answer.id}`);
      expect(stored.status).to.equal(200);
      expect(stored.contentType).to.match(/^application\/json/);
      expect(stored.text).to.equal(plain.text);

      const streamed = await rawCall('POST', RISK, user(`「${CO.songchuan.name}」`, { stream: true }));
      const { last } = expectRiskFrames(streamed.text);
      const storedStream = await rawCall('GET', `/v1/agent/risk/reports/${last.risk_result.id}`);
      // JSON.parse keeps the order of (non-numeric) keys: this compares the text, order included.
      expect(storedStream.text).to.equal(JSON.stringify(last.risk_result));
    });

    it('runs the dimension searches at most RISK_SEARCH_CONCURRENCY at a time, and all nine still answer', async () => {
      const bounded = await startTestGateway({ RISK_SEARCH_CONCURRENCY: '2', RATE_LIMIT_PER_MINUTE: '100000' });
      try {
        const real = tavilySearchRoute();
        let held = 0;
        let peak = 0;
        let dimensionSearches = 0;
        const waiting: (() => void)[] = [];
        // Each dimension search is held until a second one is in flight (the last, ninth, one alone),
        // so the bound is reached whatever the timing; then a short grace lets any search beyond the
        // bound arrive and be counted before the held ones are answered.
        bounded.simulator.addRoutes([
          {
            ...real,
            handler: async (ctx) => {
              if (dimensionOf(searchBody(ctx).query) !== undefined) {
                dimensionSearches++;
                peak = Math.max(peak, ++held);
                if (held >= 2 || dimensionSearches === NINE.length) {
                  await new Promise((resolve) => setTimeout(resolve, 150));
                  for (const release of waiting.splice(0)) release();
                } else {
                  // The timeout only keeps a gateway that never sends a second search from hanging the test.
                  await new Promise<void>((resolve) => (waiting.push(resolve), setTimeout(resolve, 5_000).unref()));
                }
                held--;
              }
              await real.handler(ctx);
            },
          },
        ]);
        const account = await bounded.fundedAccount(100_000_000);
        const res = await bounded.api(account.key, 'POST', RISK, user(`「${CO.qingluan.name}」`));
        expect(res.status).to.equal(200);
        expect(dimensionSearches).to.equal(9);
        expect(peak, 'dimension searches in flight at once').to.equal(2);
        expect(res.body.report.dimensions.map((d: { data_type: string }) => d.data_type)).to.deep.equal(NINE);
        expect(res.body.report.dimensions.filter((d: { status: string }) => d.status === 'failed')).to.deep.equal([]);
        expect(res.body.report.coverage).to.deep.include({ total: 9, queried: 9, failed: 0 });
        expect(res.body.usage).to.deep.include({ query_calls: 10 });
        await bounded.expectAuditClean();
      } finally {
        await bounded.close();
      }
    });

    it('an internal error partway waits for the searches in flight and bills every answered search before it propagates', async () => {
      // Default concurrency 4: cpws, zxgg and shixin are in flight when ktgg (the fourth) fails.
      expect(gw.config.riskSearchConcurrency).to.equal(4);
      const bug = new Error('a bug while preparing the ktgg search');
      const billed: { usage: RiskUsage; pricing: Pricing }[] = [];
      const searchedOn: string[] = [];
      // The bug strikes where the ktgg search is handed to the channel. The dimension searches
      // before it wait for it to strike, so none finishes (and frees a slot for a fifth) first.
      let strike!: () => void;
      const struck = new Promise<void>((resolve) => (strike = resolve));
      const wrapped = (channel: Channel): Channel => {
        const call = async (request: WireRequest, signal?: AbortSignal): ReturnType<Channel['call']> => {
          const dimension = dimensionOf(String((request.body as { query?: unknown }).query));
          if (dimension === 'ktgg') {
            strike();
            throw bug;
          }
          if (dimension !== undefined) await struck;
          return channel.call(request, signal);
        };
        return Object.assign(Object.create(channel) as Channel, { call });
      };
      const router: Pick<Router, 'attempt'> = { attempt: (model, call, options) => gw.router.attempt(model, (channel) => call(wrapped(channel)), options) };
      const interrupted = screenCompany({ ...gw, router }, {
        subject: extractSubject([{ role: 'user', content: `「${CO.qingluan.name}」` }]),
        identifyOnly: false,
        sources: agentCapabilities(gw.catalog.get('risk-agent')!).official_sources,
        search: gw.catalog.get('web-search')!,
        writer: gw.catalog.get('chat-fast')!,
        requestId: 'req_interrupted',
        logger: gw.logger,
        stream: false,
        onText: async () => undefined,
        servedBy: { writer: () => expect.fail('the writer was never called'), search: (channel) => searchedOn.push(channel) },
        settleInterrupted: async (used, cause) => {
          expect(cause).to.equal(bug);
          // Every search the provider was asked has been answered by now.
          expect(providerQueries).to.have.length(used.usage.query_calls);
          billed.push(used);
        },
      });
      let error: unknown;
      await interrupted.catch((err: unknown) => (error = err));
      expect(error, 'the error propagates unchanged').to.equal(bug);
      expect(providerQueries, 'the identity search and the three dimensions before ktgg; nothing started after it').to.have.length(4);
      expect(billed).to.have.length(1);
      expect(billed[0]!.usage).to.deep.include({ query_calls: 4, query_cached: false, prompt_tokens: 0, completion_tokens: 0 });
      expect(billed[0]!.usage.query_request_ids).to.have.length(4);
      expect(billed[0]!.pricing.amount).to.equal(4 * perQuery);
      const searchChannel = gw.catalog.get('web-search')!.channel;
      expect(searchedOn, 'each answered search names the channel that answered it').to.deep.equal([searchChannel, searchChannel, searchChannel, searchChannel]);
      expect(billed[0]!.pricing.lines[0]).to.deep.equal({ units: { searches: 4 }, unit_prices: { searches: perQuery }, per: 1, amount: 4 * perQuery });
    });
  });

  describe('access and errors (shape A)', () => {
    it('needs a restricted key to allow risk-agent, the web-search model and (for reports) the writer model', async () => {
      const noWriter = await gw.fundedAccount(10_000_000, ['risk-agent', 'web-search']);
      const refused = await screen(user(`「${CO.qingluan.name}」`), noWriter.key);
      expectShapeA(refused, 403, 'model_not_allowed');
      expect(refused.body.error.message).to.include("'chat-fast'");
      expect(refused.body.error.message).not.to.include("may not use 'risk-agent'");
      expect(refused.charge).to.equal(0);
      // Identity only needs no writer.
      const identify = await screen(user(`「${CO.qingluan.name}」`, { identify: true }), noWriter.key);
      expect(identify.status).to.equal(200);
      expect(identify.charge).to.equal(perQuery);

      const chatOnly = await gw.fundedAccount(10_000_000, ['chat-fast']);
      const none = await screen(user(`「${CO.qingluan.name}」`), chatOnly.key);
      expectShapeA(none, 403, 'model_not_allowed');
      expect(none.body.error.message).to.include("may not use 'risk-agent', 'web-search'");
      expectShapeA(await gw.api(chatOnly.key, 'GET', `/v1/agent/risk/reports/${identify.body.id}`), 403, 'model_not_allowed');

      const all = await gw.fundedAccount(10_000_000, ['risk-agent', 'web-search', 'chat-fast']);
      expect((await screen(user(`「${CO.qingluan.name}」`), all.key)).status).to.equal(200);
      // Reports are the account's own.
      expectShapeA(await gw.api(all.key, 'GET', `/v1/agent/risk/reports/${identify.body.id}`), 404, 'report_not_found');
      await gw.expectAuditClean();
    });

    it('answers 400, 401, 402, 404 and 502 in shape A, reserving nothing', async () => {
      expectShapeA(await gw.api(null, 'POST', RISK, user('「x有限公司」')), 401, 'invalid_api_key');
      // Shape A has no `param`: the message names the field.
      for (const [body, message] of [
        [{}, 'messages is required'],
        [user('hi', { stream: 'yes' }), 'stream must be a boolean'],
        [user('hi', { model: 'chat-fast' }), 'model must be risk-agent'],
      ] as const) {
        const refused = await gw.api(key, 'POST', RISK, body);
        expectShapeA(refused, 400, 'invalid_request');
        expect(refused.body.error.message).to.equal(message);
      }
      expectShapeA(await gw.api(key, 'POST', RISK, user('今天天气怎么样？')), 400, 'company_required');
      expectShapeA(await gw.api(key, 'POST', RISK, 'not json'), 400, 'invalid_json');
      expectShapeA(await gw.api(key, 'GET', '/v1/agent/risk/reports/risk_nope'), 404, 'report_not_found');

      const poor = await gw.fundedAccount(perQuery - 1);
      const short = await screen(user(`「${CO.qingluan.name}」`, { identify: true }), poor.key);
      expectShapeA(short, 402, 'insufficient_balance');
      expect(short.headers.get('x-should-retry')).to.equal('false');
      expect(providerQueries).to.deep.equal([]);

      const before = await available();
      failingSearches = 'all';
      const down = await gw.api(key, 'POST', RISK, user(`「${CO.qingluan.name}」`));
      expectShapeA(down, 502, 'search_unavailable');
      expect(await available()).to.equal(before);
    });
  });
});
