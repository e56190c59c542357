import { expect } from 'chai';
import { Readable } from 'node:stream';
import OpenAI from 'openai';
import { tokenCharge } from '../../src/billing/money';
import { countMessageTokens, countResponsesInputTokens, countTokens } from '../../src/billing/tokens';
import { parseSse, type SseEvent } from '../../src/upstreams/sse';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectSettledAndAuditClean } from '../support/wait';
import { assertOpenAiSchema, assertResponseStreamEventAsTheApiSendsIt, openAiSchemaErrors } from '../support/openai-schema';

const FAST = { input_per_million: 1_000_000, output_per_million: 4_000_000 };
const FAST_TOKENIZER = 'o200k_base';

/** Everything a stream sent, as server-sent events. */
async function sseEvents(text: string): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of parseSse(Readable.from([text]))) events.push(event);
  return events;
}

/** The text the `response.output_text.delta` events of a stream delivered. */
function deltaText(events: readonly { type: string; delta?: string }[]): string {
  return events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta!).join('');
}

describe("what the gateway answers validates against OpenAI's official OpenAPI document @integration", () => {
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;

  before(async () => {
    // The upstream deadline ends the stall tests; long enough for a busy machine's ordinary calls.
    gw = await startTestGateway({ UPSTREAM_TIMEOUT_MS: '3000', RATE_LIMIT_PER_MINUTE: '100000' });
    ({ key } = await gw.fundedAccount(1_000_000_000));
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterEach(async () => expectSettledAndAuditClean(gw, [key]));
  after(async () => gw.close());

  const available = async () => (await gw.balance(key)).available;

  async function post(path: string, body: unknown): Promise<Response> {
    return fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  /** A chat stream's `data:` items, `[DONE]` apart, parsed; and whether `[DONE]` ended it. */
  async function chatStream(body: unknown): Promise<{ items: any[]; done: boolean }> {
    const res = await post('/v1/chat/completions', { ...(body as object), stream: true });
    expect(res.status).to.equal(200);
    const events = await sseEvents(await res.text());
    const done = events.at(-1)?.data === '[DONE]';
    return { items: events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data)), done };
  }

  /** A Responses stream's events, each checked to repeat its `event:` name in its `type`. */
  async function responsesStream(body: unknown): Promise<any[]> {
    const res = await post('/v1/responses', { ...(body as object), stream: true });
    expect(res.status).to.equal(200);
    return (await sseEvents(await res.text())).map((e) => {
      const event = JSON.parse(e.data);
      expect(e.event).to.equal(event.type);
      return event;
    });
  }

  it('chat completions, plain: reported usage, counted usage and a cut answer are CreateChatCompletionResponse', async () => {
    for (const content of ['Name three colours [sim:tokens=7]', 'No usage [sim:no-usage]', 'Long [sim:tokens=50]']) {
      const completion = await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content }], max_tokens: 20 });
      assertOpenAiSchema('CreateChatCompletionResponse', completion, content);
    }
  });

  it('chat completions, streamed with and without include_usage (reported or counted): every chunk is CreateChatCompletionStreamResponse', async () => {
    for (const content of ['Story [sim:tokens=9]', 'No usage [sim:no-usage]']) {
      for (const include_usage of [true, false]) {
        const { items, done } = await chatStream({ model: 'chat-fast', messages: [{ role: 'user', content }], ...(include_usage ? { stream_options: { include_usage } } : {}) });
        expect(done).to.equal(true);
        expect(items.at(-1).choices.length === 0).to.equal(include_usage);
        for (const chunk of items) assertOpenAiSchema('CreateChatCompletionStreamResponse', chunk, `a chunk of "${content}" (include_usage ${include_usage})`);
      }
    }
  });

  it("chat completions: a provider's error inside a stream reaches the client with its code and message, and what was delivered is charged", async () => {
    const messages = [{ role: 'user' as const, content: 'Fail midway [sim:tokens=30] [sim:stream-error=server_overloaded]' }];
    const before = await available();
    const { items, done } = await chatStream({ model: 'chat-fast', messages });
    const charge = before - (await available());
    expect(done, 'a failed stream ends without [DONE], as OpenAI ends it').to.equal(false);
    const error = items.pop();
    // Not a chunk: OpenAI's live API ends a failed chat stream with an item `{"error": …}` of the
    // ErrorResponse shape, which the openai SDK raises as an APIError; the document has no schema
    // for it among the chunks.
    assertOpenAiSchema('ErrorResponse', error, 'the error item of a chat stream');
    expect(error.error).to.deep.include({ code: 'server_overloaded', message: 'upstream: Simulated provider error in the stream (server_overloaded)' });
    for (const chunk of items) assertOpenAiSchema('CreateChatCompletionStreamResponse', chunk);
    const delivered = items.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(delivered.trim().split(/\s+/)).to.have.length(2);
    expect(charge).to.equal(tokenCharge(FAST, countMessageTokens(messages, FAST_TOKENIZER), countTokens(delivered, FAST_TOKENIZER)));

    // The openai SDK raises it with the provider's message.
    const stream = await client.chat.completions.create({ model: 'chat-fast', messages, stream: true });
    let raised: unknown = null;
    try {
      for await (const _chunk of stream);
    } catch (err) {
      raised = err;
    }
    expect(raised).to.be.instanceOf(OpenAI.APIError);
    expect((raised as Error).message).to.include('Simulated provider error in the stream (server_overloaded)');
  });

  it('Responses, plain: reported usage, counted usage and an incomplete answer are a Response with every usage detail', async () => {
    for (const input of ['Hello [sim:tokens=6]', 'No usage [sim:no-usage]', 'Long [sim:tokens=50]']) {
      const response = await post('/v1/responses', { model: 'chat-fast', input, max_output_tokens: 20 });
      expect(response.status).to.equal(200);
      const body = (await response.json()) as { usage: { input_tokens_details: unknown } };
      assertOpenAiSchema('Response', body, input);
      expect(body.usage.input_tokens_details).to.deep.equal({ cached_tokens: 0, cache_write_tokens: 0 });
    }
    // The SDK's parse of the same answer validates too (it adds output_text, a member the schema leaves open).
    assertOpenAiSchema('Response', await client.responses.create({ model: 'chat-fast', input: 'SDK [sim:tokens=3]' }));
  });

  it('Responses, streamed: every event, to response.completed or response.incomplete, validates as its variant', async () => {
    for (const input of ['Stream [sim:tokens=12]', 'No usage [sim:no-usage]', 'Long [sim:tokens=50]']) {
      const events = await responsesStream({ model: 'chat-fast', input, max_output_tokens: 20 });
      expect(['response.completed', 'response.incomplete']).to.include(events.at(-1).type);
      for (const event of events) assertResponseStreamEventAsTheApiSendsIt(event);
    }
  });

  /**
   * A Responses stream that breaks off after two tokens: every event validated, the last two
   * `error` and `response.failed`, the failed response carrying the text delivered, and the
   * charge that of the text delivered.
   */
  async function brokenResponsesStream(input: string): Promise<{ error: any; failed: any }> {
    const before = await available();
    const events = await responsesStream({ model: 'chat-fast', input });
    const charge = before - (await available());
    for (const event of events) assertResponseStreamEventAsTheApiSendsIt(event);
    expect(events.map((e) => e.type).filter((t) => t === 'error' || t === 'response.failed')).to.deep.equal(['error', 'response.failed']);
    const [error, failed] = events.slice(-2);
    expect([error.type, failed.type]).to.deep.equal(['error', 'response.failed']);
    const delivered = deltaText(events);
    expect(delivered.trim().split(/\s+/)).to.have.length(2);
    expect(failed.response.output).to.have.length(1);
    expect(failed.response.output[0]).to.deep.include({ type: 'message', role: 'assistant', status: 'incomplete' });
    expect(failed.response.output[0].content.map((part: { text: string }) => part.text)).to.deep.equal([delivered]);
    expect(charge).to.equal(tokenCharge(FAST, countResponsesInputTokens(input, FAST_TOKENIZER), countTokens(delivered, FAST_TOKENIZER)));
    return { error, failed };
  }

  it('Responses, streamed: a stalled provider ends with error and response.failed (a ResponseErrorCode, the gateway code in the message, the output delivered), charged what was delivered', async () => {
    const { error, failed } = await brokenResponsesStream('Stall [sim:stall]');
    expect(error).to.deep.include({ code: 'upstream_timeout', message: 'upstream: channel default timed out' });
    expect(failed.response.error).to.deep.equal({ code: 'server_error', message: 'upstream_timeout: upstream: channel default timed out' });
  });

  it("Responses, streamed: a provider's error event reaches the client with its code and message, then response.failed with the output delivered; what was delivered is charged", async () => {
    const { error, failed } = await brokenResponsesStream('Fail midway [sim:tokens=30] [sim:stream-error=server_overloaded]');
    expect(error).to.deep.include({ code: 'server_overloaded', message: 'upstream: Simulated provider error in the stream (server_overloaded)' });
    expect(failed.response.error).to.deep.equal({ code: 'server_error', message: 'server_overloaded: upstream: Simulated provider error in the stream (server_overloaded)' });
  });

  it('images: per-image URLs and base64, and a token-billed model with usage, are ImagesResponse (the usage as the spec has it)', async () => {
    for (const body of [
      { model: 'image-5.0', prompt: 'a lighthouse', n: 2 },
      { model: 'image-4.5', prompt: 'a lighthouse', response_format: 'b64_json' },
    ]) {
      const res = await gw.api(key, 'POST', '/v1/images/generations', body);
      expect(res.status).to.equal(200);
      assertOpenAiSchema('ImagesResponse', res.body, body.model);
    }
    const tokens = await gw.api(key, 'POST', '/v1/images/generations', { model: 'image-tokens', prompt: 'a lighthouse', response_format: 'b64_json' });
    expect(tokens.status).to.equal(200);
    // The spec gives a token-billed image answer `usage` of input_tokens, output_tokens and
    // total_tokens, and an answer the spec describes stays as it is; OpenAI's ImageGenUsage also
    // requires input_tokens_details. That member is the one difference: the rest validates.
    const { usage, ...answer } = tokens.body;
    assertOpenAiSchema('ImagesResponse', answer, 'image-tokens');
    expect(openAiSchemaErrors('ImageGenUsage', usage)).to.equal(`/ must have required property 'input_tokens_details' {"missingProperty":"input_tokens_details"}`);
  });

  it('models: the list is ListModelsResponse, one model is Model', async () => {
    const list = await gw.api(key, 'GET', '/v1/models');
    assertOpenAiSchema('ListModelsResponse', list.body);
    const one = await gw.api(key, 'GET', '/v1/models/chat-fast');
    assertOpenAiSchema('Model', one.body);
  });

  it('errors: 400, 401, 402, 404, 429 and 502 on chat, Responses, images and models are ErrorResponse', async () => {
    const poor = await gw.fundedAccount(1);
    const chat = (content: string) => ({ model: 'chat-fast', messages: [{ role: 'user', content }] });
    // `mend`: the case left chat-fast's only channel cooling down or disabled; the operator's mend
    // lets the next case reach the provider.
    const cases: { auth: string | null; method: string; path: string; body?: unknown; status: number; mend?: true }[] = [
      { auth: key, method: 'POST', path: '/v1/chat/completions', body: { ...chat('x'), temperature: 3 }, status: 400 },
      { auth: key, method: 'POST', path: '/v1/chat/completions', body: chat('x [sim:status=400]'), status: 400 },
      { auth: null, method: 'POST', path: '/v1/chat/completions', body: chat('x'), status: 401 },
      { auth: poor.key, method: 'POST', path: '/v1/chat/completions', body: chat('x'), status: 402 },
      { auth: key, method: 'POST', path: '/v1/chat/completions', body: chat('x [sim:status=429]'), status: 429 },
      // The gateway's own 429 while the channel cools down, sent nowhere.
      { auth: key, method: 'POST', path: '/v1/chat/completions', body: chat('x'), status: 429, mend: true },
      { auth: key, method: 'POST', path: '/v1/chat/completions', body: chat('x [sim:fail]'), status: 502 },
      { auth: key, method: 'POST', path: '/v1/chat/completions', body: chat('x [sim:status=401]'), status: 502 },
      // The gateway's own 502 while the refused channel stays disabled.
      { auth: key, method: 'POST', path: '/v1/chat/completions', body: chat('x'), status: 502, mend: true },
      { auth: key, method: 'POST', path: '/v1/responses', body: { model: 'chat-fast', input: [] }, status: 400 },
      { auth: key, method: 'POST', path: '/v1/responses', body: { model: 'chat-fast', input: 'x [sim:fail]' }, status: 502 },
      { auth: key, method: 'POST', path: '/v1/images/generations', body: { model: 'image-4.5', prompt: 'x', output_format: 'png' }, status: 400 },
      { auth: key, method: 'GET', path: '/v1/models/no-such-model', status: 404 },
    ];
    for (const c of cases) {
      const res = await gw.api(c.auth, c.method, c.path, c.body);
      expect(res.status, `${c.method} ${c.path} ${JSON.stringify(c.body)}`).to.equal(c.status);
      assertOpenAiSchema('ErrorResponse', res.body, `the ${c.status} of ${c.method} ${c.path}`);
      if (c.mend) gw.upstreams.mend('default');
    }
  });

  it("passes a provider's Retry-After on to the client unchanged (chat plain and streamed, Responses); 1 s when it sent none", async () => {
    // Each 429 cools chat-fast's only channel down; mended, the next call reaches the provider again.
    const retryAfterOf = async (path: string, body: unknown) => {
      const res = await post(path, body);
      expect(res.status).to.equal(429);
      const error = (await res.json()) as { error: { code: string } };
      assertOpenAiSchema('ErrorResponse', error);
      expect(error.error.code, "the provider's own 429").to.equal('upstream_rate_limited');
      gw.upstreams.mend('default');
      return res.headers.get('retry-after');
    };
    const chat = (content: string, stream = false) => ({ model: 'chat-fast', messages: [{ role: 'user', content }], stream });
    expect(await retryAfterOf('/v1/chat/completions', chat('x [sim:status=429] [sim:retry-after=17]'))).to.equal('17');
    expect(await retryAfterOf('/v1/chat/completions', chat('x [sim:status=429] [sim:retry-after=17]', true))).to.equal('17');
    expect(await retryAfterOf('/v1/responses', { model: 'chat-fast', input: 'x [sim:status=429] [sim:retry-after=17]' })).to.equal('17');
    expect(await retryAfterOf('/v1/chat/completions', chat('x [sim:status=429]'))).to.equal('1');
    // Through the SDK, which reads it to decide when to retry.
    try {
      await client.chat.completions.create(chat('x [sim:status=429] [sim:retry-after=17]') as never);
      expect.fail('expected a 429');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.RateLimitError);
      expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).to.equal('17');
    }
    gw.upstreams.mend('default');
    // A provider refusing the gateway's own key stays the gateway's 502, whatever else it sent.
    const refused = await gw.api(key, 'POST', '/v1/chat/completions', chat('x [sim:status=401] [sim:retry-after=17]'));
    expect(refused.status).to.equal(502);
    expect(refused.body.error).to.deep.include({ code: 'upstream_auth_failed', message: "upstream: channel default: the provider refused the gateway's credentials (HTTP 401)" });
    expect(refused.headers.get('retry-after')).to.equal(null);
    gw.upstreams.mend('default');
  });
});
