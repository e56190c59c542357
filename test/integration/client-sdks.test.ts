import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { generateImage, generateText, stepCountIs, streamText, tool, type LanguageModel, type LanguageModelUsage } from 'ai';
import { expect } from 'chai';
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectTrafficAndMoney as checkTrafficAndMoney, type Units } from '../support/client-traffic';
import { assertExchangeValidates, TrafficRecorder } from '../support/openai-traffic';

/** The units of the usage an AI SDK call reports. */
const aiSdkUnits = (usage: LanguageModelUsage): Units => ({ input_tokens: usage.inputTokens!, output_tokens: usage.outputTokens! });

/**
 * The client libraries applications are built on, driven against a running gateway as their users
 * drive them: Vercel's AI SDK (`ai` with `@ai-sdk/openai`) and LangChain (`@langchain/openai`);
 * the `openai` SDK has its own suite (openai-conformance). Every answer and stream item a library
 * received on the wire validates against OpenAI's official OpenAPI document, and every call's usage
 * as the library reports it is what the ledger settled.
 */
describe('the client libraries applications build on, against a running gateway @integration', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => gw.close());

  /** An account of its own, so that its ledger holds only the test's calls, and a recorder for the libraries' traffic. */
  async function session(): Promise<{ key: string; recorder: TrafficRecorder }> {
    const { key } = await gw.fundedAccount(100_000_000);
    return { key, recorder: new TrafficRecorder() };
  }

  const aiSdk = ({ key, recorder }: { key: string; recorder: TrafficRecorder }) => createOpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, fetch: recorder.fetch });

  const langChain = ({ key, recorder }: { key: string; recorder: TrafficRecorder }, options: { useResponsesApi?: boolean } = {}) =>
    new ChatOpenAI({ model: 'chat-fast', apiKey: key, maxRetries: 0, ...options, configuration: { baseURL: `${gw.url}/v1`, fetch: recorder.fetch } });

  const expectTrafficAndMoney = (s: { key: string; recorder: TrafficRecorder }, expected: Parameters<typeof checkTrafficAndMoney>[2]) => checkTrafficAndMoney(gw, s, expected);

  describe("Vercel's AI SDK (ai with @ai-sdk/openai)", () => {
    /**
     * One generateText (a system turn, five tokens) and one streamText (seven tokens) on the model
     * `provider` picks, their traffic and money checked: what the SDK answered and the two exchanges.
     */
    async function generateAndStream(provider: (openai: OpenAIProvider) => LanguageModel, path: string) {
      const s = await session();
      const model = provider(aiSdk(s));
      const generated = await generateText({ model, system: 'Be brief.', prompt: 'Name five colours [sim:tokens=5]', maxRetries: 0 });
      const streamed = streamText({ model, prompt: 'Tell a story [sim:tokens=7]', maxRetries: 0 });
      let streamedText = '';
      for await (const delta of streamed.textStream) streamedText += delta;
      const streamedUsage = await streamed.usage;
      expect([generated.usage.outputTokens, streamedUsage.outputTokens]).to.deep.equal([5, 7]);
      const [plain, stream] = await expectTrafficAndMoney(s, [
        { path, status: 200, streamed: false, units: aiSdkUnits(generated.usage) },
        { path, status: 200, streamed: true, units: aiSdkUnits(streamedUsage) },
      ]);
      return { generated, streamedText, plain: plain!, stream: stream! };
    }

    it('generateText and streamText on the chat completions provider: the text and usage the SDK reports are what the gateway sent and settled', async () => {
      const { generated, streamedText, plain, stream } = await generateAndStream((openai) => openai.chat('chat-fast'), '/v1/chat/completions');
      expect(plain.request.messages).to.deep.equal([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Name five colours [sim:tokens=5]' },
      ]);
      expect(generated.text).to.equal(plain.answer.choices[0].message.content);
      expect(stream.request).to.deep.include({ stream: true, stream_options: { include_usage: true } });
      expect(streamedText).to.equal(stream.streamed!.map((item) => item.choices?.[0]?.delta.content ?? '').join(''));
      expect(stream.streamed!.at(-1)).to.equal('[DONE]');
    });

    it('generateText and streamText on the Responses provider: input as content parts, every stream event validated, usage settled', async () => {
      const { generated, streamedText, plain, stream } = await generateAndStream((openai) => openai.responses('chat-fast'), '/v1/responses');
      expect(plain.request.input).to.deep.equal([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Name five colours [sim:tokens=5]' }] },
      ]);
      expect(generated.text).to.equal(plain.answer.output[0].content[0].text);
      const events = stream.streamed!;
      expect([events[0].type, events.at(-1).type]).to.deep.equal(['response.created', 'response.completed']);
      expect(streamedText).to.equal(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join(''));
    });

    it('generateText with image and file parts on the Responses provider (no `detail`, as the SDK sends them): answered, validated and settled', async () => {
      const s = await session();
      const result = await generateText({
        model: aiSdk(s).responses('chat-pro'),
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe both [sim:tokens=4]' }, { type: 'image', image: new URL('https://example.com/a.png') }, { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'a.pdf' }] }],
        maxRetries: 0,
      });
      expect(result.usage.outputTokens).to.equal(4);
      const [call] = await expectTrafficAndMoney(s, [{ path: '/v1/responses', status: 200, streamed: false, units: aiSdkUnits(result.usage) }]);
      const parts = (call!.request.input as { content: { type: string; detail?: string }[] }[])[0]!.content;
      expect(parts.map((part) => [part.type, part.detail])).to.deep.equal([
        ['input_text', undefined],
        ['input_image', undefined],
        ['input_file', undefined],
      ]);
    });

    it('generateText with tools on the Responses provider: the tool call, its result sent back, the answer; every step validated and settled', async () => {
      const s = await session();
      const executed: string[] = [];
      const result = await generateText({
        model: aiSdk(s).responses('chat-fast'),
        prompt: 'What is the weather in Paris? [sim:tool=lookup]',
        tools: { lookup: tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => (executed.push(city), `sunny in ${city}`) }) },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
      });
      expect(result.steps.map((step) => step.finishReason)).to.deep.equal(['tool-calls', 'stop']);
      expect(executed).to.have.length(1);
      expect(result.text).to.be.a('string').and.not.equal('');
      const calls = await expectTrafficAndMoney(
        s,
        result.steps.map((step) => ({ path: '/v1/responses', status: 200, streamed: false, units: aiSdkUnits(step.usage) })),
      );
      expect(calls[0]!.answer.output.some((item: { type: string }) => item.type === 'function_call')).to.equal(true);
      expect(JSON.stringify(calls[1]!.request.input)).to.include('function_call_output');
    });

    it("generateImage with an image model of the catalog: the provider's request is the spec's, one call an image, each settled per image", async () => {
      const s = await session();
      // The SDK sends one image a call to a model it does not know, so two images are two calls.
      const { images, usage } = await generateImage({ model: aiSdk(s).image('image-5.0'), prompt: 'a lighthouse', n: 2, size: '2048x2048', maxRetries: 0 });
      expect(images).to.have.length(2);
      expect([usage.inputTokens, usage.outputTokens], 'a per-image model reports no tokens').to.deep.equal([undefined, undefined]);
      const calls = await expectTrafficAndMoney(s, [
        { path: '/v1/images/generations', status: 200, streamed: false, units: { images: 1 } },
        { path: '/v1/images/generations', status: 200, streamed: false, units: { images: 1 } },
      ]);
      for (const call of calls) expect(call.request).to.deep.equal({ model: 'image-5.0', prompt: 'a lighthouse', n: 1, size: '2048x2048', response_format: 'b64_json' });
      expect(images.map((image) => image.base64)).to.deep.equal(calls.map((call) => call.answer.data[0].b64_json));
    });
  });

  describe("the openai SDK's Responses: tools, previous_response_id, parse, stored responses", () => {
    const openai = ({ key, recorder }: { key: string; recorder: TrafficRecorder }) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, fetch: recorder.fetch });
    const TOOLS = [{ type: 'function' as const, name: 'lookup', description: 'The weather in a city', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];

    it('responses.create with function tools, the result sent back with previous_response_id; retrieve, inputItems.list and delete the caller’s own', async () => {
      const s = await session();
      const client = openai(s);
      const first = await client.responses.create({ model: 'chat-fast', input: 'Weather in Paris? [sim:tool=lookup]', tools: TOOLS });
      const call = first.output.find((item) => item.type === 'function_call');
      expect(call, 'a function call').to.not.equal(undefined);
      const second = await client.responses.create({ model: 'chat-fast', previous_response_id: first.id, tools: TOOLS, input: [{ type: 'function_call_output', call_id: call!.type === 'function_call' ? call!.call_id : '', output: 'sunny' }] });
      expect(second.output_text).to.be.a('string').and.not.equal('');
      await expectTrafficAndMoney(s, [
        { path: '/v1/responses', status: 200, streamed: false, units: { input_tokens: first.usage!.input_tokens, output_tokens: first.usage!.output_tokens } },
        { path: '/v1/responses', status: 200, streamed: false, units: { input_tokens: second.usage!.input_tokens, output_tokens: second.usage!.output_tokens } },
      ]);

      // The stored responses: free reads of the caller's own, each answer validated.
      const reads = { key: s.key, recorder: new TrafficRecorder() };
      const reader = openai(reads);
      const retrieved = await reader.responses.retrieve(first.id);
      expect(retrieved).to.deep.include({ id: first.id, model: 'chat-fast' });
      const items = await reader.responses.inputItems.list(second.id);
      expect(items.data.map((item) => item.type)).to.include('function_call_output');
      await reader.responses.delete(first.id);
      const gone = await reader.responses.retrieve(first.id).catch((err: unknown) => err);
      expect(gone).to.be.instanceOf(OpenAI.NotFoundError);
      const exchanges = await reads.recorder.exchanges();
      expect(exchanges.map((e) => `${e.method} ${e.status}`)).to.deep.equal(['GET 200', 'GET 200', 'DELETE 200', 'GET 404']);
      for (const exchange of exchanges) assertExchangeValidates(exchange);
    });

    it('responses.parse with a zod schema: the answer satisfies it, validated and settled', async () => {
      const s = await session();
      const Weather = z.object({ city: z.string(), degrees: z.number(), sunny: z.boolean() });
      const parsed = await openai(s).responses.parse({ model: 'chat-fast', input: 'Weather in Paris as JSON', text: { format: zodTextFormat(Weather, 'weather') } });
      expect(Weather.parse(parsed.output_parsed)).to.deep.equal(parsed.output_parsed);
      const [call] = await expectTrafficAndMoney(s, [{ path: '/v1/responses', status: 200, streamed: false, units: { input_tokens: parsed.usage!.input_tokens, output_tokens: parsed.usage!.output_tokens } }]);
      expect(call!.request.text.format).to.include({ type: 'json_schema', name: 'weather' });
    });
  });

  describe('LangChain (@langchain/openai ChatOpenAI)', () => {
    it('invoke and stream on chat completions: the content and usage_metadata LangChain reports are what the gateway sent and settled', async () => {
      const s = await session();
      const model = langChain(s);
      const invoked = await model.invoke('Name five colours [sim:tokens=5]');
      let streamedText = '';
      let streamedUsage: { input_tokens: number; output_tokens: number } | undefined;
      for await (const chunk of await model.stream('Tell a story [sim:tokens=7]')) {
        streamedText += chunk.content as string;
        streamedUsage = chunk.usage_metadata ?? streamedUsage;
      }
      expect([invoked.usage_metadata?.output_tokens, streamedUsage?.output_tokens]).to.deep.equal([5, 7]);

      const [plain, stream] = await expectTrafficAndMoney(s, [
        { path: '/v1/chat/completions', status: 200, streamed: false, units: { input_tokens: invoked.usage_metadata!.input_tokens, output_tokens: invoked.usage_metadata!.output_tokens } },
        { path: '/v1/chat/completions', status: 200, streamed: true, units: { input_tokens: streamedUsage!.input_tokens, output_tokens: streamedUsage!.output_tokens } },
      ]);
      expect(invoked.content).to.equal(plain!.answer.choices[0].message.content);
      expect(stream!.request).to.deep.include({ stream: true, stream_options: { include_usage: true } });
      expect(streamedText).to.equal(stream!.streamed!.map((item) => item.choices?.[0]?.delta.content ?? '').join(''));
    });

    /**
     * The Responses API as LangChain sends it carries `text: {}` on every request: taken as asking
     * nothing (issue 40, section 2), so invoke and stream answer and settle as plain Responses calls.
     */
    it('useResponsesApi: invoke and stream (text: {} on every request) answer, every event validated, usage settled', async () => {
      const s = await session();
      const model = langChain(s, { useResponsesApi: true });
      const invoked = await model.invoke('Name five colours [sim:tokens=5]');
      let streamedText = '';
      let streamedUsage: { input_tokens: number; output_tokens: number } | undefined;
      for await (const chunk of await model.stream('Tell a story [sim:tokens=7]')) {
        streamedText += typeof chunk.content === 'string' ? chunk.content : chunk.content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
        streamedUsage = chunk.usage_metadata ?? streamedUsage;
      }
      expect([invoked.usage_metadata?.output_tokens, streamedUsage?.output_tokens]).to.deep.equal([5, 7]);
      const [plain, stream] = await expectTrafficAndMoney(s, [
        { path: '/v1/responses', status: 200, streamed: false, units: { input_tokens: invoked.usage_metadata!.input_tokens, output_tokens: invoked.usage_metadata!.output_tokens } },
        { path: '/v1/responses', status: 200, streamed: true, units: { input_tokens: streamedUsage!.input_tokens, output_tokens: streamedUsage!.output_tokens } },
      ]);
      expect([plain!.request.text, stream!.request.text]).to.deep.equal([{}, {}]);
      expect(invoked.text).to.equal(plain!.answer.output[0].content[0].text);
      expect(streamedText).to.equal(stream!.streamed!.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join(''));
    });
  });
});
