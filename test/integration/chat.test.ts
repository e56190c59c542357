import { expect } from 'chai';
import OpenAI from 'openai';
import type { Socket } from 'node:net';
import { Client, request } from 'undici';
import { tokenCharge } from '../../src/billing/money';
import { countMessageTokens, countResponsesInputTokens, countTokens } from '../../src/billing/tokens';
import { accountStream } from '../../src/domain/account/events';
import { chatRoutes } from '../../simulator/chat';
import type { SimContext } from '../../simulator/server';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { secondWriter } from '../support/second-writer';
import { sample, scrapeMetrics } from '../support/metrics';
import { sleep, waitFor } from '../support/wait';

const FAST = { input_per_million: 1_000_000, output_per_million: 4_000_000 };
const PRO = { input_per_million: 4_000_000, output_per_million: 16_000_000 };
/** The catalog's tokenizers of chat-fast and chat-pro: the gateway's own counts use them. */
const FAST_TOKENIZER = 'o200k_base';
const PRO_TOKENIZER = 'cl100k_base';

/** The text a chat completion stream delivered, from its raw `data:` lines. */
function deliveredChat(lines: string[]): string {
  const chunks = lines.filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6)));
  return chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');
}

describe('chat completions and the Responses interface through the openai SDK @integration', () => {
  let gw: TestGateway;
  let client: OpenAI;
  let accountId: string;
  let key: string;

  before(async () => {
    // The upstream deadline ends the stall tests; it is long enough that a busy machine's ordinary
    // calls (many at once in the ledger test) stay within it.
    gw = await startTestGateway({ UPSTREAM_TIMEOUT_MS: '3000', RATE_LIMIT_PER_MINUTE: '100000', SSE_PING_MS: '200' });
    ({ accountId, key } = await gw.fundedAccount(100_000_000));
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterEach(async () => {
    const me = await gw.api(key, 'GET', '/v1/account');
    expect(me.body.balance.frozen, 'no reservation is left open').to.equal(0);
    await gw.expectAuditClean();
  });
  after(async () => gw.close());

  async function charged<T>(work: () => Promise<T>): Promise<{ result: T; charge: number }> {
    const before = (await gw.api(key, 'GET', '/v1/account')).body.balance.available as number;
    const result = await work();
    const after = (await gw.api(key, 'GET', '/v1/account')).body.balance.available as number;
    return { result, charge: before - after };
  }

  it('lists the catalog in the OpenAI shape, filters by type, and hides models a restricted key may not use', async () => {
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id);
    expect(ids).to.include.members(['chat-fast', 'chat-pro']);
    const fast = models.data.find((m) => m.id === 'chat-fast') as unknown as Record<string, any>;
    expect(fast).to.deep.include({ object: 'model', type: 'chat', owned_by: 'gateway' });
    expect(fast.pricing).to.deep.include(FAST);
    expect(fast.capabilities).to.deep.include({ max_output_tokens: 4096 });
    expect((await gw.api(key, 'GET', '/v1/models?type=video')).body.data.every((m: { type: string }) => m.type === 'video')).to.equal(true);
    const restricted = await gw.fundedAccount(0, ['chat-pro']);
    expect((await gw.api(restricted.key, 'GET', '/v1/models')).body.data.map((m: { id: string }) => m.id)).to.deep.equal(['chat-pro']);
  });

  it('completes a chat and charges exactly the formula for the reported usage', async () => {
    const messages = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'Name three colours [sim:tokens=7]' },
    ];
    const { result, charge } = await charged(() => client.chat.completions.create({ model: 'chat-fast', messages }));
    expect(result.object).to.equal('chat.completion');
    expect(result.model).to.equal('chat-fast');
    expect(result.choices[0]!.message.role).to.equal('assistant');
    expect(result.choices[0]!.finish_reason).to.equal('stop');
    expect(result.usage).to.deep.include({ prompt_tokens: countMessageTokens(messages), completion_tokens: 7 });
    expect(charge).to.equal(tokenCharge(FAST, countMessageTokens(messages), 7));
  });

  it('streams a chat with include_usage exactly as the SDK parses it, and charges the streamed usage', async () => {
    const messages = [{ role: 'user' as const, content: 'Tell a story [sim:tokens=25]' }];
    const { result, charge } = await charged(async () => {
      const stream = await client.chat.completions.create({ model: 'chat-fast', messages, stream: true, stream_options: { include_usage: true } });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      return chunks;
    });
    const ids = new Set(result.map((c) => c.id));
    expect(ids.size).to.equal(1);
    expect(result[0]!.choices[0]!.delta.role).to.equal('assistant');
    const text = result.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join('');
    expect(text.split(/\s+/).filter(Boolean)).to.have.length(25);
    expect(result.some((c) => c.choices[0]?.finish_reason === 'stop')).to.equal(true);
    const last = result[result.length - 1]!;
    expect(last.choices).to.deep.equal([]);
    expect(last.usage).to.deep.include({ completion_tokens: 25, prompt_tokens: countMessageTokens(messages) });
    expect(result.every((c) => c.model === 'chat-fast')).to.equal(true);
    expect(charge).to.equal(tokenCharge(FAST, countMessageTokens(messages), 25));
  });

  it('streams without include_usage: no usage chunk reaches the client, usage is still charged', async () => {
    const messages = [{ role: 'user' as const, content: 'Short [sim:tokens=4]' }];
    const { result, charge } = await charged(async () => {
      const chunks = [];
      for await (const chunk of await client.chat.completions.create({ model: 'chat-fast', messages, stream: true })) chunks.push(chunk);
      return chunks;
    });
    expect(result.every((c) => c.choices.length === 1 && !c.usage)).to.equal(true);
    expect(charge).to.equal(tokenCharge(FAST, countMessageTokens(messages), 4));
  });

  it('ends a stalled upstream stream with an error event and charges what was delivered', async () => {
    const messages = [{ role: 'user' as const, content: 'Stall please [sim:stall]' }];
    const { result, charge } = await charged(async () => {
      const stream = await client.chat.completions.create({ model: 'chat-fast', messages, stream: true });
      let text = '';
      let error: unknown = null;
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      } catch (err) {
        error = err;
      }
      return { text, error };
    });
    expect(result.error).to.be.instanceOf(OpenAI.APIError);
    expect((result.error as Error).message).to.include('timed out');
    expect(result.text.trim().split(/\s+/)).to.have.length(2);
    expect(charge).to.equal(tokenCharge(FAST, countMessageTokens(messages, FAST_TOKENIZER), countTokens(result.text, FAST_TOKENIZER)));
  });

  it('keeps an idle stream alive with `: ping` comment lines and invents no `event:` names', async () => {
    const messages = [{ role: 'user' as const, content: 'Stall for pings [sim:stall]' }];
    const { result: text, charge } = await charged(async () => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat-fast', messages, stream: true }),
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
      // The stall idles until the suite's 3 s upstream deadline; pings go out every 200 ms idle.
      return res.text();
    });
    const lines = text.split('\n').filter((line) => line !== '');
    expect(lines.filter((line) => line === ': ping').length, text).to.be.at.least(1);
    expect(lines.filter((line) => line.startsWith('event:')), text).to.deep.equal([]);
    expect(lines.filter((line) => line !== ': ping' && !line.startsWith('data: ')), text).to.deep.equal([]);
    // Two tokens, then the deadline's error: the pings neither end the stream nor cost anything.
    expect(JSON.parse(lines.filter((line) => line.startsWith('data: ')).pop()!.slice(6))).to.have.nested.property('error.type', 'upstream_error');
    const delivered = deliveredChat(lines);
    expect(delivered.trim().split(/\s+/)).to.have.length(2);
    expect(charge).to.equal(tokenCharge(FAST, countMessageTokens(messages, FAST_TOKENIZER), countTokens(delivered, FAST_TOKENIZER)));
  });

  it('reports and charges its own count when the upstream reports no usage: plain, and streamed with include_usage', async () => {
    const messages = [{ role: 'user' as const, content: 'Count it yourself [sim:tokens=6] [sim:no-usage]' }];
    // By chat-fast's tokenizer, not the simulator's word count.
    const prompt = countMessageTokens(messages, FAST_TOKENIZER);
    expect(prompt).to.not.equal(countMessageTokens(messages));
    const counted = (delivered: string) => {
      expect(delivered.trim().split(/\s+/)).to.have.length(6);
      const completion = countTokens(delivered, FAST_TOKENIZER);
      return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    };

    const plain = await charged(() => client.chat.completions.create({ model: 'chat-fast', messages }));
    const plainUsage = counted(plain.result.choices[0]!.message.content!);
    expect(plain.result.usage).to.deep.equal(plainUsage);
    expect(plain.charge).to.equal(tokenCharge(FAST, prompt, plainUsage.completion_tokens));

    const streamed = await charged(async () => {
      const chunks = [];
      for await (const chunk of await client.chat.completions.create({ model: 'chat-fast', messages, stream: true, stream_options: { include_usage: true } })) chunks.push(chunk);
      return chunks;
    });
    const last = streamed.result[streamed.result.length - 1]!;
    expect(last).to.deep.include({ object: 'chat.completion.chunk', model: 'chat-fast', choices: [] });
    const streamedUsage = counted(streamed.result.map((c) => c.choices[0]?.delta.content ?? '').join(''));
    expect(last.usage).to.deep.equal(streamedUsage);
    expect(streamed.result.filter((c) => c.usage)).to.have.length(1);
    expect(new Set(streamed.result.map((c) => c.id)).size).to.equal(1);
    expect(streamed.result.map((c) => c.created)).to.deep.equal(streamed.result.map(() => last.created));
    expect(streamed.charge).to.equal(tokenCharge(FAST, prompt, streamedUsage.completion_tokens));
  });

  it('charges the usage the upstream reports, not its own count, for chat plain and streamed', async () => {
    const messages = [{ role: 'user' as const, content: 'Trust the upstream [sim:tokens=6] [sim:usage=3,40]' }];
    expect(countMessageTokens(messages)).to.not.equal(3);
    const reported = { prompt_tokens: 3, completion_tokens: 40, total_tokens: 43 };

    const plain = await charged(() => client.chat.completions.create({ model: 'chat-fast', messages }));
    expect(plain.result.choices[0]!.message.content!.split(' ')).to.have.length(6);
    expect(plain.result.usage).to.deep.equal(reported);
    expect(plain.charge).to.equal(tokenCharge(FAST, 3, 40));

    const streamed = await charged(async () => {
      const chunks = [];
      for await (const chunk of await client.chat.completions.create({ model: 'chat-fast', messages, stream: true, stream_options: { include_usage: true } })) chunks.push(chunk);
      return chunks;
    });
    expect(streamed.result.filter((c) => c.usage)).to.have.length(1);
    expect(streamed.result[streamed.result.length - 1]!.usage).to.deep.equal(reported);
    expect(streamed.charge).to.equal(tokenCharge(FAST, 3, 40));
  });

  it('reports and charges its own count when the upstream reports no Responses usage, plain and streamed', async () => {
    const input = 'Count the response yourself [sim:tokens=5] [sim:no-usage]';
    // By each model's tokenizer, not the simulator's word count.
    const counted = (tokenizer: typeof FAST_TOKENIZER | typeof PRO_TOKENIZER, delivered: string) => {
      expect(delivered.trim().split(/\s+/)).to.have.length(5);
      const inputTokens = countResponsesInputTokens(input, tokenizer);
      const outputTokens = countTokens(delivered, tokenizer);
      return { input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens };
    };

    const plain = await charged(() => client.responses.create({ model: 'chat-pro', input }));
    const plainUsage = counted(PRO_TOKENIZER, plain.result.output_text);
    expect(plainUsage.input_tokens).to.not.equal(countResponsesInputTokens(input));
    expect(plain.result.usage).to.deep.include(plainUsage);
    expect(plain.charge).to.equal(tokenCharge(PRO, plainUsage.input_tokens, plainUsage.output_tokens));

    const streamed = await charged(async () => {
      const stream = client.responses.stream({ model: 'chat-fast', input });
      let completed: unknown = null;
      for await (const event of stream) if (event.type === 'response.completed') completed = event.response.usage;
      return { completed, final: await stream.finalResponse() };
    });
    const streamedUsage = counted(FAST_TOKENIZER, streamed.result.final.output_text);
    expect(streamed.result.completed).to.deep.include(streamedUsage);
    expect(streamed.result.final.usage).to.deep.include(streamedUsage);
    expect(streamed.charge).to.equal(tokenCharge(FAST, streamedUsage.input_tokens, streamedUsage.output_tokens));
  });

  it('charges the usage the upstream reports, not its own count, for Responses plain and streamed', async () => {
    const input = 'Trust the response [sim:tokens=5] [sim:usage=2,33]';
    expect(countResponsesInputTokens(input)).to.not.equal(2);
    const reported = { input_tokens: 2, output_tokens: 33, total_tokens: 35 };

    const plain = await charged(() => client.responses.create({ model: 'chat-pro', input }));
    expect(plain.result.output_text.split(' ')).to.have.length(5);
    expect(plain.result.usage).to.deep.include(reported);
    expect(plain.charge).to.equal(tokenCharge(PRO, 2, 33));

    const streamed = await charged(() => client.responses.stream({ model: 'chat-fast', input }).finalResponse());
    expect(streamed.result.usage).to.deep.include(reported);
    expect(streamed.charge).to.equal(tokenCharge(FAST, 2, 33));
  });

  it('answers the Responses interface plain, with usage, and charges it', async () => {
    const input = 'Summarise the news [sim:tokens=9]';
    const { result, charge } = await charged(() => client.responses.create({ model: 'chat-pro', input }));
    expect(result.status).to.equal('completed');
    expect(result.model).to.equal('chat-pro');
    expect(result.output_text.split(/\s+/)).to.have.length(9);
    expect(result.usage).to.deep.include({ input_tokens: countResponsesInputTokens(input), output_tokens: 9 });
    expect(charge).to.equal(tokenCharge(PRO, countResponsesInputTokens(input), 9));
  });

  it('asks the provider for no more output than the context window leaves after a long prompt, when the client set no limit', async () => {
    // chat-fast: 4,096 output tokens at most, a window of 32,768; the gateway counts this input by o200k_base.
    const input = `${'word '.repeat(30_000)}[sim:tokens=3]`;
    const counted = countResponsesInputTokens(input, 'o200k_base');
    expect(counted, 'leaves less room than the model\'s own limit').to.be.within(32_768 - 4_096 + 1, 32_767);
    const near = await client.responses.create({ model: 'chat-fast', input });
    expect(near.max_output_tokens, 'what the provider was asked for').to.equal(32_768 - counted);
    const short = await client.responses.create({ model: 'chat-fast', input: 'hi [sim:tokens=3]' });
    expect(short.max_output_tokens).to.equal(4_096);
  });

  it('streams typed Responses events that the strict responses.stream() helper accepts', async () => {
    const input = [{ role: 'user' as const, content: 'Explain briefly [sim:tokens=12]' }];
    const { result, charge } = await charged(async () => {
      const stream = client.responses.stream({ model: 'chat-fast', input });
      const types: string[] = [];
      const sequence: number[] = [];
      for await (const event of stream) {
        types.push(event.type);
        sequence.push(event.sequence_number);
      }
      return { types, sequence, final: await stream.finalResponse() };
    });
    expect(result.types[0]).to.equal('response.created');
    expect(result.types.slice(1, 4)).to.deep.equal(['response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(result.types.filter((t) => t === 'response.output_text.delta')).to.have.length(12);
    expect(result.types.slice(-4)).to.deep.equal(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(result.sequence).to.deep.equal(result.sequence.map((_, i) => i));
    expect(result.final.usage).to.deep.include({ output_tokens: 12, input_tokens: countResponsesInputTokens(input) });
    expect(charge).to.equal(tokenCharge(FAST, countResponsesInputTokens(input), 12));
  });

  it('ends a failing Responses stream with error and response.failed, charging what was delivered', async () => {
    const input = 'Stall [sim:stall]';
    const { result: text, charge } = await charged(async () => {
      const res = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat-fast', input, stream: true }),
      });
      return res.text();
    });
    const events = text.split('\n\n').filter((f) => f.startsWith('event:')).map((f) => f.split('\n')[0]!.slice(7));
    expect(events.slice(-2)).to.deep.equal(['error', 'response.failed']);
    const failed = JSON.parse(text.trim().split('\n').pop()!.slice(6));
    expect(failed.response).to.deep.include({ status: 'failed', model: 'chat-fast' });
    const delivered = text
      .split('\n\n')
      .filter((f) => f.startsWith('event: response.output_text.delta\n'))
      .map((f) => JSON.parse(f.split('\n')[1]!.slice(6)).delta as string)
      .join('');
    expect(delivered.trim().split(/\s+/)).to.have.length(2);
    expect(failed.response.usage.output_tokens).to.equal(countTokens(delivered, FAST_TOKENIZER));
    expect(failed.response.usage.input_tokens).to.equal(countResponsesInputTokens(input, FAST_TOKENIZER));
    expect(charge).to.equal(tokenCharge(FAST, countResponsesInputTokens(input, FAST_TOKENIZER), countTokens(delivered, FAST_TOKENIZER)));
  });

  it('passes through the error of an upstream without the Responses interface and releases everything', async () => {
    const { result, charge } = await charged(async () => {
      try {
        await client.responses.create({ model: 'chat-fast', input: 'hello [sim:no-responses]' });
      } catch (err) {
        return err;
      }
      throw new Error('no error');
    });
    expect(result).to.be.instanceOf(OpenAI.BadRequestError);
    // The simulator's own 404 answer, as an OpenAI-compatible upstream without the interface gives it.
    expect((result as Error).message).to.include('upstream: Invalid URL (POST /v1/responses)');
    expect(charge).to.equal(0);
  });

  it('raises the SDK error classes of the spec\'s list (400, 401, 402, 502; unknown and forbidden models are 400s), reserving nothing', async () => {
    const expectError = async (work: () => Promise<unknown>, klass: new (...args: never[]) => Error, code?: string) => {
      try {
        await work();
      } catch (err) {
        expect(err).to.be.instanceOf(klass);
        if (code) expect((err as { code?: string }).code).to.equal(code);
        return err as InstanceType<typeof OpenAI.APIError>;
      }
      throw new Error(`expected ${klass.name}`);
    };
    const { charge } = await charged(async () => {
      await expectError(() => client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x' }], temperature: 3 }), OpenAI.BadRequestError);
      await expectError(() => client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'tool' as never, content: 'x' }] }), OpenAI.BadRequestError);
      await expectError(() => client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x' }], top_p: 0 }), OpenAI.BadRequestError);
      await expectError(() => client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }), OpenAI.BadRequestError);
      // Above the model's output limit: the error names the field the client sent.
      for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
        const tooMany = await expectError(() => client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x' }], [field]: 5_000 }), OpenAI.BadRequestError, 'invalid_request');
        expect([tooMany.param, tooMany.message]).to.deep.equal([field, `400 ${field} must be at most 4096 for chat-fast`]);
      }
      const outputTooLong = await expectError(() => client.responses.create({ model: 'chat-fast', input: 'x', max_output_tokens: 5_000 }), OpenAI.BadRequestError, 'invalid_request');
      expect(outputTooLong.param).to.equal('max_output_tokens');
      // An input of either accepted type is refused for what is wrong with it, not for the other type.
      const noItems = await expectError(() => client.responses.create({ model: 'chat-fast', input: [] }), OpenAI.BadRequestError, 'invalid_request');
      expect([noItems.param, noItems.message]).to.deep.equal(['input', '400 input must have at least 1 item']);
      // Beyond chat-fast's context window of 32,768 tokens (o200k_base counts " word" as one token), on both interfaces.
      const longPrompt = 'word '.repeat(40_000);
      const chatTooLong = await expectError(() => client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: longPrompt }] }), OpenAI.BadRequestError, 'context_length_exceeded');
      expect([chatTooLong.param, chatTooLong.message]).to.deep.equal(['messages', '400 the prompt (messages) has about 40007 tokens; chat-fast accepts 32768']);
      const inputTooLong = await expectError(() => client.responses.create({ model: 'chat-fast', input: longPrompt }), OpenAI.BadRequestError, 'context_length_exceeded');
      expect([inputTooLong.param, inputTooLong.message]).to.deep.equal(['input', '400 the prompt (input) has about 40007 tokens; chat-fast accepts 32768']);
      const unknown = await expectError(() => client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }), OpenAI.BadRequestError, 'model_not_found');
      expect(unknown.param).to.equal('model');
      await expectError(() => client.responses.create({ model: 'nope', input: 'x' }), OpenAI.BadRequestError, 'model_not_found');
      await expectError(() => client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x [sim:fail]' }] }), OpenAI.InternalServerError);
      await expectError(() => client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x [sim:status=400]' }] }), OpenAI.BadRequestError);
      // The provider refusing the gateway's own key is not the client's 400 (nor its invalid_api_key), on both interfaces.
      // A 401 disables chat-fast's only channel: the next request is sent nowhere (a 502
      // upstream_unavailable, though it would have been answered) until an operator mends it.
      const chatRefused = await expectError(() => client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x [sim:status=401]' }] }), OpenAI.InternalServerError, 'upstream_auth_failed');
      expect([chatRefused.status, chatRefused.message]).to.deep.equal([502, "502 upstream: channel default: the provider refused the gateway's credentials (HTTP 401)"]);
      await expectError(() => client.responses.create({ model: 'chat-fast', input: 'x' }), OpenAI.InternalServerError, 'upstream_unavailable');
      gw.upstreams.mend('default');
      await expectError(() => client.responses.create({ model: 'chat-fast', input: 'x [sim:status=401]' }), OpenAI.InternalServerError, 'upstream_auth_failed');
      gw.upstreams.mend('default');
      // A 403 that names no credential code (a region or model refusal) is the provider's refusal
      // of access, still the gateway's 502 and never the client's 403, but it disables nothing: one
      // client's request alone may cause it (docs/operations.md, Routing).
      for (const ask of [
        () => client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x [sim:status=403]' }] }),
        () => client.responses.create({ model: 'chat-fast', input: 'x [sim:status=403]' }),
      ]) {
        const forbidden = await expectError(ask, OpenAI.InternalServerError, 'upstream_auth_failed');
        expect([forbidden.status, forbidden.message]).to.deep.equal([502, "502 upstream: channel default: the provider refused access (HTTP 403) without naming the gateway's credentials"]);
      }
      expect(gw.router.health('default').state, 'a 403 without a credential code disables nothing').to.not.equal('disabled');
    });
    expect(charge).to.equal(0);
    const bad = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'x' }], temperature: 3 });
    expect(bad.body.error).to.deep.include({ type: 'invalid_request_error', param: 'temperature' });
    const upstream = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'x [sim:fail]' }] });
    expect(upstream.status).to.equal(502);

    const noKey = new OpenAI({ apiKey: 'tr-' + 'z'.repeat(43), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await expectError(() => noKey.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x' }] }), OpenAI.AuthenticationError);

    const poor = await gw.fundedAccount(1);
    const poorClient = new OpenAI({ apiKey: poor.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const short = await expectError(() => poorClient.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x' }] }), OpenAI.APIError, 'insufficient_balance');
    expect(short.status).to.equal(402);
    expect(short.headers?.get('x-should-retry')).to.equal('false');

    const restricted = await gw.fundedAccount(1_000_000, ['chat-pro']);
    const restrictedClient = new OpenAI({ apiKey: restricted.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const forbidden = await expectError(() => restrictedClient.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'x' }] }), OpenAI.BadRequestError, 'model_not_allowed');
    expect(forbidden.param).to.equal('model');
    await expectError(() => restrictedClient.responses.create({ model: 'chat-fast', input: 'x' }), OpenAI.BadRequestError, 'model_not_allowed');
    await expectError(() => client.responses.create({ model: 'chat-fast', input: 'x [sim:fail]' }), OpenAI.InternalServerError);
  });

  it('answers 429 with Retry-After when a key exceeds its request rate', async () => {
    const limited = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const { key: k } = await limited.fundedAccount(10_000_000);
      const c = new OpenAI({ apiKey: k, baseURL: `${limited.url}/v1`, maxRetries: 0 });
      const ask = () => c.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'hi' }] });
      await ask();
      await ask();
      try {
        await ask();
        throw new Error('expected a 429');
      } catch (err) {
        expect(err).to.be.instanceOf(OpenAI.RateLimitError);
        expect(Number((err as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after'))).to.be.greaterThan(0);
      }
      await limited.expectAuditClean();
    } finally {
      await limited.close();
    }
  });

  it('keeps the ledger exact across many concurrent streamed and plain calls', async () => {
    const before = (await gw.api(key, 'GET', '/v1/account')).body.balance.available as number;
    const calls = Array.from({ length: 24 }, (_, i) => {
      const messages = [{ role: 'user' as const, content: `call ${i} [sim:tokens=${i + 1}]` }];
      const expected = tokenCharge(FAST, countMessageTokens(messages), i + 1);
      const run = i % 2
        ? client.chat.completions.create({ model: 'chat-fast', messages }).then(() => expected)
        : client.chat.completions.create({ model: 'chat-fast', messages, stream: true }).then(async (s) => {
            for await (const _ of s) void _;
            return expected;
          });
      return run;
    });
    const total = (await Promise.all(calls)).reduce((a, b) => a + b, 0);
    const after = (await gw.api(key, 'GET', '/v1/account')).body.balance.available as number;
    expect(before - after).to.equal(total);
    expect(accountId).to.be.a('string');
  });
});

