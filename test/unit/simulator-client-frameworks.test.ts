import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { generateObject, generateText, stepCountIs, streamText, tool as aiTool } from 'ai';
import { expect } from 'chai';
import { z } from 'zod';
import { createSimulator, type Simulator } from '../../simulator/server';
import { TrafficRecorder, assertExchangeValidates } from '../support/openai-traffic';

/**
 * The simulator is usable as the upstream of the frameworks applications build on: the AI SDK's
 * tool loops and generateObject, LangChain's bindTools, withStructuredOutput and Responses mode.
 * Every exchange they make validates against OpenAI's official document.
 */
describe('upstream simulator: driven by the AI SDK and LangChain', () => {
  let sim: Simulator;
  let url: string;
  let traffic: TrafficRecorder;
  let provider: OpenAIProvider;

  const Weather = z.object({ city: z.string(), celsius: z.number().min(-50).max(60), sky: z.enum(['clear', 'cloudy']) });

  before(async () => {
    sim = createSimulator();
    url = await sim.listen(0);
  });

  beforeEach(() => {
    traffic = new TrafficRecorder();
    provider = createOpenAI({ apiKey: 'x', baseURL: `${url}/v1`, fetch: traffic.fetch });
  });

  afterEach(async () => {
    const exchanges = await traffic.exchanges();
    expect(exchanges.length).to.be.greaterThan(0);
    for (const exchange of exchanges) assertExchangeValidates(exchange);
  });

  after(async () => {
    await sim.close();
  });

  const langChain = (options: { useResponsesApi?: boolean } = {}): ChatOpenAI =>
    new ChatOpenAI({ model: 'gpt-4o', apiKey: 'x', maxRetries: 0, ...options, configuration: { baseURL: `${url}/v1`, fetch: traffic.fetch } });

  describe('AI SDK', () => {
    const tools = {
      weather: aiTool({
        description: 'The weather in a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `Sunny in ${city}`,
      }),
    };

    for (const [name, model] of [
      ['chat completions', (): Parameters<typeof generateText>[0]['model'] => provider.chat('gpt-4o')],
      ['Responses', (): Parameters<typeof generateText>[0]['model'] => provider.responses('gpt-4o')],
    ] as const) {
      it(`generateText with a tool and several steps on ${name}: the tool runs, the last step is text`, async () => {
        const result = await generateText({ model: model(), tools, stopWhen: stepCountIs(4), prompt: 'Weather? [sim:tool=weather] [sim:tool-args={"city": "Nice"}]', maxRetries: 0 });
        expect(result.steps).to.have.length(2);
        expect(result.steps[0]!.toolResults.map((r) => r.output)).to.deep.equal(['Sunny in Nice']);
        expect(result.text).to.equal('Simulated answer from the tool result: Sunny in Nice');
      });

      it(`streamText with a tool on ${name}`, async () => {
        const result = streamText({ model: model(), tools, stopWhen: stepCountIs(4), prompt: 'Weather? [sim:tool=weather]', maxRetries: 0 });
        let text = '';
        for await (const delta of result.textStream) text += delta;
        expect(text).to.equal('Simulated answer from the tool result: Sunny in city');
        expect((await result.steps)[0]!.toolCalls.map((c) => c.toolName)).to.deep.equal(['weather']);
      });

      it(`generateObject on ${name}`, async () => {
        const { object } = await generateObject({ model: model(), schema: Weather, prompt: 'The weather in Oslo', maxRetries: 0 });
        expect(Weather.parse(object)).to.deep.equal({ city: 'city', celsius: 0, sky: 'clear' });
      });
    }

    it('sends json_schema with strict: true for generateObject, which the simulator answers', async () => {
      await generateObject({ model: provider.chat('gpt-4o'), schema: Weather, prompt: 'x', maxRetries: 0 });
      const [exchange] = await traffic.exchanges();
      expect(exchange!.request.response_format).to.deep.include({ type: 'json_schema' });
      expect(exchange!.request.response_format.json_schema).to.deep.include({ strict: true });
    });
  });

  describe('LangChain', () => {
    const weather = tool(async ({ city }: { city: string }) => `Rain in ${city}`, { name: 'weather', description: 'The weather in a city', schema: z.object({ city: z.string() }) });

    it('bindTools: the call comes back as a tool call, the tool result as text', async () => {
      const model = langChain().bindTools([weather]);
      const asked = await model.invoke('Weather? [sim:tool=weather] [sim:tool-args={"city": "Bern"}]');
      expect(asked.tool_calls!.map((c) => [c.name, c.args])).to.deep.equal([['weather', { city: 'Bern' }]]);
      const result = await weather.invoke(asked.tool_calls![0]!);
      const final = await model.invoke([
        { role: 'user', content: 'Weather? [sim:tool=weather] [sim:tool-args={"city": "Bern"}]' },
        asked,
        result,
      ]);
      expect(final.content).to.equal('Simulated answer from the tool result: Rain in Bern');
    });

    it('withStructuredOutput, by json_schema and by function calling', async () => {
      const bySchema = await langChain().withStructuredOutput(Weather, { name: 'weather' }).invoke('The weather in Oslo');
      expect(Weather.parse(bySchema)).to.deep.equal(bySchema);
      const byTool = await langChain().withStructuredOutput(Weather, { name: 'weather', method: 'functionCalling' }).invoke('The weather in Oslo');
      expect(Weather.parse(byTool)).to.deep.equal(byTool);
      const sent = (await traffic.exchanges()).map((e) => (e.request.response_format ? 'response_format' : e.request.tool_choice ? 'tool_choice' : 'plain'));
      expect(sent).to.deep.equal(['response_format', 'tool_choice']);
    });

    it('useResponsesApi: invoke and stream', async () => {
      const model = langChain({ useResponsesApi: true });
      const answer = await model.invoke('Hello there [sim:tokens=3]');
      expect(answer.text).to.equal('word1 word2 word3');
      let streamed = '';
      for await (const chunk of await model.stream('Hello there [sim:tokens=3]')) streamed += chunk.text;
      expect(streamed).to.equal('word1 word2 word3');
    });
  });
});
