import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { Catalog, DEFAULT_CATALOG_FILE, type ModelEntry } from '../../src/billing/catalog';
import { accountStream } from '../../src/domain/account/events';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { chatRoutes } from '../../simulator/chat';
import type { ExtraRoute, SimContext } from '../../simulator/route';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { testTempDir } from '../support/temp-dirs';
import { expectSettledAndAuditClean } from '../support/wait';

/** Counts the requests of each route of a simulator that the gateway may call for Responses, then lets the simulator answer. */
class ResponsesSpy {
  readonly calls = { create: 0, read: 0 };
  constructor(simulator: RunningSimulator) {
    const create = chatRoutes().find((route) => route.path === '/v1/responses')!;
    const count = (route: ExtraRoute, kind: 'create' | 'read'): ExtraRoute => ({
      ...route,
      handler: (ctx: SimContext) => {
        this.calls[kind]++;
        return route.handler(ctx);
      },
    });
    const provider: ExtraRoute[] = [
      { method: 'GET', path: '/v1/responses/:id', handler: (ctx) => answer(ctx, { id: ctx.params.id, object: 'response' }) },
      { method: 'GET', path: '/v1/responses/:id/input_items', handler: (ctx) => answer(ctx, { object: 'list', data: [], has_more: false, first_id: null, last_id: null }) },
      { method: 'DELETE', path: '/v1/responses/:id', handler: (ctx) => answer(ctx, { id: ctx.params.id, object: 'response', deleted: true }) },
    ];
    simulator.addRoutes([count(create, 'create'), ...provider.map((route) => count(route, 'read'))]);
  }
}

function answer(ctx: SimContext, body: unknown): void {
  ctx.res.writeHead(200, { 'content-type': 'application/json' });
  ctx.res.end(JSON.stringify(body));
}

describe('Responses: the extensions a model takes, refused before anything is reserved @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;

  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    ({ key, accountId } = await gw.fundedAccount(100_000_000));
  });
  afterEach(async () => expectSettledAndAuditClean(gw, [key]));
  after(async () => gw.close());

  const refusals: [string, Record<string, unknown>, string][] = [
    ['an unpriced built-in tool', { model: 'chat-fast', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }, { type: 'web_search' }] }, 'tools[1].type'],
    ['reasoning on a model without it', { model: 'chat-fast', reasoning: { effort: 'low' } }, 'reasoning'],
    ['an audio part on a model without audio input', { model: 'chat-fast', input: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, 'input[0].content[0]'],
    ['a file part on a model without file input', { model: 'chat-fast', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] }, 'input[0].content[0]'],
    ['background', { model: 'chat-pro', background: true }, 'background'],
    ['a field neither OpenAI nor the model knows', { model: 'chat-fast', thinking: { type: 'enabled' } }, 'thinking'],
  ];
  for (const [what, body, param] of refusals) {
    it(`refuses ${what} with 400 naming ${param}, appending nothing to the account`, async () => {
      const before = (await gw.store.readStream(accountStream(accountId))).length;
      const res = await gw.api(key, 'POST', '/v1/responses', { input: 'hello', ...body });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.include({ param, type: 'invalid_request_error' });
      expect((await gw.store.readStream(accountStream(accountId))).length, 'nothing reserved').to.equal(before);
    });
  }

  it('takes text: {} as LangChain sends it, function tools, tool_choice, text.format json_schema and a listed provider extra', async () => {
    const res = await gw.api(key, 'POST', '/v1/responses', {
      model: 'chat-fast',
      input: 'hello',
      text: {},
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      top_k: 3,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const structured = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', input: 'hello', text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } }, verbosity: 'low' } });
    expect(structured.status, JSON.stringify(structured.body)).to.equal(200);
  });

  it('reserves the listed built-in tools: max_tool_calls at the dearest, else four calls of each', async () => {
    const reserved = async (body: Record<string, unknown>): Promise<number> => {
      const res = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-pro', input: 'hello', max_output_tokens: 10, ...body });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const events = await gw.store.readStream(accountStream(accountId));
      const last = events.filter((e) => e.type === 'FundsReserved').at(-1)!;
      return (last.data as { amount: number }).amount;
    };
    const plain = await reserved({});
    const tools = [{ type: 'web_search' }, { type: 'image_generation' }];
    const definitions = (await reserved({ tools: [{ type: 'function', name: 'f' }] })) - plain;
    expect(definitions, 'a tool definition is reserved as prompt').to.be.greaterThan(0);
    const listed = await reserved({ tools });
    const capped = await reserved({ tools, max_tool_calls: 1 });
    expect(capped - listed).to.equal(300_000 - 4 * (25_000 + 300_000));
  });
});