interface UpstreamProbes {
  /** Waits until the simulated upstream has the probed request in hand. */
  arrived(probe: string): Promise<true>;
  /** How the upstream's connection of the probed request ended: `answered`, or `caller_left` when the gateway aborted it. */
  closed(probe: string): Promise<string>;
}

/** Puts the real simulated chat routes behind a spy that watches the upstream side of each request marked `[sim:probe=NAME]`. */
function probeUpstream(gw: TestGateway): UpstreamProbes {
  const seen = new Map<string, { closed: 'answered' | 'caller_left' | null }>();
  gw.simulator.addRoutes(
    chatRoutes().map((route) => ({
      ...route,
      handler: (ctx: SimContext) => {
        const probe = /\[sim:probe=([\w-]+)\]/.exec(JSON.stringify(ctx.body ?? null))?.[1];
        if (probe) {
          const entry: { closed: 'answered' | 'caller_left' | null } = { closed: null };
          seen.set(probe, entry);
          ctx.res.once('close', () => (entry.closed = ctx.res.writableEnded ? 'answered' : 'caller_left'));
        }
        return route.handler(ctx);
      },
    })),
  );
  return {
    arrived: (probe) => waitFor(`the upstream to receive ${probe}`, async () => seen.has(probe)),
    closed: (probe) => waitFor(`the upstream connection of ${probe} to close`, async () => seen.get(probe)?.closed ?? null),
  };
}

