import { expect } from 'chai';
import { OpenAI } from 'openai';
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { SIM_PART_TOKENS } from '../../simulator/answer';
import { createSimulator, type Simulator } from '../../simulator/server';
import { countMessageTokens, countTokens } from '../../src/billing/tokens';
import { TrafficRecorder, assertExchangeValidates } from '../support/openai-traffic';

/**
 * The chat simulator's answers to the requests real applications send (issue 40): tool calls,
 * streamed tool-call deltas, structured outputs, n choices, usage details, content parts,
 * refusals and logprobs, driven through the openai SDK; every answer and chunk it sent is
 * validated against OpenAI's official document.
 */
describe('upstream simulator: the chat surface of OpenAI (tools, structured outputs, n, details)', () => {
  let sim: Simulator;
  let traffic: TrafficRecorder;
  let client: OpenAI;

  const parameters = {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
    required: ['city', 'days'],
    additionalProperties: false,
  };
  const tools: OpenAI.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', parameters } },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } },
  ];
  const user = (content: string): OpenAI.ChatCompletionMessageParam[] => [{ role: 'user', content }];

  before(async () => {
    sim = createSimulator();
    const url = await sim.listen(0);
    traffic = new TrafficRecorder();
    client = new OpenAI({ apiKey: 'x', baseURL: `${url}/v1`, maxRetries: 0, fetch: traffic.fetch });
  });

  afterEach(async () => {
    // Every answer and stream item the simulator sent validates against OpenAI's document.
    for (const exchange of await traffic.exchanges()) assertExchangeValidates(exchange);
  });

  after(async () => {
    await sim.close();
  });

  describe('tool calls', () => {
    it('calls the tool [sim:tool=NAME] picks with [sim:tool-args={…}], then answers the tool result with text', async () => {
      const messages = user('What is the weather? [sim:tool=get_weather] [sim:tool-args={"city": "Paris", "days": 2}]');
      const first = await client.chat.completions.create({ model: 'm', messages, tools });
      const choice = first.choices[0]!;
      expect(choice.finish_reason).to.equal('tool_calls');
      expect(choice.message.content).to.equal(null);
      const call = choice.message.tool_calls![0]!;
      expect(call.type).to.equal('function');
      if (call.type !== 'function') throw new Error('a function call was expected');
      expect(call.function.name).to.equal('get_weather');
      expect(JSON.parse(call.function.arguments)).to.deep.equal({ city: 'Paris', days: 2 });
      expect(first.usage!.completion_tokens).to.equal(countTokens('get_weather') + countTokens(call.function.arguments));

      const second = await client.chat.completions.create({
        model: 'm',
        tools,
        messages: [...messages, choice.message, { role: 'tool', tool_call_id: call.id, content: 'Sunny and 21 degrees' }],
      });
      expect(second.choices[0]!.finish_reason).to.equal('stop');
      expect(second.choices[0]!.message.content).to.equal('Simulated answer from the tool result: Sunny and 21 degrees');
    });

    it('generates arguments from the parameters schema; tool_choice required takes the first tool, a named one that tool, none no tool', async () => {
      const required = await client.chat.completions.create({ model: 'm', messages: user('anything'), tools, tool_choice: 'required' });
      const call = required.choices[0]!.message.tool_calls![0]!;
      if (call.type !== 'function') throw new Error('a function call was expected');
      expect(call.function.name).to.equal('get_weather');
      expect(JSON.parse(call.function.arguments)).to.deep.equal({ city: 'city', days: 1 });

      const named = await client.chat.completions.create({ model: 'm', messages: user('x [sim:tool=get_weather]'), tools, tool_choice: { type: 'function', function: { name: 'get_time' } } });
      expect(named.choices[0]!.message.tool_calls!.map((c) => (c.type === 'function' ? c.function.name : c.type))).to.deep.equal(['get_time']);

      const none = await client.chat.completions.create({ model: 'm', messages: user('x [sim:tool=get_weather]'), tools, tool_choice: 'none' });
      expect(none.choices[0]!.finish_reason).to.equal('stop');
      expect(none.choices[0]!.message.content).to.equal('Simulated answer to: x');

      const auto = await client.chat.completions.create({ model: 'm', messages: user('no directive'), tools });
      expect(auto.choices[0]!.message.tool_calls).to.equal(undefined);
      const unknown = await client.chat.completions.create({ model: 'm', messages: user('x [sim:tool=not_offered]'), tools });
      expect(unknown.choices[0]!.finish_reason, 'a tool the request does not offer is never called').to.equal('stop');
    });

    it('makes parallel calls for [sim:tool=A,B], one when parallel_tool_calls is false', async () => {
      const messages = user('both [sim:tool=get_weather,get_time]');
      const parallel = await client.chat.completions.create({ model: 'm', messages, tools });
      const calls = parallel.choices[0]!.message.tool_calls!;
      expect(calls.map((c) => (c.type === 'function' ? c.function.name : c.type))).to.deep.equal(['get_weather', 'get_time']);
      expect(new Set(calls.map((c) => c.id)).size).to.equal(2);
      const single = await client.chat.completions.create({ model: 'm', messages, tools, parallel_tool_calls: false });
      expect(single.choices[0]!.message.tool_calls).to.have.length(1);
    });

    it('answers legacy functions with message.function_call and finish_reason function_call', async () => {
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: user('old style [sim:tool=get_weather]'),
        functions: [{ name: 'get_weather', parameters }],
      });
      expect(completion.choices[0]!.finish_reason).to.equal('function_call');
      expect(completion.choices[0]!.message.function_call).to.deep.equal({ name: 'get_weather', arguments: '{"city":"city","days":1}' });
      const after = await client.chat.completions.create({
        model: 'm',
        messages: [...user('old style [sim:tool=get_weather]'), completion.choices[0]!.message, { role: 'function', name: 'get_weather', content: 'rain' }],
        functions: [{ name: 'get_weather', parameters }],
      });
      expect(after.choices[0]!.message.content).to.equal('Simulated answer from the tool result: rain');
    });

    it("ends the SDK's runTools loop: the tool runs with the arguments, the next answer is text", async () => {
      const seen: unknown[] = [];
      const runner = client.chat.completions.runTools({
        model: 'm',
        messages: user('Plan a trip [sim:tool=get_weather] [sim:tool-args={"city": "Rome", "days": 3}]'),
        tools: [
          zodFunction({
            name: 'get_weather',
            parameters: z.object({ city: z.string(), days: z.int() }),
            function: (args) => {
              seen.push(args);
              return 'warm';
            },
          }),
        ],
      });
      expect(await runner.finalContent()).to.equal('Simulated answer from the tool result: warm');
      expect(seen).to.deep.equal([{ city: 'Rome', days: 3 }]);
    });

    it('streams tool calls as OpenAI does: a header with index, id, type, name and empty arguments, then argument fragments', async () => {
      const messages = user('both [sim:tool=get_weather,get_time] [sim:tool-args={"city": "Oslo", "days": 5}]');
      const plain = await client.chat.completions.create({ model: 'm', messages, tools });
      const stream = client.chat.completions.stream({ model: 'm', messages, tools, stream_options: { include_usage: true } });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const final = await stream.finalChatCompletion();
      expect(final.choices[0]!.finish_reason).to.equal('tool_calls');
      const names = (calls: readonly OpenAI.ChatCompletionMessageToolCall[] | undefined): unknown[] =>
        (calls ?? []).map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : c.type));
      expect(names(final.choices[0]!.message.tool_calls)).to.deep.equal(names(plain.choices[0]!.message.tool_calls));
      expect(final.usage).to.deep.equal(plain.usage);

      const deltas = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
      expect(deltas[0]).to.deep.include({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
      expect(deltas[0]!.id).to.be.a('string');
      expect(chunks[0]!.choices[0]!.delta.role).to.equal('assistant');
      const second = deltas.findIndex((d) => d.index === 1);
      expect(deltas[second]).to.deep.include({ index: 1, type: 'function', function: { name: 'get_time', arguments: '' } });
      const fragments = deltas.slice(1, second);
      expect(fragments.length).to.be.greaterThan(1);
      expect(fragments.every((d) => d.id === undefined && d.function?.name === undefined)).to.equal(true);
      expect(fragments.map((d) => d.function!.arguments).join('')).to.equal('{"city":"Oslo","days":5}');
    });

    it('ends a tool-call stream with the provider error after two argument fragments with [sim:stream-error=CODE]', async () => {
      const stream = await client.chat.completions.create({
        model: 'm',
        messages: user('x [sim:tool=get_weather] [sim:stream-error=server_overloaded]'),
        tools,
        stream: true,
      });
      const fragments: string[] = [];
      const failure = await (async () => {
        for await (const chunk of stream) {
          const delta = chunk.choices[0]?.delta.tool_calls?.[0];
          if (delta?.function?.arguments) fragments.push(delta.function.arguments);
        }
      })().catch((err: unknown) => err);
      expect(failure).to.be.instanceOf(OpenAI.APIError);
      expect((failure as InstanceType<typeof OpenAI.APIError>).message).to.include('server_overloaded');
      expect(fragments).to.have.length(2);
    });
  });

  describe('structured outputs', () => {
    it('answers chat.completions.parse with a zod schema', async () => {
      const Recipe = z.object({
        title: z.string(),
        servings: z.int().min(2),
        ingredients: z.array(z.object({ name: z.string(), grams: z.number().nullable() })).min(3),
        diet: z.enum(['vegan', 'any']),
      });
      const completion = await client.chat.completions.parse({ model: 'm', messages: user('A recipe please'), response_format: zodResponseFormat(Recipe, 'recipe') });
      const parsed = completion.choices[0]!.message.parsed!;
      expect(Recipe.parse(parsed)).to.deep.equal(parsed);
      expect(parsed.ingredients).to.have.length(3);
      expect(parsed.servings).to.equal(2);
    });

    it('answers json_object with a JSON object, streamed in several deltas', async () => {
      const messages = user('Give me JSON about cats');
      const plain = await client.chat.completions.create({ model: 'm', messages, response_format: { type: 'json_object' } });
      expect(JSON.parse(plain.choices[0]!.message.content!)).to.deep.equal({ answer: 'Simulated answer to: Give me JSON about cats' });
      const stream = await client.chat.completions.create({ model: 'm', messages, response_format: { type: 'json_object' }, stream: true });
      let text = '';
      let deltas = 0;
      for await (const chunk of stream) {
        const content = chunk.choices[0]?.delta.content;
        if (content) (text += content), deltas++;
      }
      expect(text).to.equal(plain.choices[0]!.message.content);
      expect(deltas).to.be.greaterThan(1);
    });
  });

  describe('n choices, usage details, parts, refusals, logprobs', () => {
    it('answers n choices, indexed, marked from the second on, usage counting every choice', async () => {
      const messages = user('Pick a name [sim:tokens=4]');
      const completion = await client.chat.completions.create({ model: 'm', messages, n: 3 });
      expect(completion.choices.map((c) => c.index)).to.deep.equal([0, 1, 2]);
      expect(completion.choices.map((c) => c.message.content)).to.deep.equal(['word1 word2 word3 word4', '[2]word1 word2 word3 word4', '[3]word1 word2 word3 word4']);
      expect(completion.usage).to.deep.include({ prompt_tokens: countMessageTokens([{ role: 'user', content: 'Pick a name [sim:tokens=4]' }]), completion_tokens: 12 });

      const stream = await client.chat.completions.create({ model: 'm', messages, n: 3, stream: true, stream_options: { include_usage: true } });
      const texts = ['', '', ''];
      const finishes: (string | null)[] = [null, null, null];
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        for (const choice of chunk.choices) {
          texts[choice.index] += choice.delta.content ?? '';
          finishes[choice.index] ??= choice.finish_reason;
        }
        if (chunk.choices.length === 0) usage = chunk.usage;
      }
      expect(texts).to.deep.equal(completion.choices.map((c) => c.message.content));
      expect(finishes).to.deep.equal(['stop', 'stop', 'stop']);
      expect(usage).to.deep.equal(completion.usage);
    });

    it('reports cached and reasoning tokens in the details, reasoning counted inside completion_tokens', async () => {
      const messages = user('Think hard [sim:tokens=5] [sim:cached=3] [sim:reasoning=40]');
      const completion = await client.chat.completions.create({ model: 'm', messages });
      const prompt = countMessageTokens([{ role: 'user', content: 'Think hard [sim:tokens=5] [sim:cached=3] [sim:reasoning=40]' }]);
      expect(completion.usage).to.deep.equal({
        prompt_tokens: prompt,
        completion_tokens: 45,
        total_tokens: prompt + 45,
        prompt_tokens_details: { cached_tokens: 3, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 40, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      });
      const capped = await client.chat.completions.create({ model: 'm', messages: user('x [sim:cached=100000]') });
      expect(capped.usage!.prompt_tokens_details!.cached_tokens, 'never more cached than the prompt').to.equal(capped.usage!.prompt_tokens);
      const effort = await client.chat.completions.create({ model: 'm', messages: user('[sim:tokens=2]'), reasoning_effort: 'low' });
      expect(effort.usage!.completion_tokens_details!.reasoning_tokens, 'a request for reasoning spends some').to.equal(16);
      expect(effort.usage!.completion_tokens).to.equal(18);
    });

    it('counts each image, audio and file part at a fixed number of prompt tokens, audio in the details', async () => {
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in these?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
              { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
            ],
          },
        ],
      });
      expect(SIM_PART_TOKENS).to.deep.equal({ image: 765, audio: 1500, file: 3000 });
      expect(completion.usage!.prompt_tokens).to.equal(2 + 4 + 4 + 765 + 1500 + 3000);
      expect(completion.usage!.prompt_tokens_details).to.deep.equal({ cached_tokens: 0, audio_tokens: 1500 });
      expect(completion.choices[0]!.message.content).to.equal('Simulated answer to: What is in these?');
    });

    it('refuses with [sim:refusal]: message.refusal and no content, streamed as delta.refusal', async () => {
      const messages = user('Something bad [sim:refusal]');
      const plain = await client.chat.completions.create({ model: 'm', messages });
      expect(plain.choices[0]!.message).to.deep.include({ content: null, refusal: "I'm sorry, but I can't help with that request." });
      expect(plain.choices[0]!.finish_reason).to.equal('stop');
      const stream = client.chat.completions.stream({ model: 'm', messages });
      let refusal = '';
      for await (const chunk of stream) refusal += chunk.choices[0]?.delta.refusal ?? '';
      expect(refusal).to.equal(plain.choices[0]!.message.refusal);
      expect((await stream.finalChatCompletion()).choices[0]!.message.refusal).to.equal(refusal);
    });

    it('gives logprobs per token with top_logprobs, plain and streamed', async () => {
      const messages = user('Say it [sim:tokens=3]');
      const plain = await client.chat.completions.create({ model: 'm', messages, logprobs: true, top_logprobs: 2 });
      const content = plain.choices[0]!.logprobs!.content!;
      expect(content.map((t) => t.token)).to.deep.equal(['word1', ' word2', ' word3']);
      expect(content.every((t) => t.top_logprobs.length === 2 && t.top_logprobs[0]!.token === t.token && t.logprob < 0)).to.equal(true);
      expect(Buffer.from(content[1]!.bytes!).toString('utf8')).to.equal(' word2');

      const stream = await client.chat.completions.create({ model: 'm', messages, logprobs: true, top_logprobs: 2, stream: true });
      const streamed: OpenAI.ChatCompletionTokenLogprob[] = [];
      for await (const chunk of stream) streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
      expect(streamed).to.deep.equal(content);
    });

    it('honours max_completion_tokens, cutting with finish_reason length', async () => {
      const completion = await client.chat.completions.create({ model: 'm', messages: user('[sim:tokens=9]'), max_completion_tokens: 4 });
      expect(completion.choices[0]!.message.content).to.equal('word1 word2 word3 word4');
      expect(completion.choices[0]!.finish_reason).to.equal('length');
    });

    it('keeps the usage of a plain request to the three counts', async () => {
      const completion = await client.chat.completions.create({ model: 'm', messages: user('plain [sim:tokens=2]') });
      expect(Object.keys(completion.usage!)).to.deep.equal(['prompt_tokens', 'completion_tokens', 'total_tokens']);
    });
  });
});
