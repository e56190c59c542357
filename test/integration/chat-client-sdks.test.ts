import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { expect } from 'chai';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { expectTrafficAndMoney, type Units } from '../support/client-traffic';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { TrafficRecorder } from '../support/openai-traffic';
import { chunk, completion, scriptedChatUpstream, toolCall, type ScriptedChat } from '../support/scripted-chat';

const PATH = '/v1/chat/completions';
const WEATHER_PARAMETERS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const WEATHER_TOOL = { type: 'function' as const, function: { name: 'get_weather', description: 'The weather in a city', parameters: WEATHER_PARAMETERS } };

/** A provider's usage of `prompt` and `completion` tokens, and the units its settlement has. */
function usage(prompt: number, completion: number): { usage: object; units: Units } {
  return { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }, units: { input_tokens: prompt, output_tokens: completion } };
}

/**
 * Chat completions beyond the spec's text chat, as the client libraries applications build on
 * send them: tools with their round trips, structured outputs, content parts, n, the developer
 * role and nulls. The provider is scripted (test/support/scripted-chat.ts) with answers as OpenAI
 * gives them; every answer and stream item a library received validates against OpenAI's
 * document, and every call settled the usage its provider reported.
 */
describe('chat completions beyond text chat through the openai SDK, the AI SDK and LangChain @integration', () => {
  let gw: TestGateway;
  let upstream: ScriptedChat;

  before(async () => {
    gw = await startTestGateway();
    upstream = scriptedChatUpstream(gw);
  });
  after(async () => gw.close());

  async function session(): Promise<{ key: string; recorder: TrafficRecorder }> {
    const { key } = await gw.fundedAccount(100_000_000);
    return { key, recorder: new TrafficRecorder() };
  }

  const openai = ({ key, recorder }: { key: string; recorder: TrafficRecorder }) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, fetch: recorder.fetch });
  const aiSdk = ({ key, recorder }: { key: string; recorder: TrafficRecorder }) => createOpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, fetch: recorder.fetch }).chat('chat-fast');
  const langChain = ({ key, recorder }: { key: string; recorder: TrafficRecorder }) =>
    new ChatOpenAI({ model: 'chat-fast', apiKey: key, maxRetries: 0, configuration: { baseURL: `${gw.url}/v1`, fetch: recorder.fetch } });

  describe('the openai SDK', () => {
    it('tools round trip: a tool call, then the developer turn, the assistant call and a tool turn forwarded as sent', async () => {
      const s = await session();
      const client = openai(s);
      const [one, two] = [usage(30, 12), usage(45, 5)];
      upstream.next({ answer: completion([[{ tool_calls: [toolCall('get_weather', { city: 'Paris' })] }, 'tool_calls']], one.usage) });
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'developer', content: 'Answer briefly.' },
        { role: 'user', content: 'Weather in Paris?' },
      ];
      const first = await client.chat.completions.create({ model: 'chat-fast', messages, tools: [WEATHER_TOOL] });
      expect(first.choices[0]!.finish_reason).to.equal('tool_calls');
      const call = first.choices[0]!.message.tool_calls![0]!;
      upstream.next({ answer: completion([[{ content: 'Sunny in Paris.' }, 'stop']], two.usage) });
      const toolTurn = { role: 'tool' as const, tool_call_id: call.id, content: '{"sky":"sunny"}' };
      const second = await client.chat.completions.create({ model: 'chat-fast', messages: [...messages, first.choices[0]!.message, toolTurn], tools: [WEATHER_TOOL] });
      expect(second.choices[0]!.message.content).to.equal('Sunny in Paris.');
      const sent = upstream.received.at(-1)!;
      expect(sent.messages[0]).to.deep.equal({ role: 'developer', content: 'Answer briefly.' });
      expect(sent.messages[2].tool_calls).to.deep.equal([toolCall('get_weather', { city: 'Paris' })]);
      expect(sent.messages[3]).to.deep.equal(toolTurn);
      await expectTrafficAndMoney(gw, s, [
        { path: PATH, status: 200, streamed: false, units: one.units },
        { path: PATH, status: 200, streamed: false, units: two.units },
      ]);
    });

    it('runTools: the SDK runs the tool and sends its result back until the model answers', async () => {
      const s = await session();
      const [one, two] = [usage(20, 8), usage(35, 4)];
      upstream.next({ answer: completion([[{ tool_calls: [toolCall('get_weather', { city: 'Rome' })] }, 'tool_calls']], one.usage) });
      upstream.next({ answer: completion([[{ content: 'Rome is sunny.' }, 'stop']], two.usage) });
      const runner = openai(s).chat.completions.runTools({
        model: 'chat-fast',
        messages: [{ role: 'user', content: 'Weather in Rome?' }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'The weather in a city',
              parameters: WEATHER_PARAMETERS,
              function: (args: { city: string }) => JSON.stringify({ city: args.city, sky: 'sunny' }),
              parse: (text: string) => JSON.parse(text) as { city: string },
            },
          },
        ],
      });
      expect(await runner.finalContent()).to.equal('Rome is sunny.');
      expect(upstream.received.at(-1)!.messages.at(-1)).to.deep.equal({ role: 'tool', tool_call_id: 'call_1', content: JSON.stringify({ city: 'Rome', sky: 'sunny' }) });
      await expectTrafficAndMoney(gw, s, [
        { path: PATH, status: 200, streamed: false, units: one.units },
        { path: PATH, status: 200, streamed: false, units: two.units },
      ]);
    });

    it('chat.completions.parse with a zod schema: a json_schema response_format, the answer parsed', async () => {
      const s = await session();
      const one = usage(40, 10);
      upstream.next({ answer: completion([[{ content: JSON.stringify({ city: 'Oslo', celsius: 4 }) }, 'stop']], one.usage) });
      const Weather = z.object({ city: z.string(), celsius: z.number() });
      const parsed = await openai(s).chat.completions.parse({ model: 'chat-fast', messages: [{ role: 'user', content: 'Weather in Oslo?' }], response_format: zodResponseFormat(Weather, 'weather') });
      expect(parsed.choices[0]!.message.parsed).to.deep.equal({ city: 'Oslo', celsius: 4 });
      expect(upstream.received.at(-1)!.response_format).to.deep.include({ type: 'json_schema' });
      expect(upstream.received.at(-1)!.response_format.json_schema).to.include({ name: 'weather', strict: true });
      await expectTrafficAndMoney(gw, s, [{ path: PATH, status: 200, streamed: false, units: one.units }]);
    });

    it('content parts, n: 2 and nulls: the parts forwarded, both choices answered, the nulls left out', async () => {
      const s = await session();
      const one = usage(1020, 6);
      upstream.next({ answer: completion([[{ content: 'A cat.' }, 'stop'], [{ content: 'A small cat.' }, 'stop']], one.usage) });
      const content: OpenAI.ChatCompletionContentPart[] = [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ];
      const answer = await openai(s).chat.completions.create({ model: 'chat-fast', n: 2, temperature: null, stop: null, messages: [{ role: 'user', content }] });
      expect(answer.choices.map((choice) => choice.message.content)).to.deep.equal(['A cat.', 'A small cat.']);
      const sent = upstream.received.at(-1)!;
      expect(sent).to.include({ n: 2 });
      expect(sent).to.not.have.any.keys('temperature', 'stop');
      expect(sent.messages[0].content).to.deep.equal(content);
      await expectTrafficAndMoney(gw, s, [{ path: PATH, status: 200, streamed: false, units: one.units }]);
    });
  });

  describe("Vercel's AI SDK (ai with @ai-sdk/openai, chat provider)", () => {
    const weather = tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, sky: 'cloudy' }) });

    it('generateText with tools over several steps', async () => {
      const s = await session();
      const [one, two] = [usage(25, 9), usage(40, 4)];
      upstream.next({ answer: completion([[{ tool_calls: [toolCall('get_weather', { city: 'Lima' })] }, 'tool_calls']], one.usage) });
      upstream.next({ answer: completion([[{ content: 'Lima: cloudy.' }, 'stop']], two.usage) });
      const result = await generateText({ model: aiSdk(s), prompt: 'Weather in Lima?', tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
      expect(result.text).to.equal('Lima: cloudy.');
      expect(result.steps.map((step) => step.finishReason)).to.deep.equal(['tool-calls', 'stop']);
      expect(upstream.received.at(-1)!.messages.at(-1)).to.deep.include({ role: 'tool', tool_call_id: 'call_1' });
      await expectTrafficAndMoney(gw, s, [
        { path: PATH, status: 200, streamed: false, units: one.units },
        { path: PATH, status: 200, streamed: false, units: two.units },
      ]);
    });

    it('generateObject: a json_schema response_format, the object parsed', async () => {
      const s = await session();
      const one = usage(30, 12);
      upstream.next({ answer: completion([[{ content: JSON.stringify({ name: 'Ada', languages: ['en', 'fr'] }) }, 'stop']], one.usage) });
      const { object } = await generateObject({ model: aiSdk(s), schema: z.object({ name: z.string(), languages: z.array(z.string()) }), prompt: 'A programmer', maxRetries: 0 });
      expect(object).to.deep.equal({ name: 'Ada', languages: ['en', 'fr'] });
      expect(upstream.received.at(-1)!.response_format).to.deep.include({ type: 'json_schema' });
      await expectTrafficAndMoney(gw, s, [{ path: PATH, status: 200, streamed: false, units: one.units }]);
    });

    it('streamText with tools: tool-call deltas streamed, the tool run, the answer streamed', async () => {
      const s = await session();
      const [one, two] = [usage(22, 7), usage(38, 3)];
      const argument = (text: string) => ({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: text } }] }, finish_reason: null });
      upstream.next({
        chunks: [
          chunk([{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, finish_reason: null }]),
          chunk([argument('{"city":')]),
          chunk([argument('"Quito"}')]),
          chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
          chunk([], one.usage),
        ],
      });
      upstream.next({
        chunks: [
          chunk([{ index: 0, delta: { role: 'assistant', content: 'Quito' }, finish_reason: null }]),
          chunk([{ index: 0, delta: { content: ' is mild.' }, finish_reason: null }]),
          chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
          chunk([], two.usage),
        ],
      });
      const result = streamText({ model: aiSdk(s), prompt: 'Weather in Quito?', tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
      let text = '';
      for await (const delta of result.textStream) text += delta;
      expect(text).to.equal('Quito is mild.');
      expect((await result.steps)[0]!.toolCalls.map((call) => [call.toolName, call.input])).to.deep.equal([['get_weather', { city: 'Quito' }]]);
      const [first] = await expectTrafficAndMoney(gw, s, [
        { path: PATH, status: 200, streamed: true, units: one.units },
        { path: PATH, status: 200, streamed: true, units: two.units },
      ]);
      const deltas = first!.streamed!.filter((item) => item !== '[DONE]' && item.choices[0]?.delta.tool_calls).map((item) => item.choices[0].delta.tool_calls[0].function.arguments);
      expect(deltas).to.deep.equal(['', '{"city":', '"Quito"}']);
    });

    it('image parts: sent as image_url parts and answered', async () => {
      const s = await session();
      const one = usage(1010, 3);
      upstream.next({ answer: completion([[{ content: 'A square.' }, 'stop']], one.usage) });
      const result = await generateText({
        model: aiSdk(s),
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in it?' }, { type: 'image', image: new Uint8Array([137, 80, 78, 71]), mediaType: 'image/png' }] }],
        maxRetries: 0,
      });
      expect(result.text).to.equal('A square.');
      expect(upstream.received.at(-1)!.messages[0].content.map((part: { type: string }) => part.type)).to.deep.equal(['text', 'image_url']);
      await expectTrafficAndMoney(gw, s, [{ path: PATH, status: 200, streamed: false, units: one.units }]);
    });
  });

  describe('LangChain (@langchain/openai ChatOpenAI)', () => {
    it('bindTools: the tool offered, the call LangChain reports is the one the provider made', async () => {
      const s = await session();
      const one = usage(28, 9);
      upstream.next({ answer: completion([[{ tool_calls: [toolCall('get_weather', { city: 'Bern' })] }, 'tool_calls']], one.usage) });
      const message = await langChain(s).bindTools([WEATHER_TOOL]).invoke('Weather in Bern?');
      expect(message.tool_calls).to.deep.equal([{ name: 'get_weather', args: { city: 'Bern' }, id: 'call_1', type: 'tool_call' }]);
      expect(upstream.received.at(-1)!.tools).to.deep.equal([WEATHER_TOOL]);
      await expectTrafficAndMoney(gw, s, [{ path: PATH, status: 200, streamed: false, units: one.units }]);
    });

    it('withStructuredOutput with a zod schema: the object LangChain returns is the one the provider wrote', async () => {
      const s = await session();
      const one = usage(33, 11);
      const person = { name: 'Grace', age: 85 };
      // LangChain picks the method (a json_schema or a forced tool call): the provider answers whichever it was asked.
      upstream.next((request) =>
        request.tools
          ? { answer: completion([[{ tool_calls: [toolCall(request.tools[0].function.name, person)] }, 'tool_calls']], one.usage) }
          : { answer: completion([[{ content: JSON.stringify(person) }, 'stop']], one.usage) },
      );
      const result = await langChain(s)
        .withStructuredOutput(z.object({ name: z.string(), age: z.number() }))
        .invoke('Who wrote the first compiler?');
      expect(result).to.deep.equal(person);
      await expectTrafficAndMoney(gw, s, [{ path: PATH, status: 200, streamed: false, units: one.units }]);
    });
  });
});