describe('a client that leaves: the upstream is aborted and the reservation closed @integration', () => {
  let gw: TestGateway;
  let client: OpenAI;
  let accountId: string;
  let key: string;
  let upstream: UpstreamProbes;

  before(async () => {
    // An upstream deadline far beyond any test: only an abort can end a delayed or stalled call early.
    gw = await startTestGateway({ UPSTREAM_TIMEOUT_MS: '300000', RATE_LIMIT_PER_MINUTE: '100000', SSE_PING_MS: '200' });
    upstream = probeUpstream(gw);
    ({ accountId, key } = await gw.fundedAccount(100_000_000));
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterEach(async () => {
    expect((await gw.balance(key)).frozen, 'no reservation is left open').to.equal(0);
    await gw.expectAuditClean();
  });
  after(async () => gw.close());

  async function available(): Promise<number> {
    return (await gw.balance(key)).available;
  }

  /** The event that closed the account's latest reservation, once it is closed. */
  async function lastClose(): Promise<{ type: string; data: { amount: number; reason?: string; usage?: Record<string, unknown> } }> {
    await waitFor('the reservation to close', async () => (await gw.balance(key)).frozen === 0);
    const events = await gw.store.readStream(accountStream(accountId));
    const close = events.filter((e) => e.type === 'ReservationSettled' || e.type === 'ReservationReleased').pop();
    expect(close, 'a closed reservation').to.not.equal(undefined);
    return close as unknown as { type: string; data: { amount: number; reason?: string; usage?: Record<string, unknown> } };
  }

  /** Starts `call` with an abort signal, aborts it once the upstream has the request, and expects the SDK's abort error. */
  async function leaveWhileUpstreamWorks(probe: string, call: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    const controller = new AbortController();
    const outcome = call(controller.signal).then(
      () => new Error('the call completed although its client left'),
      (err: unknown) => err,
    );
    await upstream.arrived(probe);
    controller.abort();
    expect(await outcome).to.be.instanceOf(OpenAI.APIUserAbortError);
  }

  it('aborts a delayed non-streamed chat when its client leaves, and releases the whole reservation', async () => {
    const before = await available();
    await leaveWhileUpstreamWorks('plain-chat', (signal) =>
      client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'Slow [sim:delay=20000] [sim:probe=plain-chat]' }] }, { signal }),
    );
    expect(await upstream.closed('plain-chat')).to.equal('caller_left');
    const close = await lastClose();
    expect(close.type).to.equal('ReservationReleased');
    expect(close.data.reason).to.equal('client went away');
    expect(before - (await available())).to.equal(0);
  });

  it('aborts a delayed non-streamed Responses call when its client leaves, and releases the whole reservation', async () => {
    const before = await available();
    await leaveWhileUpstreamWorks('plain-responses', (signal) =>
      client.responses.create({ model: 'chat-fast', input: 'Slow [sim:delay=20000] [sim:probe=plain-responses]' }, { signal }),
    );
    expect(await upstream.closed('plain-responses')).to.equal('caller_left');
    const close = await lastClose();
    expect(close.type).to.equal('ReservationReleased');
    expect(close.data.reason).to.equal('client went away');
    expect(before - (await available())).to.equal(0);
  });

  it('aborts a streamed chat whose client leaves before the upstream answered, and releases the reservation', async () => {
    const before = await available();
    await leaveWhileUpstreamWorks('early-stream', (signal) =>
      client.chat.completions.create({ model: 'chat-fast', stream: true, messages: [{ role: 'user', content: 'Slow start [sim:delay=20000] [sim:probe=early-stream]' }] }, { signal }),
    );
    expect(await upstream.closed('early-stream')).to.equal('caller_left');
    const close = await lastClose();
    expect(close.type).to.equal('ReservationReleased');
    expect(close.data.reason).to.equal('client went away');
    expect(before - (await available())).to.equal(0);
  });

  it('aborts a streamed Responses call whose client leaves before the upstream answered, and releases the reservation', async () => {
    const before = await available();
    await leaveWhileUpstreamWorks('early-responses', (signal) =>
      client.responses.create({ model: 'chat-fast', stream: true, input: 'Slow start [sim:delay=20000] [sim:probe=early-responses]' }, { signal }),
    );
    expect(await upstream.closed('early-responses')).to.equal('caller_left');
    const close = await lastClose();
    expect(close.type).to.equal('ReservationReleased');
    expect(close.data.reason).to.equal('client went away');
    expect(before - (await available())).to.equal(0);
  });

  it('aborts the upstream when the client leaves mid-stream, and charges the tokens delivered as client_disconnected', async () => {
    const messages = [{ role: 'user' as const, content: 'Go on forever [sim:stall] [sim:probe=mid-chat]' }];
    const before = await available();
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ model: 'chat-fast', messages, stream: true }, { signal: controller.signal });
    let text = '';
    try {
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (text.trim().split(/\s+/).length >= 2) controller.abort();
      }
    } catch (err) {
      expect((err as Error).name).to.match(/Abort/);
    }
    expect(text.trim().split(/\s+/)).to.have.length(2);
    // The stall never ends on its own (the upstream deadline is minutes away): only the abort closes it.
    expect(await upstream.closed('mid-chat')).to.equal('caller_left');
    const close = await lastClose();
    expect(close.type).to.equal('ReservationSettled');
    const usage = { prompt_tokens: countMessageTokens(messages, FAST_TOKENIZER), completion_tokens: countTokens(text, FAST_TOKENIZER) };
    expect(close.data.usage).to.deep.include({ interrupted: 'client_disconnected', ...usage });
    expect(before - (await available())).to.equal(tokenCharge(FAST, usage.prompt_tokens, usage.completion_tokens));
  });

  it('aborts the upstream when the client leaves a Responses stream, and charges the tokens delivered as client_disconnected', async () => {
    const input = 'Go on forever [sim:stall] [sim:probe=mid-responses]';
    const before = await available();
    const controller = new AbortController();
    const stream = client.responses.stream({ model: 'chat-fast', input }, { signal: controller.signal });
    let deltas = 0;
    let delivered = '';
    const outcome = await (async () => {
      for await (const event of stream) {
        if (event.type !== 'response.output_text.delta') continue;
        delivered += event.delta;
        if (++deltas === 2) controller.abort();
      }
    })().catch((err: unknown) => err);
    expect(outcome).to.be.instanceOf(Error);
    expect(deltas).to.equal(2);
    expect(await upstream.closed('mid-responses')).to.equal('caller_left');
    const close = await lastClose();
    expect(close.type).to.equal('ReservationSettled');
    const usage = { input_tokens: countResponsesInputTokens(input, FAST_TOKENIZER), output_tokens: countTokens(delivered, FAST_TOKENIZER) };
    expect(close.data.usage).to.deep.include({ interrupted: 'client_disconnected', ...usage });
    expect(before - (await available())).to.equal(tokenCharge(FAST, usage.input_tokens, usage.output_tokens));
  });
});

