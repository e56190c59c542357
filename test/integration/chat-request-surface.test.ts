import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { request } from 'undici';
import { DEFAULT_CATALOG_FILE, type ModelEntry } from '../../src/billing/catalog';
import { tokenCharge } from '../../src/billing/money';
import { countChatPromptTokens, countMessageTokens, countTokens, type CountedMessage } from '../../src/billing/tokens';
import { accountStream } from '../../src/domain/account/events';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { chunk, completion, scriptedChatUpstream, type ScriptedChat } from '../support/scripted-chat';
import { assertOpenAiSchema } from '../support/openai-schema';
import { removeTestTempDir, testTempDir } from '../support/temp-dirs';
import { latestSettlement } from '../support/settlements';

const FAST = { input_per_million: 1_000_000, output_per_million: 4_000_000 };
const PRO = { input_per_million: 4_000_000, output_per_million: 16_000_000 };

const WEATHER_TOOL = { type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };

/** The `data:` items of a streamed answer, each parsed, `[DONE]` kept as the string. */
function streamItems(text: string): any[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => frame.slice(6))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}

describe('chat completions: the request surface beyond the spec, its refusals and its money @integration', () => {
  let gw: TestGateway;
  let upstream: ScriptedChat;
  let catalogDir: string;

  before(async () => {
    // A model that takes nothing beyond the spec's text chat, beside the built-in ones.
    const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: ModelEntry[] };
    const fast = catalog.models.find((model) => model.id === 'chat-fast')!;
    catalog.models.push({ ...fast, id: 'chat-plain', pricing: FAST, capabilities: { max_output_tokens: 4096, context_window: 32768, responses: true } });
    catalogDir = testTempDir('chat-surface-catalog-');
    writeFileSync(join(catalogDir, 'catalog.json'), JSON.stringify(catalog));
    gw = await startTestGateway({ CATALOG_FILE: join(catalogDir, 'catalog.json'), RATE_LIMIT_PER_MINUTE: '100000' });
    upstream = scriptedChatUpstream(gw);
  });
  afterEach(async () => gw.expectAuditClean());
  after(async () => {
    await gw.close();
    removeTestTempDir(catalogDir);
  });

  /** A funded account of the test's own, so that its event stream holds only the test's calls. */
  async function account(): Promise<{ accountId: string; key: string }> {
    return gw.fundedAccount(100_000_000);
  }

  async function accountEvents(accountId: string): Promise<{ type: string; data: any }[]> {
    return (await gw.store.readStream(accountStream(accountId))) as unknown as { type: string; data: any }[];
  }

  async function chat(key: string, body: object): Promise<{ status: number; body: any }> {
    const res = await gw.api(key, 'POST', '/v1/chat/completions', body);
    if (res.status === 200) assertOpenAiSchema('CreateChatCompletionResponse', res.body);
    else assertOpenAiSchema('ErrorResponse', res.body);
    return res;
  }

  /** A streamed chat read whole; every item validated against OpenAI's document. */
  async function streamedChat(key: string, body: object): Promise<any[]> {
    const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) });
    expect(res.statusCode).to.equal(200);
    const items = streamItems(await res.body.text());
    for (const item of items) if (item !== '[DONE]') assertOpenAiSchema('CreateChatCompletionStreamResponse', item);
    return items;
  }

  describe('what a model does not take is refused, naming the field, before anything is reserved', () => {
    const user = (content: unknown) => [{ role: 'user', content }];
    const refusals: [what: string, body: Record<string, unknown>, param: string][] = [
      ['tools', { model: 'chat-plain', messages: user('hi'), tools: [WEATHER_TOOL] }, 'tools'],
      ['tool_choice', { model: 'chat-plain', messages: user('hi'), tool_choice: 'none' }, 'tool_choice'],
      ['parallel_tool_calls', { model: 'chat-plain', messages: user('hi'), parallel_tool_calls: false }, 'parallel_tool_calls'],
      ['functions', { model: 'chat-plain', messages: user('hi'), functions: [WEATHER_TOOL.function] }, 'functions'],
      ['function_call', { model: 'chat-plain', messages: user('hi'), function_call: 'auto' }, 'function_call'],
      ['a tool turn', { model: 'chat-plain', messages: [...user('hi'), { role: 'tool', tool_call_id: 'c1', content: 'sunny' }] }, 'messages[1].role'],
      ['a function turn', { model: 'chat-plain', messages: [...user('hi'), { role: 'function', name: 'f', content: 'sunny' }] }, 'messages[1].role'],
      ['an assistant turn with tool calls', { model: 'chat-plain', messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, ...user('hi')] }, 'messages[0].tool_calls'],
      ['an assistant turn with a function call', { model: 'chat-plain', messages: [{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }, ...user('hi')] }, 'messages[0].function_call'],
      ['response_format json_object', { model: 'chat-plain', messages: user('hi'), response_format: { type: 'json_object' } }, 'response_format'],
      ['response_format json_schema', { model: 'chat-plain', messages: user('hi'), response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } } }, 'response_format'],
      ['an image part', { model: 'chat-plain', messages: user([{ type: 'text', text: 'what is it' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }]) }, 'messages[0].content[1]'],
      ['logprobs', { model: 'chat-plain', messages: user('hi'), logprobs: true }, 'logprobs'],
      ['top_logprobs', { model: 'chat-plain', messages: user('hi'), top_logprobs: 2 }, 'top_logprobs'],
      ['n above 1 where max_n is absent', { model: 'chat-plain', messages: user('hi'), n: 2 }, 'n'],
      ['an audio part', { model: 'chat-fast', messages: user([{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }]) }, 'messages[0].content[0]'],
      ['a file part', { model: 'chat-fast', messages: user([{ type: 'file', file: { file_id: 'file-1' } }]) }, 'messages[0].content[0]'],
      // A provider file id resolves under the gateway's one provider account, where any account could name another's.
      ['a file part by file_id, even on a model with file input', { model: 'chat-pro', messages: user([{ type: 'file', file: { file_id: 'file-1' } }]) }, 'messages[0].content[0].file.file_id'],
      ['modalities with audio', { model: 'chat-fast', messages: user('hi'), modalities: ['text', 'audio'] }, 'modalities'],
      ['audio', { model: 'chat-fast', messages: user('hi'), audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
      ['reasoning_effort', { model: 'chat-fast', messages: user('hi'), reasoning_effort: 'low' }, 'reasoning_effort'],
      ['n above max_n', { model: 'chat-fast', messages: user('hi'), n: 5 }, 'n'],
      ['an extra field the model does not list', { model: 'chat-fast', messages: user('hi'), thinking: { type: 'enabled' } }, 'thinking'],
      ['an extra field no model lists', { model: 'chat-pro', messages: user('hi'), colour: 'blue' }, 'colour'],
      ['a service tier the catalog has no prices for', { model: 'chat-pro', messages: user('hi'), service_tier: 'priority' }, 'service_tier'],
      ['web search, which a chat completion does not report per call', { model: 'chat-pro', messages: user('hi'), web_search_options: {} }, 'web_search_options'],
    ];
    for (const [what, body, param] of refusals) {
      it(`${what} → 400 naming ${param}; balance, account events and the upstream untouched`, async () => {
        const { accountId, key } = await account();
        const [balance, events, calls] = [await gw.balance(key), (await accountEvents(accountId)).length, upstream.received.length];
        const res = await chat(key, body);
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        // A field OpenAI does not define is unknown; one it defines that the model does not take, unsupported.
        const code = param === 'thinking' || param === 'colour' ? 'unknown_parameter' : 'unsupported_parameter';
        expect(res.body.error).to.include({ type: 'invalid_request_error', code, param });
        expect(await gw.balance(key)).to.deep.equal(balance);
        expect((await accountEvents(accountId)).length, 'no event on the account').to.equal(events);
        expect(upstream.received.length, 'no upstream call').to.equal(calls);
      });
    }

    it('the same features pass on a model that takes them, stream with n > 1 included', async () => {
      const { key } = await account();
      const answers = await Promise.all([
        chat(key, { model: 'chat-fast', messages: user('hi [sim:tokens=2]'), tools: [WEATHER_TOOL], tool_choice: 'auto', parallel_tool_calls: false, response_format: { type: 'json_object' }, logprobs: true, top_logprobs: 2, n: 4, top_k: 5 }),
        chat(key, { model: 'chat-pro', messages: user('hi [sim:tokens=2]'), reasoning_effort: 'low', thinking: { type: 'enabled' }, n: 8 }),
      ]);
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200]);
      const items = await streamedChat(key, { model: 'chat-fast', messages: user('hi [sim:tokens=2]'), n: 2 });
      expect(items.at(-1)).to.equal('[DONE]');
    });
  });

  describe('the reservation counts each non-text part at its allowance, and n completions', () => {
    /** The reservations of the same request with and without the part, on `model`. */
    async function reservedWithAndWithout(model: string, part: object): Promise<[number, number]> {
      const { accountId, key } = await account();
      const reserved: number[] = [];
      for (const content of [[{ type: 'text', text: 'Describe it [sim:tokens=3]' }, part], [{ type: 'text', text: 'Describe it [sim:tokens=3]' }]]) {
        expect((await chat(key, { model, messages: [{ role: 'user', content }], max_tokens: 10 })).status).to.equal(200);
        reserved.push((await latestSettlement(gw, accountId)).reserved);
      }
      return reserved as [number, number];
    }

    it('an image part reserves the model’s image allowance as input (chat-fast: 1000 tokens)', async () => {
      const [withPart, without] = await reservedWithAndWithout('chat-fast', { type: 'image_url', image_url: { url: 'https://example.com/a.png' } });
      expect(withPart - without).to.equal(tokenCharge(FAST, 1000, 0));
      const messages: CountedMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Describe it [sim:tokens=3]' }] }];
      expect(without).to.equal(tokenCharge(FAST, countMessageTokens(messages, 'o200k_base'), 10));
    });

    it('an audio part reserves the audio allowance (chat-pro: 2000 tokens)', async () => {
      const [withPart, without] = await reservedWithAndWithout('chat-pro', { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } });
      expect(withPart - without).to.equal(tokenCharge(PRO, 2000, 0));
    });

    it('a file part reserves the file allowance (chat-pro: 4000 tokens)', async () => {
      const [withPart, without] = await reservedWithAndWithout('chat-pro', { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,AAAA' } });
      expect(withPart - without).to.equal(tokenCharge(PRO, 4000, 0));
    });

    it('the context window holds the whole counted prompt: 33 image parts at 1000 tokens overfill chat-fast’s 32768, before anything is reserved', async () => {
      const { accountId, key } = await account();
      const image = { type: 'image_url', image_url: { url: 'https://example.com/a.png' } };
      const events = (await accountEvents(accountId)).length;
      const fits = await chat(key, { model: 'chat-fast', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'Which differ? [sim:tokens=2]' }, ...Array(32).fill(image)] }] });
      expect(fits.status).to.equal(200);
      const overfull = await chat(key, { model: 'chat-fast', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: 'Which differ?' }, ...Array(33).fill(image)] }] });
      expect([overfull.status, overfull.body.error.code, overfull.body.error.param]).to.deep.equal([400, 'context_length_exceeded', 'messages']);
      await latestSettlement(gw, accountId);
      expect((await accountEvents(accountId)).length, 'the first call reserved and settled; the second nothing').to.equal(events + 2);
    });

    it('tool definitions, tool calls, tool results and a json_schema are prompt: the reservation counts them', async () => {
      const { accountId, key } = await account();
      const schema = { name: 'weather', schema: { type: 'object', properties: { summary: { type: 'string' } } } };
      const body = {
        model: 'chat-fast',
        max_tokens: 10,
        tools: [WEATHER_TOOL],
        response_format: { type: 'json_schema', json_schema: schema },
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21 degrees' },
        ],
      };
      upstream.next({ answer: completion([[{ content: '{"summary":"sunny"}' }, 'stop']], { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 }) });
      expect((await chat(key, body)).status).to.equal(200);
      const tokens = (text: string) => countTokens(text, 'o200k_base');
      const textOnly = countMessageTokens([{ role: 'user', content: 'Weather in Paris?' }, { role: 'assistant', content: null }, { role: 'tool', content: 'sunny, 21 degrees' }], 'o200k_base');
      const definition = tokens('get_weather') + tokens('The weather in a city') + tokens(JSON.stringify(WEATHER_TOOL.function.parameters));
      const call = tokens('get_weather') + tokens('{"city":"Paris"}');
      const prompt = textOnly + definition + call + tokens(JSON.stringify(schema));
      expect((await latestSettlement(gw, accountId)).reserved).to.equal(tokenCharge(FAST, prompt, 10));
    });

    it('n completions reserve n times the output limit; without reported usage the settlement counts every choice', async () => {
      const { accountId, key } = await account();
      const messages = [{ role: 'user', content: 'Three names' }];
      const texts = ['Alice and Bob', 'Carol', 'Dave, Erin and Frank'];
      upstream.next({ answer: completion(texts.map((text) => [{ content: text }, 'stop'] as [object, string])) });
      const res = await chat(key, { model: 'chat-fast', messages, max_tokens: 20, n: 3 });
      expect(res.body.choices.map((c: { message: { content: string } }) => c.message.content)).to.deep.equal(texts);
      expect(upstream.received.at(-1)).to.include({ n: 3, max_tokens: 20 });
      const { reserved, settled } = await latestSettlement(gw, accountId);
      const prompt = countMessageTokens(messages, 'o200k_base');
      expect(reserved).to.equal(tokenCharge(FAST, prompt, 3 * 20));
      const output = countTokens(texts.join(''), 'o200k_base');
      expect(settled.usage).to.include({ prompt_tokens: prompt, completion_tokens: output });
      expect(settled.amount).to.equal(tokenCharge(FAST, prompt, output));
    });
  });

  describe('the settlement is the provider’s usage with its details', () => {
    it('cached input tokens are priced at the cached price; the client gets the usage details as sent', async () => {
      const { accountId, key } = await account();
      const usage = { prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010, prompt_tokens_details: { cached_tokens: 600, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
      upstream.next({ answer: completion([[{ content: 'ok' }, 'stop']], usage) });
      const res = await chat(key, { model: 'chat-fast', messages: [{ role: 'user', content: 'hello again' }] });
      expect(res.body.usage).to.deep.equal(usage);
      const { settled } = await latestSettlement(gw, accountId);
      // 400 at 1 a token, 600 cached at 0.25, 10 out at 4.
      expect(settled.amount).to.equal(400 + 150 + 40);
      expect(settled.pricing.lines.map((line) => line.units)).to.deep.equal([{ input_tokens: 400, cached_input_tokens: 600, output_tokens: 10 }]);
      expect(settled.usage).to.include({ prompt_tokens: 1000, completion_tokens: 10, cached_input_tokens: 600 });
    });

    it('reasoning tokens are output (in completion_tokens) and kept in the settlement’s usage; streamed usage details reach the client as sent', async () => {
      const { accountId, key } = await account();
      const usage = { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42, completion_tokens_details: { reasoning_tokens: 25 } };
      upstream.next({ chunks: [chunk([{ index: 0, delta: { role: 'assistant', content: 'Done.' }, finish_reason: null }]), chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]), chunk([], usage)] });
      const items = await streamedChat(key, { model: 'chat-pro', messages: [{ role: 'user', content: 'Think first' }], reasoning_effort: 'high', stream_options: { include_usage: true } });
      expect(items.at(-2).usage).to.deep.equal(usage);
      const { settled } = await latestSettlement(gw, accountId);
      expect(settled.amount).to.equal(tokenCharge(PRO, 12, 30));
      expect(settled.usage).to.include({ prompt_tokens: 12, completion_tokens: 30, reasoning_tokens: 25 });
    });

    it('the simulator as the provider: a tool call on chat-pro, its cached and reasoning tokens settled from the usage it reports', async () => {
      const { accountId, key } = await account();
      const res = await chat(key, {
        model: 'chat-pro',
        messages: [{ role: 'user', content: 'Weather in Paris? [sim:tool=get_weather] [sim:cached=5] [sim:reasoning=3]' }],
        tools: [WEATHER_TOOL],
        reasoning_effort: 'low',
      });
      expect(res.body.choices[0].finish_reason).to.equal('tool_calls');
      expect(res.body.choices[0].message.tool_calls[0].function.name).to.equal('get_weather');
      const usage = res.body.usage as { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number }; completion_tokens_details: { reasoning_tokens: number } };
      expect([usage.prompt_tokens_details.cached_tokens, usage.completion_tokens_details.reasoning_tokens]).to.deep.equal([5, 3]);
      const { settled } = await latestSettlement(gw, accountId);
      expect(settled.usage).to.include({ prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, cached_input_tokens: 5, reasoning_tokens: 3 });
      // chat-pro: input 4 a token, cached input 1, output 16.
      expect(settled.amount).to.equal((usage.prompt_tokens - 5) * 4 + 5 * 1 + usage.completion_tokens * 16);
    });

    it('a client that leaves a tool-call stream is charged for the tool-call arguments delivered', async () => {
      const { accountId, key } = await account();
      const call = (args: string, first = false) => ({ index: 0, ...(first ? { id: 'call_1', type: 'function' } : {}), function: { ...(first ? { name: 'get_weather' } : {}), arguments: args } });
      upstream.next({
        thenHang: true,
        chunks: [
          chunk([{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [call('', true)] }, finish_reason: null }]),
          chunk([{ index: 0, delta: { tool_calls: [call('{"city": ')] }, finish_reason: null }]),
          chunk([{ index: 0, delta: { tool_calls: [call('"Paris and Lyon and Nice')] }, finish_reason: null }]),
        ],
      });
      const body = { model: 'chat-fast', messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER_TOOL], stream: true, max_tokens: 100 };
      const controller = new AbortController();
      const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: controller.signal });
      let text = '';
      for await (const piece of res.body) {
        text += String(piece);
        if (text.includes('Nice')) break;
      }
      controller.abort();
      const relayed = streamItems(text.slice(0, text.lastIndexOf('\n\n') + 2));
      for (const item of relayed) assertOpenAiSchema('CreateChatCompletionStreamResponse', item);
      expect(relayed.flatMap((item) => item.choices[0].delta.tool_calls.map((c: { function: { arguments: string } }) => c.function.arguments)).join('')).to.equal('{"city": "Paris and Lyon and Nice');
      const { settled } = await latestSettlement(gw, accountId);
      const delivered = countTokens('get_weather{"city": "Paris and Lyon and Nice', 'o200k_base');
      expect(settled.usage).to.include({ completion_tokens: delivered, interrupted: 'client_disconnected' });
      expect(settled.amount).to.equal(tokenCharge(FAST, countChatPromptTokens(body.messages, body.tools, {}, 'o200k_base'), delivered));
    });
  });

  describe('the upstream body', () => {
    it('max_completion_tokens is forwarded as sent, never renamed; max_tokens, or neither, as before', async () => {
      const { key } = await account();
      const forwarded: object[] = [];
      for (const limit of [{ max_completion_tokens: 50 }, { max_tokens: 40 }, {}]) {
        expect((await chat(key, { model: 'chat-fast', messages: [{ role: 'user', content: 'hi [sim:tokens=2]' }], ...limit })).status).to.equal(200);
        const sent = upstream.received.at(-1)!;
        forwarded.push({ max_tokens: sent.max_tokens, max_completion_tokens: sent.max_completion_tokens });
      }
      expect(forwarded).to.deep.equal([
        { max_tokens: undefined, max_completion_tokens: 50 },
        { max_tokens: 40, max_completion_tokens: undefined },
        { max_tokens: 4096, max_completion_tokens: undefined },
      ]);
    });

    it('a reasoning model asked with no limit gets the planned one as max_completion_tokens (reasoning models refuse max_tokens)', async () => {
      const { key } = await account();
      const forwarded: object[] = [];
      for (const limit of [{}, { max_tokens: 40 }]) {
        expect((await chat(key, { model: 'chat-pro', messages: [{ role: 'user', content: 'hi [sim:tokens=2]' }], ...limit })).status).to.equal(200);
        const sent = upstream.received.at(-1)!;
        forwarded.push({ max_tokens: sent.max_tokens, max_completion_tokens: sent.max_completion_tokens });
      }
      expect(forwarded).to.deep.equal([
        { max_tokens: undefined, max_completion_tokens: 8192 },
        { max_tokens: 40, max_completion_tokens: undefined },
      ]);
    });

    it('the default service tiers are forwarded as sent', async () => {
      const { key } = await account();
      for (const tier of ['auto', 'default']) {
        expect((await chat(key, { model: 'chat-pro', messages: [{ role: 'user', content: 'hi [sim:tokens=2]' }], service_tier: tier })).status).to.equal(200);
        expect(upstream.received.at(-1)!.service_tier).to.equal(tier);
      }
    });

    it('fields OpenAI defines, the parts and a listed extra are forwarded; nulls are not', async () => {
      const { key } = await account();
      const body = {
        model: 'chat-pro',
        messages: [
          { role: 'developer', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'hi [sim:tokens=2]' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
        ],
        tools: [WEATHER_TOOL],
        tool_choice: 'auto',
        response_format: { type: 'json_object' },
        n: 2,
        top_k: 3,
        enable_thinking: false,
        metadata: { purpose: 'test' },
        temperature: null,
        stop: null,
      };
      expect((await chat(key, body)).status).to.equal(200);
      const sent = upstream.received.at(-1)!;
      const { temperature: _t, stop: _s, model: _m, ...forwarded } = body;
      expect(sent).to.deep.include(forwarded);
      expect(sent).to.not.have.any.keys('temperature', 'stop');
    });
  });

  describe('finish reasons', () => {
    const toolCall = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

    it('tool_calls reaches a request that offered tools; a request without tools is told stop', async () => {
      const { key } = await account();
      const reasons: string[] = [];
      for (const tools of [{ tools: [WEATHER_TOOL] }, {}]) {
        upstream.next({ answer: completion([[{ tool_calls: [toolCall] }, 'tool_calls']], { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) });
        const res = await chat(key, { model: 'chat-fast', messages: [{ role: 'user', content: 'Weather?' }], ...tools });
        reasons.push(res.body.choices[0].finish_reason);
      }
      expect(reasons).to.deep.equal(['tool_calls', 'stop']);
    });

    it('function_call reaches a request that offered functions; streamed, every choice index is relayed and mapped', async () => {
      const { key } = await account();
      const finals: string[][] = [];
      for (const functions of [{ functions: [WEATHER_TOOL.function] }, {}]) {
        upstream.next({
          chunks: [
            chunk([{ index: 0, delta: { role: 'assistant', function_call: { name: 'get_weather', arguments: '{}' } }, finish_reason: null }]),
            chunk([{ index: 1, delta: { role: 'assistant', refusal: 'I cannot.' }, finish_reason: null }]),
            chunk([{ index: 0, delta: {}, finish_reason: 'function_call' }]),
            chunk([{ index: 1, delta: {}, finish_reason: 'stop' }]),
            chunk([], { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }),
          ],
        });
        const items = await streamedChat(key, { model: 'chat-fast', messages: [{ role: 'user', content: 'Weather?' }], n: 2, ...functions });
        const choices = items.filter((item) => item !== '[DONE]').flatMap((item) => item.choices);
        expect(choices.find((c) => c.index === 1 && c.delta.refusal)?.delta.refusal).to.equal('I cannot.');
        finals.push(choices.filter((c) => c.finish_reason !== null).map((c) => `${c.index}:${c.finish_reason}`));
      }
      expect(finals).to.deep.equal([
        ['0:function_call', '1:stop'],
        ['0:stop', '1:stop'],
      ]);
    });
  });
});
