import { expect } from 'chai';
import pino from 'pino';
import type { ModelEntry } from '../../src/billing/catalog';
import { mapBounded } from '../../src/agents/concurrency';
import { normalizeQuery, searchCacheKey, searchCacheStream } from '../../src/agents/search/events';
import { WebSearch, type WebSearchDeps } from '../../src/agents/search/web-search';
import type { WireRequest } from '../../src/upstreams/wire';
import { wireAnswer } from '../support/wire-answer';

describe('search cache key', () => {
  const COURTS = ['court.gov.cn', 'wenshu.court.gov.cn'];

  it('normalizes full- and half-width forms, letter case and spacing', () => {
    expect(normalizeQuery('松川物流（深圳）有限公司')).to.equal('松川物流(深圳)有限公司');
    expect(normalizeQuery('  Qingluan   DATA\tＣｏ．，Ｌｔｄ． ')).to.equal('qingluan data co.,ltd.');
    // The ideographic space (U+3000) is a space.
    expect(normalizeQuery('青峦数据科技有限公司\u3000裁判文书')).to.equal('青峦数据科技有限公司 裁判文书');
  });

  it('gives one key to queries that differ only in bracket width, case and spaces', () => {
    const variants = [
      '松川物流（深圳）有限公司 裁判文书 ABC',
      '松川物流(深圳)有限公司 裁判文书 abc',
      '  松川物流（深圳）有限公司   裁判文书\u3000Abc  ',
      '松川物流(深圳)有限公司\n裁判文书 ＡＢＣ',
    ];
    const keys = new Set(variants.map((q) => searchCacheKey(q, 'sifa', COURTS)));
    expect(keys.size).to.equal(1);
    expect([...keys][0]).to.match(/^[0-9a-f]{64}$/);
    expect(searchCacheStream([...keys][0]!)).to.equal(`search-${[...keys][0]}`);
  });

  it('gives different keys to different verticals and different queries', () => {
    const query = '松川物流（深圳）有限公司 裁判文书';
    const sifa = searchCacheKey(query, 'sifa', COURTS);
    expect(searchCacheKey(query, 'shuiwu', COURTS)).to.not.equal(sifa);
    expect(searchCacheKey(query, null, COURTS), 'the general web').to.not.equal(sifa);
    expect(searchCacheKey('松川物流有限公司 裁判文书', 'sifa', COURTS)).to.not.equal(sifa);
    // The vertical and the query cannot run into each other.
    expect(searchCacheKey('b c', 'a', COURTS)).to.not.equal(searchCacheKey('c', 'a b', COURTS));
  });

  it('keys by the set of domains the provider filters on: another set is another key, their order and repeats are not', () => {
    const query = '松川物流（深圳）有限公司 裁判文书';
    const sifa = searchCacheKey(query, 'sifa', COURTS);
    expect(searchCacheKey(query, 'sifa', ['wenshu.court.gov.cn', 'court.gov.cn', 'court.gov.cn'])).to.equal(sifa);
    expect(searchCacheKey(query, 'sifa', ['court.gov.cn']), 'a domain removed').to.not.equal(sifa);
    expect(searchCacheKey(query, 'sifa', [...COURTS, 'chinacourt.org']), 'a domain added').to.not.equal(sifa);
    expect(searchCacheKey(query, 'sifa', []), 'no filter').to.not.equal(sifa);
    // The domains and the vertical or query cannot run into each other.
    expect(searchCacheKey('q', 'a', ['b.cn'])).to.not.equal(searchCacheKey('q', 'a\nb.cn', []));
  });
});

/** A router of one channel per model: each call goes to the fake channel of the model's name. */
function routerOver(channel: (name: string) => unknown) {
  return {
    attempt: async (model: ModelEntry, call: (channel: never) => Promise<unknown>) => ({ value: await call(channel(model.channel) as never), channel: model.channel }),
  };
}