describe('the upstream call runs while the reservation commits @integration', () => {
  let gw: TestGateway;
  let upstream: UpstreamProbes;

  before(async () => {
    gw = await startTestGateway({ UPSTREAM_TIMEOUT_MS: '300000', RATE_LIMIT_PER_MINUTE: '100000' });
    upstream = probeUpstream(gw);
  });
  afterEach(async () => gw.expectAuditClean());
  after(async () => gw.close());

  /**
   * Holds back every append to the account's stream, as a slow commit would: es_append takes the
   * stream's advisory lock first, and this transaction holds it until `release`.
   */
  async function holdAppends(accountId: string): Promise<{ waiting(count: number): Promise<void>; release(): Promise<void> }> {
    const stream = accountStream(accountId);
    const client = await gw.pool.connect();
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [stream]);
    let released = false;
    return {
      waiting: async (count) => {
        await waitFor(`${count} append(s) to wait for the lock of ${stream}`, async () => {
          // A bigint advisory key shows as its high and low 32 bits (classid, objid), objsubid 1.
          const { rows } = await gw.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks
             WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
            [stream],
          );
          return rows[0]!.n >= count;
        });
      },
      release: async () => {
        if (released) return;
        released = true;
        await client.query('COMMIT');
        client.release();
      },
    };
  }

  /**
   * Expects `call` to stay unanswered while the appends are held: watched for a moment after the
   * upstream answered (a gateway that did not wait for the commit would answer within it), and
   * checked again by time once the hold is released.
   */
  async function expectNoAnswerUntil(release: () => Promise<void>, call: Promise<unknown>): Promise<void> {
    let answeredAt: bigint | null = null;
    void call.then(
      () => (answeredAt = process.hrtime.bigint()),
      () => (answeredAt = process.hrtime.bigint()),
    );
    const watched = await Promise.race([call.then(() => 'answered', () => 'answered'), sleep(200).then(() => 'quiet')]);
    expect(watched, 'no answer while the reservation is not durable').to.equal('quiet');
    const releasedAt = process.hrtime.bigint();
    await release();
    await call.catch(() => undefined);
    expect(answeredAt! > releasedAt, 'answered only after the reservation could commit').to.equal(true);
  }

  async function accountEvents(accountId: string): Promise<string[]> {
    return (await gw.store.readStream(accountStream(accountId))).map((e) => e.type);
  }

  /** Appends to account streams through this gateway's store (the second writer's too) refused for their expected version, from GET /metrics. */
  async function accountConflicts(): Promise<number> {
    return sample(await scrapeMetrics(gw.url), 'gateway_event_appends_total', { category: 'account', outcome: 'conflict' });
  }

  /** The purpose of a reservation the second writer makes. */
  const otherPurpose = (ref: string) => ({ kind: 'request' as const, ref, description: 'test', actor: 'system', model: 'test', endpoint: 'test' });

  const postChat = (key: string, content: string) => gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', max_tokens: 16, messages: [{ role: 'user', content }] });

  it('asks the upstream while the reservation commits, and answers only once it is durable', async () => {
    const { accountId, key } = await gw.fundedAccount(100_000_000);
    const hold = await holdAppends(accountId);
    const call = postChat(key, 'Hi [sim:tokens=3] [sim:probe=early-plain]');
    try {
      expect(await upstream.closed('early-plain'), 'the upstream answered').to.equal('answered');
      await hold.waiting(1);
      expect(await accountEvents(accountId)).to.not.include('FundsReserved');
      await expectNoAnswerUntil(hold.release, call);
    } finally {
      await hold.release();
    }
    expect((await call).status).to.equal(200);
    expect((await accountEvents(accountId)).slice(-2)).to.deep.equal(['FundsReserved', 'ReservationSettled']);
  });

  const streams = [
    { name: 'chat completions', path: '/v1/chat/completions', body: (probe: string) => ({ model: 'chat-fast', stream: true, max_tokens: 16, messages: [{ role: 'user', content: `Hi [sim:tokens=3] [sim:probe=${probe}]` }] }) },
    { name: 'Responses', path: '/v1/responses', body: (probe: string) => ({ model: 'chat-fast', stream: true, max_output_tokens: 16, input: `Hi [sim:tokens=3] [sim:probe=${probe}]` }) },
  ];
  const openStream = (key: string, stream: (typeof streams)[number], probe: string, options: { dispatcher?: Client; signal?: AbortSignal } = {}) =>
    request(`${gw.url}${stream.path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(stream.body(probe)), ...options });

  for (const stream of streams) {
    it(`opens a ${stream.name} stream to the client only once the reservation is durable`, async () => {
      const { accountId, key } = await gw.fundedAccount(100_000_000);
      const probe = `early-stream-${stream.path.split('/').pop()}`;
      const hold = await holdAppends(accountId);
      const call = openStream(key, stream, probe);
      try {
        expect(await upstream.closed(probe), 'the upstream streamed its whole answer').to.equal('answered');
        await hold.waiting(1);
        // Not even the status line: the request's promise resolves with the headers.
        await expectNoAnswerUntil(hold.release, call);
      } finally {
        await hold.release();
      }
      const res = await call;
      expect(res.statusCode).to.equal(200);
      expect(await res.body.text()).to.match(/data: \[DONE\]|response\.completed/);
      expect((await accountEvents(accountId)).slice(-2)).to.deep.equal(['FundsReserved', 'ReservationSettled']);
    });

    it(`charges no completion of a ${stream.name} stream whose client left while the reservation committed`, async () => {
      const { accountId, key } = await gw.fundedAccount(100_000_000);
      const probe = `left-during-commit-${stream.path.split('/').pop()}`;
      const hold = await holdAppends(accountId);
      const controller = new AbortController();
      // A connection of its own, so that the gateway's side of it is known: the gateway has seen
      // the client leave once that socket closed (its response's 'close' comes first).
      const client = new Client(gw.url);
      let gatewaySawClose: Promise<unknown> | null = null;
      gw.server.once('connection', (socket: Socket) => (gatewaySawClose = new Promise((resolve) => socket.once('close', resolve))));
      const call = openStream(key, stream, probe, { dispatcher: client, signal: controller.signal }).then(
        () => 'answered',
        (err: unknown) => err,
      );
      try {
        expect(await upstream.closed(probe), 'the upstream streamed its whole answer').to.equal('answered');
        await hold.waiting(1);
        controller.abort();
        expect(await call).to.be.instanceOf(Error);
        expect(gatewaySawClose, 'the request came on a connection of its own').to.not.equal(null);
        await gatewaySawClose;
      } finally {
        await hold.release();
        await client.close();
      }
      const close = await waitFor('the reservation to close', async () =>
        (await gw.store.readStream(accountStream(accountId))).find((e) => e.type === 'ReservationSettled' || e.type === 'ReservationReleased'),
      );
      expect(close.type, JSON.stringify(close.data)).to.equal('ReservationSettled');
      const usage = (close.data as { usage: Record<string, unknown> }).usage;
      expect(usage).to.deep.include({ interrupted: 'client_disconnected' });
      expect(usage.completion_tokens ?? usage.output_tokens, 'nothing of the answer reached the client').to.equal(0);
    });
  }

  it('keeps the upstream call and answers 200 when the reservation commits after a conflict that still leaves enough', async () => {
    const { accountId, key } = await gw.fundedAccount(100_000_000);
    const other = secondWriter(gw);
    const hold = await holdAppends(accountId);
    const conflictsBefore = await accountConflicts();
    const small = other.reserve({ accountId, amount: 1000, purpose: otherPurpose('other-process-small'), ttlMs: 60_000 });
    small.catch(() => undefined); // awaited below; the test fails there if it failed
    let call: Promise<{ status: number; body: any }> | null = null;
    try {
      await hold.waiting(1);
      // Still at work upstream when the conflict comes: a retry that aborted it would show.
      call = postChat(key, 'Hi [sim:tokens=3] [sim:delay=1000] [sim:probe=conflict-fits]');
      await upstream.arrived('conflict-fits');
      await hold.waiting(2);
    } finally {
      await hold.release();
    }
    expect((await call!).status).to.equal(200);
    expect(await upstream.closed('conflict-fits'), 'the upstream call went on through the retry').to.equal('answered');
    expect(await accountConflicts(), 'one append met the other and was decided again').to.equal(conflictsBefore + 1);
    const events = await gw.store.readStream(accountStream(accountId));
    const reservedBy = events.filter((e) => e.type === 'FundsReserved').map((e) => (e.data as { purpose: { ref: string } }).purpose.ref);
    expect(reservedBy, "the other process's reservation first, then this gateway's, once").to.have.length(2);
    expect(reservedBy[0]).to.equal('other-process-small');
    expect(events.filter((e) => e.type === 'ReservationSettled')).to.have.length(1);
    await other.release(accountId, await small, 'test done');
    expect((await gw.balance(key)).frozen).to.equal(0);
  });

  const refusedLate = [
    { name: 'a chat completion', stream: false, path: '/v1/chat/completions', body: (probe: string) => ({ model: 'chat-fast', messages: [{ role: 'user', content: `Slow [sim:delay=20000] [sim:probe=${probe}]` }] }) },
    { name: 'a streamed chat completion', stream: true, path: '/v1/chat/completions', body: (probe: string) => ({ model: 'chat-fast', stream: true, messages: [{ role: 'user', content: `Slow [sim:delay=20000] [sim:probe=${probe}]` }] }) },
    { name: 'a streamed Responses call', stream: true, path: '/v1/responses', body: (probe: string) => ({ model: 'chat-fast', stream: true, input: `Slow [sim:delay=20000] [sim:probe=${probe}]` }) },
  ];
  for (const c of refusedLate) {
    it(`aborts ${c.name} upstream and answers a JSON 402, charging nothing, when another process spent the balance before the reservation committed`, async () => {
      const { accountId, key } = await gw.fundedAccount(100_000_000);
      const probe = `refused-late-${c.stream ? 'stream' : 'plain'}-${c.path.split('/').pop()}`;
      // Another process reserves all but one unit, and its append is first in line for the lock.
      const other = secondWriter(gw);
      const hold = await holdAppends(accountId);
      const spent = other.reserve({ accountId, amount: 100_000_000 - 1, purpose: otherPurpose(`other-${probe}`), ttlMs: 60_000 });
      spent.catch(() => undefined); // awaited below; the test fails there if it failed
      let call: Promise<{ status: number; body: any }> | null = null;
      try {
        await hold.waiting(1);
        // This gateway decides on its cached state (the whole balance), so it calls the upstream.
        call = gw.api(key, 'POST', c.path, c.body(probe));
        await upstream.arrived(probe);
        await hold.waiting(2);
      } finally {
        await hold.release();
      }
      const res = await call!;
      expect(res.status).to.equal(402);
      expect(res.body.error, 'a JSON error, not an opened stream').to.deep.include({ code: 'insufficient_balance' });
      expect(await upstream.closed(probe), 'the upstream call was aborted').to.equal('caller_left');
      const reservationId = await spent;
      expect((await accountEvents(accountId)).filter((t) => t === 'FundsReserved'), "only the other process's reservation").to.have.length(1);
      await other.release(accountId, reservationId, 'test done');
      expect(await gw.balance(key)).to.deep.include({ available: 100_000_000, frozen: 0 });
    });
  }
});
