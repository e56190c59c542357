import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { Catalog, DEFAULT_CATALOG_FILE, type ModelEntry } from '../../src/billing/catalog';
import { accountStream } from '../../src/domain/account/events';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { chatRoutes } from '../../simulator/chat';
import type { SimContext } from '../../simulator/route';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { testTempDir } from '../support/temp-dirs';
import { expectSettledAndAuditClean } from '../support/wait';
import { request } from 'undici';
import { tokenCharge, tokenLine } from '../../src/billing/money';
import { countResponsesInputTokens, countTokens } from '../../src/billing/tokens';
import { recordFact } from '../../src/domain/facts';
import { storedResponseStream } from '../../src/chat/stored-responses/events';
import { chatTokenLine } from '../../src/chat/model-type';
import { assertOpenAiSchema, assertResponseStreamEventAsTheApiSendsIt } from '../support/openai-schema';
import { latestSettlement } from '../support/settlements';

/** chat-fast's and chat-pro's prices (src/billing/catalog.json). */
const FAST_PRICES = { input_per_million: 1_000_000, output_per_million: 4_000_000 };
const PRO_PRICES = { input_per_million: 4_000_000, output_per_million: 16_000_000, cached_input_per_million: 1_000_000 };

/**
 * The simulator's chat and Responses routes (one store of Responses) behind a counter of the
 * Responses calls that reach it: creates, and reads (GET, DELETE, input items).
 */
class ResponsesSpy {
  readonly calls = { create: 0, read: 0 };
  constructor(simulator: RunningSimulator) {
    simulator.addRoutes(
      chatRoutes().map((route) => ({
        ...route,
        handler: (ctx: SimContext) => {
          if (route.path.startsWith('/v1/responses')) this.calls[route.method === 'POST' ? 'create' : 'read']++;
          return route.handler(ctx);
        },
      })),
    );
  }
}

/** A test gateway whose provider answers every Responses create with `create` (the simulator's other routes as always). */
async function gatewayCreatingResponses(create: (ctx: SimContext) => void): Promise<TestGateway> {
  const gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
  gw.simulator.addRoutes([{ method: 'POST', path: '/v1/responses', handler: create }]);
  return gw;
}