describe('Responses: stored responses belong to the account that made them @integration', () => {
  let gw: TestGateway;
  let spy: ResponsesSpy;
  let mine: string;
  let theirs: string;

  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    spy = new ResponsesSpy(gw.simulator);
    ({ key: mine } = await gw.fundedAccount(100_000_000));
    ({ key: theirs } = await gw.fundedAccount(100_000_000));
  });
  afterEach(async () => expectSettledAndAuditClean(gw, [mine, theirs]));
  after(async () => gw.close());

  async function created(key: string, body: Record<string, unknown> = {}): Promise<string> {
    const res = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', input: 'remember me', ...body });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.id as string;
  }

  /** Every way of reaching a stored response answers 404 (400 for previous_response_id), none reaching the provider. */
  async function expectRefusedEverywhere(key: string, id: string): Promise<void> {
    const before = { ...spy.calls };
    for (const [method, suffix] of [['GET', ''], ['GET', '/input_items'], ['DELETE', '']] as const) {
      const res = await gw.api(key, method, `/v1/responses/${id}${suffix}`);
      expect(res.status, `${method} ${suffix}`).to.equal(404);
      expect(res.body.error).to.include({ code: 'not_found', type: 'not_found_error' });
    }
    const follow = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', input: 'and then?', previous_response_id: id });
    expect(follow.status).to.equal(400);
    expect(follow.body.error).to.include({ code: 'previous_response_not_found', param: 'previous_response_id' });
    expect(spy.calls, 'no provider was asked').to.deep.equal(before);
  }

  it('reads, lists the input of and continues its own response, relayed to the provider at once after the create', async () => {
    const id = await created(mine);
    const read = await gw.api(mine, 'GET', `/v1/responses/${id}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.include({ id, model: 'chat-fast' });
    expect((await gw.api(mine, 'GET', `/v1/responses/${id}/input_items?limit=5`)).status).to.equal(200);
    const follow = await gw.api(mine, 'POST', '/v1/responses', { model: 'chat-fast', input: 'and then?', previous_response_id: id });
    expect(follow.status, JSON.stringify(follow.body)).to.equal(200);
  });

  it('refuses another account’s response, a forged id, one made with store: false and a deleted one', async () => {
    await expectRefusedEverywhere(theirs, await created(mine));
    await expectRefusedEverywhere(mine, 'resp_forged_0001');
    await expectRefusedEverywhere(mine, await created(mine, { store: false }));
    const deleted = await created(mine);
    const del = await gw.api(mine, 'DELETE', `/v1/responses/${deleted}`);
    expect(del.status).to.equal(200);
    expect(del.body).to.include({ id: deleted, deleted: true });
    await expectRefusedEverywhere(mine, deleted);
  });

  it('records the id, account, key, model and channel of a stored response, never its content', async () => {
    const id = await created(mine, { input: 'a secret prompt' });
    const { rows } = await gw.pool.query<{ data: unknown }>(`SELECT data FROM es_events WHERE type = 'ResponseStored' AND data->>'responseId' = $1`, [id]);
    expect(rows).to.have.length(1);
    const data = rows[0]!.data as Record<string, unknown>;
    expect(Object.keys(data).sort()).to.deep.equal(['accountId', 'at', 'channel', 'keyId', 'model', 'responseId']);
    expect(data).to.include({ model: 'chat-fast', channel: 'default' });
    expect(JSON.stringify(data)).to.not.include('secret');
  });
});

describe('Responses: previous_response_id goes to the channel that made the response @integration', () => {
  let gw: TestGateway;
  let first: RunningSimulator;
  let second: RunningSimulator;
  let onFirst: ResponsesSpy;
  let onSecond: ResponsesSpy;
  let key: string;

  before(async () => {
    first = await startSimulator();
    second = await startSimulator();
    onFirst = new ResponsesSpy(first);
    onSecond = new ResponsesSpy(second);
    const catalogFile = path.join(testTempDir('responses-channels-'), 'catalog.json');
    const catalog = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: ModelEntry[] };
    const fast = catalog.models.find((m) => m.id === 'chat-fast')!;
    fs.writeFileSync(catalogFile, JSON.stringify({ models: [...catalog.models, { ...fast, id: 'chat-second', channel: 'second' }] }));
    const options = { timeoutMs: 10_000, maxConcurrency: 16 };
    const channels = [...channelsServedBy(first.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), options), { name: 'second', base_url: `${second.url}/v1`, timeout_ms: 10_000, max_concurrency: 16 }];
    gw = await startTestGateway({ CATALOG_FILE: catalogFile, CHANNELS: JSON.stringify(channels), RATE_LIMIT_PER_MINUTE: '100000' });
    ({ key } = await gw.fundedAccount(100_000_000));
  });
  afterEach(async () => expectSettledAndAuditClean(gw, [key]));
  after(async () => {
    await gw.close();
    await first.close();
    await second.close();
  });

  it('continues a response made on the second channel there, whatever channel the model asked for names; reads go there too', async () => {
    const made = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-second', input: 'start here' });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    expect(onSecond.calls.create).to.equal(1);
    const follow = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', input: 'go on', previous_response_id: made.body.id, stream: true });
    expect(follow.status).to.equal(200);
    expect({ first: onFirst.calls.create, second: onSecond.calls.create }).to.deep.equal({ first: 0, second: 2 });
    expect((await gw.api(key, 'GET', `/v1/responses/${made.body.id}`)).status).to.equal(200);
    expect({ first: onFirst.calls.read, second: onSecond.calls.read }).to.deep.equal({ first: 0, second: 1 });
  });
});