describe('search cache reads', () => {
  const model = { id: 'web-search', type: 'search', channel: 'search-channel', pricing: { per_query: 30_000 }, capabilities: { max_results: 10 } } as unknown as ModelEntry;
  const ask = { query: '青峦数据科技有限公司 裁判文书', vertical: 'sifa', domains: ['wenshu.court.gov.cn'] };

  /** The cached web search over a channel of `protocol` whose provider answers `body`, and a cache that cannot be read. */
  function searchOver(protocol: string, body: unknown) {
    const sent: WireRequest[] = [];
    const appended: string[] = [];
    const core = {
      config: { searchCacheTtlMs: 86_400_000 },
      clock: () => new Date('2026-03-01T08:00:00Z'),
      pool: { query: async () => Promise.reject(new Error('connection terminated unexpectedly')) },
      store: { append: async (stream: string) => (appended.push(stream), { position: null }) },
      router: routerOver((name: string) => {
        expect(name).to.equal('search-channel');
        return { name, config: { protocol }, call: async (request: WireRequest) => (sent.push(request), wireAnswer(200, body)) };
      }),
    } as unknown as WebSearchDeps;
    return { web: new WebSearch(core, model), sent, appended };
  }

  it('treat a cache that cannot be read as a miss: the provider answers, uncached', async () => {
    const { web, sent, appended } = searchOver('tavily', { query: ask.query, answer: null, images: [], results: [], response_time: 0.4, request_id: 'srch_1' });
    const answer = await web.search(ask, { requestId: 'req_1', logger: pino({ level: 'silent' }) });
    expect(answer).to.deep.include({ cached: false, requestId: 'srch_1', results: [] });
    expect(sent).to.deep.equal([
      {
        method: 'POST',
        path: '/search',
        body: { query: ask.query, search_depth: 'basic', topic: 'general', max_results: 10, include_domains: ['wenshu.court.gov.cn'] },
        model: 'web-search',
      },
    ]);
    expect(appended).to.deep.equal([searchCacheStream(searchCacheKey(ask.query, 'sifa', ask.domains))]);
  });

  it('keys the cache by the vertical and the query, whichever provider protocol answers', async () => {
    const bocha = searchOver('bocha', { code: 200, log_id: 'a1b2c3d4e5f60718', msg: null, data: { webPages: { value: [] } } });
    const answer = await bocha.web.search(ask, { requestId: 'req_2', logger: pino({ level: 'silent' }) });
    expect(answer).to.deep.include({ cached: false, requestId: 'a1b2c3d4e5f60718', results: [] });
    expect(bocha.sent.map((r) => [r.path, (r.body as { include?: string }).include])).to.deep.equal([['/web-search', 'wenshu.court.gov.cn']]);
    expect(bocha.appended).to.deep.equal([searchCacheStream(searchCacheKey(ask.query, 'sifa', ask.domains))]);
  });

  it('answers a search on another set of domains from the provider, not from the answer cached for the old set (an edit of official_sources)', async () => {
    const sent: WireRequest[] = [];
    // The cache as its projection keeps it: the newest answer appended under each key.
    const cache = new Map<string, { results: unknown[]; request_id: string; fetched_at: Date }>();
    const deps = {
      config: { searchCacheTtlMs: 86_400_000 },
      clock: () => new Date('2026-03-01T08:00:00Z'),
      pool: {
        query: async (_sql: string, [key]: [string, Date]) => ({ rows: cache.has(key) ? [cache.get(key)] : [] }),
      },
      store: {
        append: async (_stream: string, events: { data: { key: string; results: unknown[]; requestId: string; fetchedAt: string } }[]) => {
          for (const { data } of events) cache.set(data.key, { results: data.results, request_id: data.requestId, fetched_at: new Date(data.fetchedAt) });
          return { position: null };
        },
      },
      router: routerOver((name: string) => ({
        name,
        config: { protocol: 'tavily' },
        call: async (request: WireRequest) => {
          sent.push(request);
          const only = (request.body as { include_domains: string[] }).include_domains;
          return wireAnswer(200, { query: ask.query, results: only.map((d) => ({ title: d, url: `https://${d}/case`, content: 'c', score: 0.9 })), response_time: 0.4, request_id: `srch_${sent.length}` });
        },
      })),
    } as unknown as WebSearchDeps;
    const web = new WebSearch(deps, model);
    const logger = pino({ level: 'silent' });
    const first = await web.search(ask, { requestId: 'req_1', logger });
    const again = await web.search({ ...ask, domains: [...ask.domains] }, { requestId: 'req_2', logger });
    expect([first.cached, again.cached, again.requestId], 'the same set: cached').to.deep.equal([false, true, 'srch_1']);
    const edited = await web.search({ ...ask, domains: ['court.gov.cn'] }, { requestId: 'req_3', logger });
    expect(edited).to.deep.include({ cached: false, requestId: 'srch_2' });
    expect(edited.results.map((r) => r.url), 'pages of the new filter only').to.deep.equal(['https://court.gov.cn/case']);
    expect(sent.map((r) => (r.body as { include_domains: string[] }).include_domains)).to.deep.equal([['wenshu.court.gov.cn'], ['court.gov.cn']]);
  });
});

describe('mapBounded', () => {
  it('keeps at most `limit` calls in flight and returns results in order', async () => {
    let inFlight = 0;
    let peak = 0;
    const results = await mapBounded([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      return n * 10;
    });
    expect(results).to.deep.equal([10, 20, 30, 40, 50, 60, 70]);
    expect(peak).to.equal(3);
  });

  it('on a rejection starts nothing new and waits for the calls in flight before rejecting', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const run = mapBounded([0, 1, 2, 3, 4, 5], 3, async (n) => {
      started.push(n);
      if (n === 2) throw new Error('boom');
      await gate;
      finished.push(n);
      return n;
    });
    let settled = false;
    run.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Let the rejection of call 2 be seen: the whole must still wait for calls 0 and 1.
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(settled, 'rejected while calls were still in flight').to.equal(false);
    release();
    let error: unknown;
    await run.catch((err: unknown) => (error = err));
    expect((error as Error).message).to.equal('boom');
    expect(started).to.deep.equal([0, 1, 2]);
    expect(finished).to.deep.equal([0, 1]);
  });
});