describe('Responses: the extensions a model takes, refused before anything is reserved @integration', () => {
  let gw: TestGateway;
  let spy: ResponsesSpy;
  let key: string;
  let accountId: string;

  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    spy = new ResponsesSpy(gw.simulator);
    ({ key, accountId } = await gw.fundedAccount(100_000_000));
  });
  afterEach(async () => expectSettledAndAuditClean(gw, [key]));
  after(async () => gw.close());

  const user = (part: Record<string, unknown>) => [{ role: 'user', content: [part] }];
  const refusals: [string, Record<string, unknown>, string][] = [
    ['an unpriced built-in tool', { model: 'chat-fast', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }, { type: 'web_search' }] }, 'tools[1].type'],
    ['reasoning on a model without it', { model: 'chat-fast', reasoning: { effort: 'low' } }, 'reasoning'],
    // OpenAI's Responses input has no audio part (its document at the pinned commit): refused as such, whatever the model takes.
    ['an audio part, which Responses input does not define, even on a model with audio input', { model: 'chat-pro', input: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, 'input[0].content[0].type'],
    ['a file part on a model without file input', { model: 'chat-fast', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] }, 'input[0].content[0]'],
    ['background', { model: 'chat-pro', background: true }, 'background'],
    ['a service tier the catalog has no prices for', { model: 'chat-pro', service_tier: 'flex' }, 'service_tier'],
    ['a field neither OpenAI nor the model knows', { model: 'chat-fast', thinking: { type: 'enabled' } }, 'thinking'],
    // Provider objects named by id: each resolves under the gateway's one provider key, so account B could use account A's object. chat-pro takes images and files.
    ['an item_reference', { model: 'chat-pro', input: [{ type: 'item_reference', id: 'msg_0001' }] }, 'input[0]'],
    ['an item_reference without its type', { model: 'chat-pro', input: [{ role: 'user', content: 'hi' }, { id: 'msg_0001' }] }, 'input[1]'],
    ['a reasoning item without encrypted_content', { model: 'chat-pro', input: [{ type: 'reasoning', id: 'rs_0001', summary: [] }] }, 'input[0]'],
    ['an input_file by file_id', { model: 'chat-pro', input: user({ type: 'input_file', file_id: 'file-0001' }) }, 'input[0].content[0].file_id'],
    ['an input_image by file_id', { model: 'chat-pro', input: user({ type: 'input_image', file_id: 'file-0001', detail: 'auto' }) }, 'input[0].content[0].file_id'],
    ['a tool output’s input_file by file_id', { model: 'chat-pro', input: [{ type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_file', file_id: 'file-0001' }] }] }, 'input[0].output[0].file_id'],
    ['a stored prompt', { model: 'chat-pro', prompt: { id: 'pmpt_0001' } }, 'prompt'],
    ['a file_search tool with vector stores', { model: 'chat-pro', tools: [{ type: 'file_search', vector_store_ids: ['vs_0001'] }] }, 'tools[0].vector_store_ids'],
    ['a code_interpreter container by id', { model: 'chat-pro', tools: [{ type: 'code_interpreter', container: 'cntr_0001' }] }, 'tools[0].container'],
    ['a code_interpreter container with file_ids', { model: 'chat-pro', tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-0001'] } }] }, 'tools[0].container.file_ids'],
  ];
  for (const [what, body, param] of refusals) {
    it(`refuses ${what} with 400 naming ${param}, appending nothing to the account and asking no provider`, async () => {
      const [before, calls] = [(await gw.store.readStream(accountStream(accountId))).length, { ...spy.calls }];
      const res = await gw.api(key, 'POST', '/v1/responses', { input: 'hello', ...body });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error).to.include({ param, type: 'invalid_request_error' });
      expect((await gw.store.readStream(accountStream(accountId))).length, 'nothing reserved').to.equal(before);
      expect(spy.calls, 'no provider was asked').to.deep.equal(calls);
    });
  }

  it('takes the same content sent whole: a function_call item without an id (as the AI SDK sends it) and an image by URL', async () => {
    const calls = spy.calls.create;
    const input = [
      { role: 'user', content: [{ type: 'input_text', text: 'weather?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' }] },
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ];
    const res = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-pro', input, tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(spy.calls.create).to.equal(calls + 1);
  });

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
      const res = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-pro', input: 'hello', max_output_tokens: 16, ...body });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const events = await gw.store.readStream(accountStream(accountId));
      const last = events.filter((e) => e.type === 'FundsReserved').at(-1)!;
      return (last.data as { amount: number }).amount;
    };
    const plain = await reserved({});
    const tools = [{ type: 'web_search' }, { type: 'image_generation' }];
    const definitions = (await reserved({ tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }] })) - plain;
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

  it('reads a stored response whole: any stream query but absent or false is 400 naming stream, never relayed', async () => {
    const id = await created(mine);
    const before = { ...spy.calls };
    for (const query of ['stream=true', 'stream=1', 'stream=True', 'stream=', 'stream=false&stream=false']) {
      const res = await gw.api(mine, 'GET', `/v1/responses/${id}?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.error).to.include({ param: 'stream' });
    }
    expect(spy.calls, 'no stream request reached the provider').to.deep.equal(before);
    expect((await gw.api(mine, 'GET', `/v1/responses/${id}?stream=false`)).status).to.equal(200);
  });

  /** What a follow-up of `key`'s account reserves, continuing `previous` or not; its prompt counted as the gateway counts it. */
  async function followUpReserved(key: string, accountId: string, previous?: string): Promise<number> {
    const res = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', input: 'go on', max_output_tokens: 16, previous_response_id: previous });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return (await latestSettlement(gw, accountId)).reserved;
  }
  const FOLLOW_UP_PROMPT = countResponsesInputTokens('go on', 'o200k_base');

  it('reserves the context of a continued response, its input plus output tokens, as the provider bills the chain', async () => {
    const { key, accountId } = await gw.fundedAccount(100_000_000);
    const made = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', input: 'remember me [sim:tokens=7]' });
    const previousTotal = made.body.usage.input_tokens + made.body.usage.output_tokens;
    expect(await followUpReserved(key, accountId)).to.equal(tokenCharge(FAST_PRICES, FOLLOW_UP_PROMPT, 16));
    expect(await followUpReserved(key, accountId, made.body.id)).to.equal(tokenCharge(FAST_PRICES, FOLLOW_UP_PROMPT + previousTotal, 16));
    await expectSettledAndAuditClean(gw, [key]);
  });

  it('reads a ResponseStored recorded before totalTokens was kept as no context (0 tokens)', async () => {
    const { key, accountId } = await gw.fundedAccount(100_000_000);
    const keyId = (await gw.store.readStream(accountStream(accountId))).map((e) => (e.data as { keyId?: string }).keyId).find((id) => id !== undefined)!;
    // A response the provider holds, recorded as the gateway recorded it before the field.
    const made = await fetch(`${gw.simulator.url}/v1/responses`, { method: 'POST', headers: { authorization: 'Bearer sim', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'upstream', input: 'old' }) });
    const responseId = ((await made.json()) as { id: string }).id;
    const data = { responseId, accountId, keyId, model: 'chat-fast', channel: 'default', at: new Date().toISOString() };
    await recordFact(gw.store, storedResponseStream(responseId), { type: 'ResponseStored', data }, { expected: 'no_stream' });
    expect(await followUpReserved(key, accountId, responseId)).to.equal(tokenCharge(FAST_PRICES, FOLLOW_UP_PROMPT, 16));
    await expectSettledAndAuditClean(gw, [key]);
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
    expect(Object.keys(data).sort()).to.deep.equal(['accountId', 'at', 'channel', 'keyId', 'model', 'responseId', 'totalTokens']);
    const usage = (await gw.api(mine, 'GET', `/v1/responses/${id}`)).body.usage;
    expect(data.totalTokens, 'input plus output tokens, a number').to.equal(usage.input_tokens + usage.output_tokens);
    expect(data).to.include({ model: 'chat-fast', channel: 'default' });
    expect(JSON.stringify(data)).to.not.include('secret');
  });
});

describe('Responses: a provider id the gateway cannot or must not record @integration', () => {
  let gw: TestGateway;
  const reads: string[] = [];

  before(async () => {
    // A provider that answers every create with the id the prompt names, and counts the reads.
    gw = await gatewayCreatingResponses((ctx) => {
      const id = String((ctx.body as { input: string }).input);
      const usage = { input_tokens: 3, input_tokens_details: { cached_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 4 };
      ctx.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id, object: 'response', created_at: 1_767_225_600, status: 'completed', model: 'upstream', output: [], usage }));
    });
    gw.simulator.addRoutes([
      {
        method: 'GET',
        path: '/v1/responses/:id',
        handler: (ctx: SimContext) => {
          reads.push(ctx.params.id!);
          ctx.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: ctx.params.id, object: 'response', status: 'completed', model: 'upstream', output: [] }));
        },
      },
    ]);
  });
  after(async () => gw.close());

  it('keeps the first record of an id a provider hands out twice: the second account cannot reach the first one’s response', async () => {
    const first = await gw.fundedAccount(100_000_000);
    const second = await gw.fundedAccount(100_000_000);
    for (const { key } of [first, second]) expect((await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', input: 'resp_twice' })).status).to.equal(200);
    expect((await gw.api(second.key, 'GET', '/v1/responses/resp_twice')).status).to.equal(404);
    expect(reads, 'the second account reached no provider').to.deep.equal([]);
    expect((await gw.api(first.key, 'GET', '/v1/responses/resp_twice')).status).to.equal(200);
    expect(reads).to.deep.equal(['resp_twice']);
    await expectSettledAndAuditClean(gw, [first.key, second.key]);
  });

  it('records no id that could not name a stream or a path segment safely', async () => {
    const { key } = await gw.fundedAccount(100_000_000);
    const res = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', input: 'resp with spaces' });
    expect(res.status).to.equal(200);
    const { rows } = await gw.pool.query(`SELECT 1 FROM es_events WHERE type = 'ResponseStored' AND data->>'responseId' = $1`, ['resp with spaces']);
    expect(rows).to.deep.equal([]);
    await expectSettledAndAuditClean(gw, [key]);
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

describe('Responses: built-in tool calls, cached and reasoning tokens, function calls, billed in one settlement @integration', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  after(async () => gw.close());

  async function account(): Promise<{ key: string; accountId: string }> {
    const { key, accountId } = await gw.fundedAccount(100_000_000);
    return { key, accountId };
  }

  it('charges each built-in tool call the output carries at its price, beside the tokens, plain and streamed', async () => {
    for (const stream of [false, true]) {
      const { key, accountId } = await account();
      const body = { model: 'chat-pro', input: 'look it up [sim:web-search=2] [sim:image-generation=1] [sim:tokens=3]', tools: [{ type: 'web_search' }, { type: 'image_generation' }], max_output_tokens: 50, stream };
      const res = await gw.api(key, 'POST', '/v1/responses', body);
      expect(res.status).to.equal(200);
      const response = stream ? sseEvents(res.body).at(-1)!.response : res.body;
      if (stream) for (const event of sseEvents(res.body)) assertResponseStreamEventAsTheApiSendsIt(event);
      else assertOpenAiSchema('Response', response);
      expect(response.output.map((item: { type: string }) => item.type)).to.deep.equal(['web_search_call', 'web_search_call', 'image_generation_call', 'message']);
      const { reserved, settled } = await latestSettlement(gw, accountId);
      const tokens = tokenLine(PRO_PRICES, response.usage.input_tokens, response.usage.output_tokens);
      expect(settled.pricing.lines.map((line) => line.units)).to.deep.equal([tokens.units, { image_generation_calls: 1 }, { web_search_calls: 2 }]);
      expect(settled.amount).to.equal(tokens.amount + 300_000 + 2 * 25_000);
      expect(settled.usage).to.deep.include({ built_in_tool_calls: { web_search: 2, image_generation: 1 } });
      expect(settled.overrun, 'within the four calls of each tool reserved').to.equal(0);
      expect(reserved).to.be.at.least(settled.amount);
    }
    await expectSettledAndAuditClean(gw, []);
  });

  it('charges calls beyond max_tool_calls × the price as an overrun of the reservation', async () => {
    const { key, accountId } = await account();
    const res = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-pro', input: 'search [sim:web-search=3] [sim:tokens=2]', tools: [{ type: 'web_search' }], max_tool_calls: 1, max_output_tokens: 16 });
    expect(res.status).to.equal(200);
    const { settled } = await latestSettlement(gw, accountId);
    expect(settled.usage).to.deep.include({ built_in_tool_calls: { web_search: 3 } });
    expect(settled.overrun).to.be.greaterThan(0);
    expect(settled.amount - settled.reservedAmount).to.equal(settled.overrun);
  });

  it('prices cached input at the cached price and records reasoning tokens; the usage reaches the client complete', async () => {
    const { key, accountId } = await account();
    const res = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-pro', input: 'think about it [sim:cached=5] [sim:reasoning=3] [sim:tokens=4]', reasoning: { effort: 'low' }, max_output_tokens: 50 });
    expect(res.status).to.equal(200);
    assertOpenAiSchema('Response', res.body);
    const usage = res.body.usage;
    expect(usage.input_tokens_details).to.include({ cached_tokens: 5 });
    expect(usage.output_tokens_details).to.include({ reasoning_tokens: 3 });
    const { settled } = await latestSettlement(gw, accountId);
    const line = chatTokenLine(PRO_PRICES, { input: usage.input_tokens, cachedInput: 5, output: usage.output_tokens });
    expect(settled.pricing.lines.map((l) => l.units)).to.deep.equal([{ input_tokens: usage.input_tokens - 5, cached_input_tokens: 5, output_tokens: usage.output_tokens }]);
    expect(settled.amount).to.equal(line.amount);
    expect(settled.usage).to.include({ cached_input_tokens: 5, reasoning_tokens: 3 });
    await expectSettledAndAuditClean(gw, [key]);
  });

  it('a function call round trip: the call, then its output answered; every item validates', async () => {
    const { key } = await account();
    const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
    const first = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', input: 'weather? [sim:tool=lookup]', tools });
    expect(first.status).to.equal(200);
    assertOpenAiSchema('Response', first.body);
    const call = first.body.output.find((item: { type: string }) => item.type === 'function_call');
    expect(call).to.include({ name: 'lookup' });
    const second = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', previous_response_id: first.body.id, tools, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }] });
    expect(second.status, JSON.stringify(second.body)).to.equal(200);
    assertOpenAiSchema('Response', second.body);
    expect(second.body.output.at(-1).type).to.equal('message');
    await expectSettledAndAuditClean(gw, [key]);
  });

  it('a client that leaves a function-call stream is charged for the name and arguments delivered', async () => {
    const { key, accountId } = await account();
    const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    const body = { model: 'chat-fast', input: 'weather? [sim:tool=lookup] [sim:tool-args={"city": "Paris and Lyon and Nice and Marseille"}] [sim:stall]', tools, stream: true, max_output_tokens: 100 };
    const controller = new AbortController();
    const res = await request(`${gw.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: controller.signal });
    let text = '';
    for await (const piece of res.body) {
      text += String(piece);
      // Two whole delta events (the stall's two), each ended by its blank line: a socket read may split one.
      if (completeEvents(text).filter((e) => e.type === 'response.function_call_arguments.delta').length >= 2) break;
    }
    controller.abort();
    const events = completeEvents(text);
    for (const event of events) assertResponseStreamEventAsTheApiSendsIt(event);
    const args = events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta as string).join('');
    expect(args.length).to.be.greaterThan(0);
    const { settled } = await latestSettlement(gw, accountId);
    expect(settled.usage).to.include({ output_tokens: countTokens(`lookup${args}`, 'o200k_base'), interrupted: 'client_disconnected' });
    await expectSettledAndAuditClean(gw, [key]);
  });

  it('a provider error in a refusal stream: charged for the refusal deltas delivered, as chat counts refusals', async () => {
    const { key, accountId } = await account();
    const res = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-fast', input: 'no [sim:refusal] [sim:stream-error=server_error]', stream: true, max_output_tokens: 100 });
    expect(res.status).to.equal(200);
    const events = sseEvents(res.body);
    for (const event of events) assertResponseStreamEventAsTheApiSendsIt(event);
    const refusal = events.filter((e) => e.type === 'response.refusal.delta').map((e) => e.delta as string).join('');
    expect(refusal.length, 'the simulator streamed refusal deltas').to.be.greaterThan(0);
    expect(events.at(-1)!.type).to.equal('response.failed');
    const { settled } = await latestSettlement(gw, accountId);
    expect(settled.usage).to.include({ output_tokens: countTokens(refusal, 'o200k_base'), interrupted: 'upstream_failed' });
    await expectSettledAndAuditClean(gw, [key]);
  });

  it('a provider error in a function-call stream: response.failed carries the call with the arguments delivered, charged for them', async () => {
    const { key, accountId } = await account();
    const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    const body = { model: 'chat-fast', input: 'weather? [sim:tool=lookup] [sim:tool-args={"city": "Paris and Lyon and Nice"}] [sim:stream-error=server_error]', tools, stream: true, max_output_tokens: 100 };
    const res = await gw.api(key, 'POST', '/v1/responses', body);
    expect(res.status).to.equal(200);
    const events = sseEvents(res.body);
    for (const event of events) assertResponseStreamEventAsTheApiSendsIt(event);
    const args = events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta as string).join('');
    expect(args.length).to.be.greaterThan(0);
    const failed = events.at(-1)!;
    expect(failed.type).to.equal('response.failed');
    expect(failed.response.output).to.deep.equal([{ ...events.find((e) => e.type === 'response.output_item.added')!.item, arguments: args, status: 'incomplete' }]);
    const { settled } = await latestSettlement(gw, accountId);
    expect(settled.usage).to.include({ output_tokens: countTokens(`lookup${args}`, 'o200k_base'), interrupted: 'upstream_failed' });
    await expectSettledAndAuditClean(gw, [key]);
  });
});

