import { expect } from 'chai';
import { OpenAI, BadRequestError, NotFoundError, RateLimitError } from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { MAX_STORED, ResponseStore } from '../../simulator/response-store';
import { createSimulator, type Simulator } from '../../simulator/server';
import { countResponsesInputTokens, countTokens } from '../../src/billing/tokens';
import { assertOpenAiSchema, assertResponseStreamEventAsTheApiSendsIt } from '../support/openai-schema';
import { TrafficRecorder, assertExchangeValidates } from '../support/openai-traffic';

/**
 * The Responses simulator's answers to what real applications send (issue 40): function calls,
 * built-in tool calls, structured text, reasoning, cached tokens and stored responses, through
 * the openai SDK; every answer and stream event validated against OpenAI's official document.
 */
describe('upstream simulator: the Responses surface of OpenAI (tools, structured text, stored responses)', () => {
  let sim: Simulator;
  let url: string;
  let traffic: TrafficRecorder;
  let client: OpenAI;

  const weather: OpenAI.Responses.FunctionTool = {
    type: 'function',
    name: 'get_weather',
    strict: true,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  };

  before(async () => {
    sim = createSimulator();
    url = await sim.listen(0);
    traffic = new TrafficRecorder();
    client = new OpenAI({ apiKey: 'x', baseURL: `${url}/v1`, maxRetries: 0, fetch: traffic.fetch });
  });

  afterEach(async () => {
    for (const exchange of await traffic.exchanges()) {
      if (exchange.method === 'POST' || exchange.status >= 400) assertExchangeValidates(exchange);
      else if (!exchange.path.endsWith('/input_items')) assertOpenAiSchema('Response', exchange.answer, `GET ${exchange.path}`);
      else assertOpenAiSchema('ResponseItemList', exchange.answer, `GET ${exchange.path}`);
    }
  });

  after(async () => {
    await sim.close();
  });

  describe('function calls', () => {
    it('calls the function [sim:tool=NAME] picks, then answers its output, continuing from previous_response_id', async () => {
      const input = 'Weather in Lima? [sim:tool=get_weather] [sim:tool-args={"city": "Lima"}]';
      const first = await client.responses.create({ model: 'm', input, tools: [weather] });
      expect(first.output).to.have.length(1);
      const call = first.output[0]!;
      if (call.type !== 'function_call') throw new Error(`a function call was expected, not ${call.type}`);
      expect(call).to.deep.include({ name: 'get_weather', arguments: '{"city":"Lima"}', status: 'completed' });
      expect(call.call_id).to.be.a('string');
      expect(first.usage!.output_tokens).to.equal(countTokens('get_weather') + countTokens(call.arguments));

      const followUp = [{ type: 'function_call_output' as const, call_id: call.call_id, output: 'Cloudy, 18 degrees' }];
      const second = await client.responses.create({ model: 'm', previous_response_id: first.id, input: followUp, tools: [weather] });
      expect(second.output_text).to.equal('Simulated answer from the tool result: Cloudy, 18 degrees');
      expect(second.previous_response_id).to.equal(first.id);
      // Billed as OpenAI bills a continued conversation: the earlier input and output, then the new input.
      const context = [{ role: 'user', content: input }, call, ...followUp];
      expect(second.usage!.input_tokens).to.equal(countResponsesInputTokens(context, undefined, { image: 765, audio: 1500, file: 3000 }));
      expect(second.usage!.input_tokens).to.be.greaterThan(countResponsesInputTokens(followUp));
    });

    it('streams a function call: item added, argument deltas, arguments done, item done', async () => {
      const input = 'x [sim:tool=get_weather] [sim:tool-args={"city": "Reykjavik"}]';
      const stream = client.responses.stream({ model: 'm', input, tools: [weather] });
      const types: string[] = [];
      let args = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.function_call_arguments.delta') args += event.delta;
      }
      const final = await stream.finalResponse();
      expect(args).to.equal('{"city":"Reykjavik"}');
      const deltas = types.filter((t) => t === 'response.function_call_arguments.delta').length;
      expect(deltas).to.be.greaterThan(1);
      expect(types).to.deep.equal([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        ...new Array<string>(deltas).fill('response.function_call_arguments.delta'),
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(final.output[0]).to.deep.include({ type: 'function_call', arguments: args });
    });

    it('fails a function-call stream after two argument deltas with [sim:stream-error=CODE], the delivered arguments in response.failed', async () => {
      const res = await fetch(`${url}/v1/responses`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', stream: true, tools: [weather], input: 'x [sim:tool=get_weather] [sim:tool-args={"city": "Ushuaia, Tierra del Fuego"}] [sim:stream-error=server_overloaded]' }),
      });
      const events = (await res.text())
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as { type: string; [more: string]: unknown });
      for (const event of events) assertResponseStreamEventAsTheApiSendsIt(event);
      const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e['delta'] as string);
      expect(deltas).to.have.length(2);
      expect(events.at(-2)).to.deep.include({ type: 'error', code: 'server_overloaded' });
      const failed = events.at(-1)!['response'] as { status: string; output: { arguments: string; status: string }[]; usage: { output_tokens: number } };
      expect(failed.status).to.equal('failed');
      expect(failed.output[0]).to.deep.include({ arguments: deltas.join(''), status: 'incomplete' });
      expect(failed.usage.output_tokens, 'the usage of what was delivered').to.equal(countTokens('get_weather') + countTokens(deltas.join('')));
    });
  });

  describe('built-in tools, structured text, reasoning, cached tokens', () => {
    it('adds [sim:web-search=N] and [sim:image-generation=N] calls before the message when the request lists the tools', async () => {
      const tools: OpenAI.Responses.Tool[] = [{ type: 'web_search' }, { type: 'image_generation' }];
      const input = 'News and a picture [sim:web-search=2] [sim:image-generation=1] [sim:tokens=3]';
      const plain = await client.responses.create({ model: 'm', input, tools });
      expect(plain.output.map((item) => item.type)).to.deep.equal(['web_search_call', 'web_search_call', 'image_generation_call', 'message']);
      expect(plain.output[0]).to.deep.include({ status: 'completed', action: { type: 'search', query: 'News and a picture' } });
      const image = plain.output[2]!;
      if (image.type !== 'image_generation_call') throw new Error('an image generation call was expected');
      expect(Buffer.from(image.result!, 'base64').subarray(1, 4).toString('latin1')).to.equal('PNG');
      expect(plain.output_text).to.equal('word1 word2 word3');

      const final = await client.responses.stream({ model: 'm', input, tools }).finalResponse();
      expect(final.output.map((item) => item.type)).to.deep.equal(plain.output.map((item) => item.type));
      const unlisted = await client.responses.create({ model: 'm', input });
      expect(unlisted.output.map((item) => item.type), 'no call of a tool the request does not list').to.deep.equal(['message']);
    });

    it('answers responses.parse with a zod text format', async () => {
      const Person = z.object({ name: z.string(), age: z.int().min(18), emails: z.array(z.email()).min(1), role: z.enum(['admin', 'user']).nullable() });
      const response = await client.responses.parse({ model: 'm', input: 'Invent a person', text: { format: zodTextFormat(Person, 'person') } });
      expect(Person.parse(response.output_parsed)).to.deep.equal(response.output_parsed);
      expect(response.text?.format).to.deep.include({ type: 'json_schema', name: 'person' });
    });

    it('gives a reasoning item and reasoning tokens for reasoning, and cached tokens for [sim:cached=N]', async () => {
      const response = await client.responses.create({ model: 'm', input: 'Think [sim:tokens=4] [sim:reasoning=30] [sim:cached=3]', reasoning: { effort: 'high' } });
      expect(response.output.map((item) => item.type)).to.deep.equal(['reasoning', 'message']);
      expect(response.usage).to.deep.include({ output_tokens: 34, output_tokens_details: { reasoning_tokens: 30 }, input_tokens_details: { cached_tokens: 3, cache_write_tokens: 0 } });
      expect(response.reasoning).to.deep.include({ effort: 'high' });
      const byDefault = await client.responses.create({ model: 'm', input: '[sim:tokens=1]', reasoning: { effort: 'low' } });
      expect(byDefault.usage!.output_tokens_details.reasoning_tokens).to.equal(16);
      const streamed = await client.responses.stream({ model: 'm', input: 'Think [sim:tokens=4] [sim:reasoning=30]', reasoning: { effort: 'high' } }).finalResponse();
      expect(streamed.output.map((item) => item.type)).to.deep.equal(['reasoning', 'message']);
    });

    it('refuses with [sim:refusal]: a refusal part, streamed as refusal deltas', async () => {
      const plain = await client.responses.create({ model: 'm', input: 'bad [sim:refusal]' });
      const message = plain.output[0]!;
      if (message.type !== 'message') throw new Error('a message was expected');
      expect(message.content).to.deep.equal([{ type: 'refusal', refusal: "I'm sorry, but I can't help with that request." }]);
      let refusal = '';
      for await (const event of client.responses.stream({ model: 'm', input: 'bad [sim:refusal]' })) if (event.type === 'response.refusal.delta') refusal += event.delta;
      expect(refusal).to.equal("I'm sorry, but I can't help with that request.");
    });

    it('still answers a 429 with the Retry-After of [sim:retry-after=V]', async () => {
      const res = await fetch(`${url}/v1/responses`, { method: 'POST', body: JSON.stringify({ model: 'm', input: '[sim:status=429] [sim:retry-after=17]' }) });
      expect(res.status).to.equal(429);
      expect(res.headers.get('retry-after')).to.equal('17');
      const err = await client.responses.create({ model: 'm', input: '[sim:status=429]' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(RateLimitError);
    });
  });

  describe('stored responses', () => {
    it('retrieves a stored response, lists its input items and deletes it', async () => {
      const input: OpenAI.Responses.ResponseInput = [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Hello [sim:tokens=2]' }] },
      ];
      const created = await client.responses.create({ model: 'm', input });
      expect(created).to.have.property('store', true);
      const retrieved = await client.responses.retrieve(created.id);
      expect(retrieved.output_text).to.equal(created.output_text);
      expect(retrieved.usage).to.deep.equal(created.usage);

      const items = await client.responses.inputItems.list(created.id, { order: 'asc' });
      expect(items.data.map((item) => (item.type === 'message' ? [item.role, item.content] : item.type))).to.deep.equal([
        ['developer', [{ type: 'input_text', text: 'Be brief.' }]],
        ['user', [{ type: 'input_text', text: 'Hello [sim:tokens=2]' }]],
      ]);
      const newestFirst = await fetch(`${url}/v1/responses/${created.id}/input_items`).then((r) => r.json() as Promise<{ data: { id: string }[]; first_id: string; has_more: boolean }>);
      expect(newestFirst.data.map((item) => item.id)).to.deep.equal(items.data.map((item) => item.id).reverse());
      expect(newestFirst.first_id).to.equal(newestFirst.data[0]!.id);
      expect(newestFirst.has_more).to.equal(false);

      const deleted = await fetch(`${url}/v1/responses/${created.id}`, { method: 'DELETE' });
      expect(await deleted.json()).to.deep.equal({ id: created.id, object: 'response.deleted', deleted: true });
      const gone = await client.responses.retrieve(created.id).catch((e: unknown) => e);
      expect(gone).to.be.instanceOf(NotFoundError);
      expect((gone as NotFoundError).error).to.deep.include({ message: `Response with id '${created.id}' not found.` });
    });

    it('keeps a streamed response, but not one created with store: false', async () => {
      const streamed = await client.responses.stream({ model: 'm', input: 'kept [sim:tokens=2]' }).finalResponse();
      expect((await client.responses.retrieve(streamed.id)).output_text).to.equal('word1 word2');
      const unstored = await client.responses.create({ model: 'm', input: 'forget me', store: false });
      expect(unstored).to.have.property('store', false);
      expect(await client.responses.retrieve(unstored.id).catch((e: unknown) => e)).to.be.instanceOf(NotFoundError);
      const continued = await client.responses.create({ model: 'm', input: 'again', previous_response_id: unstored.id }).catch((e: unknown) => e);
      expect(continued).to.be.instanceOf(BadRequestError);
    });

    it('refuses an unknown previous_response_id with 400 previous_response_not_found, as OpenAI does', async () => {
      const err = await client.responses.create({ model: 'm', input: 'hi', previous_response_id: 'resp_nope' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(BadRequestError);
      expect((err as BadRequestError).error).to.deep.include({ code: 'previous_response_not_found', param: 'previous_response_id', message: "Previous response with id 'resp_nope' not found." });
    });

    it('keeps the newest MAX_STORED responses, forgetting the oldest first', () => {
      const store = new ResponseStore(2);
      const entry = (n: number): { response: object; inputItems: object[]; context: unknown[] } => ({ response: { n }, inputItems: [], context: [] });
      store.put('a', entry(1));
      store.put('b', entry(2));
      store.put('c', entry(3));
      expect([store.get('a'), store.get('b')?.response, store.get('c')?.response]).to.deep.equal([undefined, { n: 2 }, { n: 3 }]);
      expect(MAX_STORED).to.equal(1000);
    });
  });
});
