import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../support/gateway';

/**
 * The README's `CHANNELS` example names only `default`, while the catalog's search and agent
 * models use the channels `tavily` and `coze`: the gateway starts as printed, sends the
 * `default` models to the configured provider, and the models of the channels it leaves out are
 * unavailable (never served by the simulator: a real deployment must not sell simulated answers).
 */
describe("the README's one-channel CHANNELS example @integration", () => {
  let provider: http.Server;
  let providerUrl: string;
  const calls: string[] = [];
  const bodies: unknown[] = [];
  let gw: TestGateway;

  before(async () => {
    // A provider of this suite's own: it answers every chat completion with three tokens and records the call.
    provider = http.createServer((req, res) => {
      calls.push(`${req.method} ${req.url}`);
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        bodies.push(JSON.parse(body));
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: 'chatcmpl-provider',
            object: 'chat.completion',
            created: 1,
            model: 'provider-model',
            choices: [{ index: 0, message: { role: 'assistant', content: 'from the provider' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
    gw = await startTestGateway({
      CHANNELS: JSON.stringify([{ name: 'default', base_url: providerUrl, api_key: 'sk-test', timeout_ms: 60000, max_concurrency: 64 }]),
    });
  });
  after(async () => {
    await gw?.close();
    await new Promise((resolve) => provider?.close(resolve));
  });

  it('starts, sends default-channel models to the configured provider, and answers 400 model_not_found for the models of the channels it leaves out', async () => {
    const { key } = await gw.fundedAccount(1_000_000);
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'hello' }] });
    expect(completion.choices[0]?.message.content).to.equal('from the provider');
    expect(calls).to.deep.equal(['POST /v1/chat/completions']);

    expect(gw.upstreams.channel('default').config.base_url).to.equal(providerUrl);
    expect(gw.upstreams.fallbackUrl, 'no simulator runs beside real channels').to.equal(null);
    for (const name of ['tavily', 'coze']) expect(gw.catalog.channels().has(name), `the catalog names ${name}`).to.equal(true);
    const listed = (await gw.api(key, 'GET', '/v1/models')).body.data.map((m: { id: string }) => m.id);
    expect(listed).to.include('chat-fast').and.not.include('webqa-pro').and.not.include('risk-agent');
    const bot = await gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'hi' }] });
    expect(bot.status, JSON.stringify(bot.body)).to.equal(400);
    const risk = await gw.api(key, 'POST', '/v1/agent/risk/chat/completions', { messages: [{ role: 'user', content: '青峦数据科技有限公司' }] });
    // Risk has no status list in the spec: a gateway whose risk agent is not sold answers 503 (shape A).
    expect([risk.status, risk.body.error?.code], JSON.stringify(risk.body)).to.deep.equal([503, 'model_unavailable']);
    expect(calls, 'the provider saw only the chat call').to.deep.equal(['POST /v1/chat/completions']);
    expect((await gw.balance(key)).frozen).to.equal(0);
    await gw.expectAuditClean();
  });

  it('sends the provider the client\'s request under the model\'s name, max_completion_tokens as sent (never renamed) and the stream flag set', async () => {
    const { key } = await gw.fundedAccount(1_000_000);
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    bodies.length = 0;
    const messages = [{ role: 'user' as const, content: 'hello' }];
    await client.chat.completions.create({ model: 'chat-fast', messages, max_completion_tokens: 7, temperature: 0.5, user: 'u-1' });
    await client.chat.completions.create({ model: 'chat-fast', messages, max_tokens: 9 });
    expect(bodies).to.deep.equal([
      // OpenAI's reasoning models refuse max_tokens: the client's max_completion_tokens goes as it was sent (issue 40).
      { model: 'chat-fast', messages, temperature: 0.5, user: 'u-1', max_completion_tokens: 7, stream: false },
      { model: 'chat-fast', messages, max_tokens: 9, stream: false },
    ]);
  });
});