describe('Responses: a cut stream is charged for the reasoning-summary text delivered @integration', () => {
  let gw: TestGateway;
  const SUMMARY = ['The user asks ', 'about the weather; ', 'I should look it up.'];

  before(async () => {
    // The simulator streams no reasoning summaries: this provider streams a reasoning item's summary, then breaks off.
    gw = await gatewayCreatingResponses((ctx) => {
      let sequence = 0;
      const event = (type: string, fields: object): string => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
      const response = { id: 'resp_summary_0001', object: 'response', created_at: 1_767_225_600, status: 'in_progress', model: 'upstream', output: [], usage: null };
      const where = { item_id: 'rs_0001', output_index: 0, summary_index: 0 };
      ctx.res.writeHead(200, { 'content-type': 'text/event-stream' });
      ctx.res.write(event('response.created', { response }));
      ctx.res.write(event('response.output_item.added', { output_index: 0, item: { type: 'reasoning', id: 'rs_0001', summary: [] } }));
      for (const delta of SUMMARY) ctx.res.write(event('response.reasoning_summary_text.delta', { ...where, delta }));
      ctx.res.end();
    });
  });
  after(async () => gw.close());

  it('a reasoning summary broken off by the provider: charged for the summary deltas delivered', async () => {
    const { key, accountId } = await gw.fundedAccount(100_000_000);
    const res = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-pro', input: 'weather?', reasoning: { effort: 'low', summary: 'auto' }, stream: true, max_output_tokens: 100 });
    expect(res.status).to.equal(200);
    const deltas = sseEvents(res.body).filter((e) => e.type === 'response.reasoning_summary_text.delta').map((e) => e.delta as string);
    expect(deltas).to.deep.equal(SUMMARY);
    const { settled } = await latestSettlement(gw, accountId);
    expect(settled.usage).to.include({ output_tokens: countTokens(SUMMARY.join(''), 'o200k_base'), interrupted: 'upstream_failed' });
    await expectSettledAndAuditClean(gw, [key]);
  });
});

/** The events of a Responses stream's text, each parsed. */
function sseEvents(text: string): any[] {
  return text
    .split('\n\n')
    .flatMap((frame) => frame.split('\n').filter((line) => line.startsWith('data: ')))
    .map((line) => JSON.parse(line.slice(6)));
}

/** The events of a stream's text read so far that are whole (ended by their blank line), each parsed. */
function completeEvents(text: string): any[] {
  return sseEvents(text.slice(0, text.lastIndexOf('\n\n') + 2));
}
