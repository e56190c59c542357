import fs from 'node:fs';
import { expect } from 'chai';
import OpenAI from 'openai';
import { botPricing } from '../../src/agents/model-types';
import { tokenCharge } from '../../src/billing/money';
import { countMessageTokens, countTokens } from '../../src/billing/tokens';
import { EXAMPLE_CHANNELS_FILE, type ChannelEntry } from '../../src/upstreams/registry';
import { expectChatChunkFrames } from '../support/sse-frames';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';

/** The channels file's placeholder Coze token: the one the simulated Coze takes. */
const cozeToken = (JSON.parse(fs.readFileSync(EXAMPLE_CHANNELS_FILE, 'utf8')) as ChannelEntry[]).find((e) => e.protocol === 'coze')!.api_key!;

describe('web Q&A agent @integration', () => {
  let gw: TestGateway;
  let key: string;
  let client: OpenAI;
  let pro: ReturnType<typeof botPricing>;
  let basic: ReturnType<typeof botPricing>;

  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000', SSE_PING_MS: '200', UPSTREAM_TIMEOUT_MS: '800' });
    ({ key } = await gw.fundedAccount(100_000_000));
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1/agent`, maxRetries: 0 });
    pro = botPricing(gw.catalog.get('webqa-pro')!);
    basic = botPricing(gw.catalog.get('webqa-basic')!);
  });
  afterEach(async () => {
    const me = await gw.api(key, 'GET', '/v1/account');
    expect(me.body.balance.frozen, 'no reservation is left open').to.equal(0);
    await gw.expectAuditClean();
  });
  after(async () => gw.close());

  async function charged<T>(work: () => Promise<T>, k = key): Promise<{ result: T; charge: number }> {
    const before = (await gw.api(k, 'GET', '/v1/account')).body.balance.available as number;
    const result = await work();
    return { result, charge: before - ((await gw.api(k, 'GET', '/v1/account')).body.balance.available as number) };
  }

  const ask = (body: Record<string, unknown>, path = '/v1/agent/chat/completions', k: string | null = key) => gw.api(k, 'POST', path, body);

  it('answers a Pro bot plainly through the openai SDK, with follow-ups and cards, billed by the tokens it reports', async () => {
    const messages = [
      { role: 'system' as const, content: 'Answer from the web.' },
      { role: 'user' as const, content: 'What changed in tidal energy this year? [sim:tokens=5]' },
    ];
    const { result, charge } = await charged(() =>
      client.chat.completions.create({ model: 'webqa-pro', messages, bot_id: 'webqa-pro' } as OpenAI.ChatCompletionCreateParamsNonStreaming),
    );
    const body = result as unknown as Record<string, any>;
    expect(result.object).to.equal('chat.completion');
    expect(result.model).to.equal('webqa-pro');
    expect(body.bot_id).to.equal('webqa-pro');
    expect(body.conversation_id).to.be.a('string').and.not.equal('');
    expect(result.choices[0]!.message).to.deep.include({ role: 'assistant', content: 'word1 word2 word3 word4 word5' });
    expect(result.choices[0]!.finish_reason).to.equal('stop');
    expect(body.follow_ups).to.have.length(3);
    expect(body.cards).to.have.length(1);
    expect(body.cards[0]).to.include.keys('type', 'title', 'url');
    const followUpTokens = (body.follow_ups as string[]).reduce((n, f) => n + countTokens(f), 0);
    // Coze takes user and assistant messages only (a bot's instructions are its own configuration):
    // the system message is not sent, and the simulated bot reports the tokens of what it was sent.
    const sent = messages.filter((m) => m.role !== 'system');
    expect(countMessageTokens(sent)).to.be.lessThan(countMessageTokens(messages));
    expect(result.usage).to.deep.equal({ prompt_tokens: countMessageTokens(sent), completion_tokens: 5 + followUpTokens, total_tokens: countMessageTokens(sent) + 5 + followUpTokens });
    expect(charge).to.equal(tokenCharge(pro, result.usage!.prompt_tokens, result.usage!.completion_tokens));
  });

  it('streams a Pro bot as chat-completion chunks, then one chunk with the extras and usage', async () => {
    const messages = [{ role: 'user' as const, content: 'Explain neap tides [sim:tokens=7]' }];
    const { result, charge } = await charged(async () => {
      const stream = await client.chat.completions.create({ model: 'webqa-pro', messages, stream: true, bot_id: 'webqa-pro' } as OpenAI.ChatCompletionCreateParamsStreaming);
      const chunks: any[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      return chunks;
    });
    expect(new Set(result.map((c) => c.id)).size).to.equal(1);
    expect(result[0].choices[0].delta.role).to.equal('assistant');
    const text = result.flatMap((c) => c.choices.map((ch: any) => ch.delta.content ?? '')).join('');
    expect(text).to.equal('word1 word2 word3 word4 word5 word6 word7');
    expect(result.some((c) => c.choices[0]?.finish_reason === 'stop')).to.equal(true);
    const last = result[result.length - 1];
    expect(last.choices).to.deep.equal([]);
    expect(last.follow_ups).to.have.length(3);
    expect(last.cards).to.have.length(1);
    expect(last.conversation_id).to.be.a('string');
    expect(last.usage.prompt_tokens).to.equal(countMessageTokens(messages));
    expect(last.usage.completion_tokens).to.equal(7 + last.follow_ups.reduce((n: number, f: string) => n + countTokens(f), 0));
    expect(charge).to.equal(tokenCharge(pro, last.usage.prompt_tokens, last.usage.completion_tokens));
  });

  /**
   * The exact framing of a successful web Q&A stream: the assistant role chunk, content deltas, a
   * `finish_reason: "stop"` chunk, one `choices: []` chunk with the agent's extras and usage, then
   * `data: [DONE]`; nothing but `: ping` comments in between, and no `event:` lines.
   */
  function expectWebQaFrames(text: string, bot: string): { content: string; last: any } {
    const { content, last } = expectChatChunkFrames(text, { model: bot, bot_id: bot }, ['conversation_id', 'follow_ups', 'cards', 'usage']);
    return { content, last };
  }

  it('bills the usage the agent reports, not the gateway\'s own count, plain and streamed', async () => {
    // [sim:usage=P,C]: the bot reports P input and C output tokens whatever the text.
    const plainMessages = [{ role: 'user', content: 'How high was the tide? [sim:usage=97,13]' }];
    const { result: plain, charge: plainCharge } = await charged(() => ask({ bot_id: 'webqa-pro', messages: plainMessages }));
    expect(plain.status).to.equal(200);
    expect(plain.body.usage).to.deep.equal({ prompt_tokens: 97, completion_tokens: 13, total_tokens: 110 });
    expect(plainCharge).to.equal(tokenCharge(pro, 97, 13));
    // The gateway's own count differs: a gateway ignoring the report would bill something else.
    const countedCompletion = countTokens(plain.body.choices[0].message.content) + (plain.body.follow_ups as string[]).reduce((n, f) => n + countTokens(f), 0);
    expect([countMessageTokens(plainMessages), countedCompletion]).to.not.deep.equal([97, 13]);
    expect(countMessageTokens(plainMessages)).to.not.equal(97);
    expect(countedCompletion).to.not.equal(13);
    expect(tokenCharge(pro, countMessageTokens(plainMessages), countedCompletion)).to.not.equal(plainCharge);

    const streamMessages = [{ role: 'user', content: 'And the low tide? [sim:usage=41,29] [sim:tokens=6]' }];
    const { result: text, charge: streamCharge } = await charged(async () => {
      const res = await fetch(`${gw.url}/v1/agent/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ bot_id: 'webqa-pro', stream: true, messages: streamMessages }),
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
      return res.text();
    });
    const { content, last } = expectWebQaFrames(text, 'webqa-pro');
    expect(content).to.equal('word1 word2 word3 word4 word5 word6');
    expect(last.follow_ups).to.have.length(3);
    expect(last.cards).to.have.length(1);
    expect(last.conversation_id).to.be.a('string').and.not.equal('');
    expect(last.usage).to.deep.equal({ prompt_tokens: 41, completion_tokens: 29, total_tokens: 70 });
    expect(countMessageTokens(streamMessages)).to.not.equal(41);
    expect(6 + (last.follow_ups as string[]).reduce((n, f) => n + countTokens(f), 0)).to.not.equal(29);
    expect(streamCharge).to.equal(tokenCharge(pro, 41, 29));
  });

  it('continues a conversation: the bot remembers the earlier turn of the same conversation_id only', async () => {
    const first = await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'What is a spring tide?' }] });
    expect(first.status).to.equal(200);
    const conversation = first.body.conversation_id as string;
    expect(conversation).to.be.a('string').and.not.equal('');
    expect(first.body.choices[0].message.content).not.to.include('earlier in this conversation');

    const second = await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'And a neap tide?' }], extension_options: { conversation_id: conversation } });
    expect(second.status).to.equal(200);
    expect(second.body.conversation_id).to.equal(conversation);
    expect(second.body.choices[0].message.content).to.equal('webqa-pro answers: And a neap tide? (earlier in this conversation you asked: "What is a spring tide?")');

    // Streamed too, and a third turn sees the second.
    const stream = await client.chat.completions.create({
      model: 'webqa-pro',
      stream: true,
      messages: [{ role: 'user', content: 'Which is higher?' }],
      bot_id: 'webqa-pro',
      extension_options: { conversation_id: conversation },
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    let third = '';
    for await (const chunk of stream) third += chunk.choices[0]?.delta.content ?? '';
    expect(third).to.include('earlier in this conversation you asked: "And a neap tide?"');

    // Another conversation knows nothing of it.
    const other = await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'And a neap tide?' }] });
    expect(other.body.conversation_id).to.not.equal(conversation);
    expect(other.body.choices[0].message.content).not.to.include('earlier in this conversation');
  });

  it('cancels the Coze chat it gives up on (its timeout, a client that leaves a stream), so the conversation takes the next turn', async () => {
    const turn = (content: string, conversation: string) => ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content }], extension_options: { conversation_id: conversation } });
    const first = await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'What is a spring tide?' }] });
    const conversation = first.body.conversation_id as string;
    // Polled until the channel's timeout (UPSTREAM_TIMEOUT_MS): 502, and the chat cancelled before the answer.
    const timedOut = await turn('Never finish [sim:stall]', conversation);
    expect([timedOut.status, timedOut.body.error.code]).to.deep.equal([502, 'upstream_timeout']);
    // Coze refuses a chat in a conversation where one runs (4016): this one is taken.
    const next = await turn('And a neap tide?', conversation);
    expect(next.status, JSON.stringify(next.body)).to.equal(200);
    expect(next.body.choices[0].message.content, 'the cancelled turn is not in the conversation').to.equal('webqa-pro answers: And a neap tide? (earlier in this conversation you asked: "What is a spring tide?")');

    // Streamed: the client leaves after the first chunk, which names the chat.
    const leaving = new AbortController();
    const res = await fetch(`${gw.url}/v1/agent/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ bot_id: 'webqa-pro', stream: true, messages: [{ role: 'user', content: 'Never finish either [sim:stall]' }], extension_options: { conversation_id: conversation } }),
      signal: leaving.signal,
    });
    const reader = res.body!.getReader();
    let received = '';
    while (!received.includes('\n\n')) received += new TextDecoder().decode((await reader.read()).value);
    const chatId = JSON.parse(received.slice(received.indexOf('data: ') + 6, received.indexOf('\n\n'))).id as string;
    leaving.abort();
    const retrieved = async () => {
      // The client's id is `<provider id>@<channel digest>.<tag>`.
      const query = new URLSearchParams({ conversation_id: conversation.split('.')[0]!.split('@')[0]!, chat_id: chatId });
      const answer = await fetch(`${gw.simulator.url}/coze/v3/chat/retrieve?${query}`, { headers: { authorization: `Bearer ${cozeToken}` } });
      return ((await answer.json()) as { data: { status: string } }).data.status;
    };
    await waitFor('the chat cancelled', async () => (await retrieved()) === 'canceled');
    const after = await turn('Which is higher?', conversation);
    expect(after.body.choices[0].message.content).to.include('earlier in this conversation you asked: "And a neap tide?"');
  });

  it('needs a restricted key to allow the model a request names besides the bot', async () => {
    const botOnly = await gw.fundedAccount(10_000_000, ['webqa-pro']);
    const messages = [{ role: 'user', content: 'hi' }];
    const { result: refused, charge } = await charged(() => ask({ bot_id: 'webqa-pro', model: 'chat-pro', messages }, '/v1/agent/chat/completions', botOnly.key), botOnly.key);
    expect(refused.status).to.equal(400);
    expect(refused.body.error).to.deep.include({ code: 'model_not_allowed', param: 'model' });
    expect(refused.body.error.message).to.include("may not use 'chat-pro'").and.not.include("may not use 'webqa-pro'");
    expect(charge).to.equal(0);
    // The bot itself, named or not, needs only the bot.
    expect((await ask({ bot_id: 'webqa-pro', messages }, '/v1/agent/chat/completions', botOnly.key)).status).to.equal(200);
    expect((await ask({ bot_id: 'webqa-pro', model: 'webqa-pro', messages }, '/v1/agent/chat/completions', botOnly.key)).status).to.equal(200);
    // A model unsupported by the bot is still a 400, whatever the key.
    expect((await ask({ bot_id: 'webqa-pro', model: 'image-5.0', messages }, '/v1/agent/chat/completions', botOnly.key)).body.error.code).to.equal('model_not_supported');

    const both = await gw.fundedAccount(10_000_000, ['webqa-pro', 'chat-pro']);
    const allowed = await ask({ bot_id: 'webqa-pro', model: 'chat-pro', messages }, '/v1/agent/chat/completions', both.key);
    expect(allowed.status).to.equal(200);
    expect(allowed.body.model).to.equal('webqa-pro');
    // The model alone is not enough: the bot is what is billed.
    const modelOnly = await gw.fundedAccount(10_000_000, ['chat-pro']);
    const noBot = await ask({ bot_id: 'webqa-pro', model: 'chat-pro', messages }, '/v1/agent/chat/completions', modelOnly.key);
    expect(noBot.status).to.equal(400);
    expect(noBot.body.error.message).to.include("'webqa-pro'");
  });

  it('continues only conversations of the caller’s account: a made-up, altered or another account’s id is a 400 that reserves nothing', async () => {
    const opened = await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'What is a spring tide?' }] });
    const mine = opened.body.conversation_id as string;
    // The provider's own id, bound to the account by a tag the client cannot make.
    expect(mine).to.match(/^[^.]+\.[A-Za-z0-9_-]{22}$/);
    const other = await gw.fundedAccount(10_000_000);
    const providerId = mine.slice(0, mine.lastIndexOf('.'));
    const altered = `${mine.slice(0, -1)}${mine.endsWith('A') ? 'B' : 'A'}`;
    const attempts = [
      [key, 'conv-42'],
      [key, providerId],
      [key, altered],
      [other.key, mine],
    ] as const;
    for (const [k, conversation_id] of attempts) {
      const { result, charge } = await charged(() =>
        ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'And a neap tide?' }], extension_options: { conversation_id } }, '/v1/agent/chat/completions', k),
        k,
      );
      expect(result.status, conversation_id).to.equal(400);
      expect(result.body.error).to.deep.include({ code: 'conversation_not_found', param: 'extension_options.conversation_id' });
      expect(charge, conversation_id).to.equal(0);
    }
    expect((await gw.api(other.key, 'GET', '/v1/account')).body.balance).to.deep.equal({ available: 10_000_000, frozen: 0, currency: 'CNY' });
    await gw.expectAuditClean();
  });

  it('serves the aliases, continues a conversation, takes a model the bot offers and mixed media on a Pro bot', async () => {
    const opened = await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'hello' }] });
    const conversation = opened.body.conversation_id as string;
    const first = await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'hello' }], extension_options: { conversation_id: conversation, follow_ups: false, cards: false } }, '/v1/agent/chat/completion');
    expect(first.status).to.equal(200);
    expect(first.body).to.deep.include({ conversation_id: conversation, follow_ups: [], cards: [] });
    const second = await ask({ bot_id: 'webqa-pro', model: 'chat-pro', messages: [{ role: 'user', content: 'and more' }] }, '/v1/agents/chat/completions');
    expect(second.status).to.equal(200);
    expect(second.body.model).to.equal('webqa-pro');
    const media = await ask({
      bot_id: 'webqa-pro',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: 'https://img.example.com/tide.png' } }] }],
    });
    expect(media.status).to.equal(200);
    expect(media.body.choices[0].message.content).to.include('with 1 attachment');
  });

  it('refuses Pro-only features on a basic bot with 400 naming the Pro requirement, and answers it plainly otherwise', async () => {
    const { result: refusals, charge } = await charged(async () => [
      await ask({ bot_id: 'webqa-basic', messages: [{ role: 'user', content: 'hi' }], extension_options: { follow_ups: true } }),
      await ask({ bot_id: 'webqa-basic', messages: [{ role: 'user', content: 'hi' }], extension_options: { cards: true } }),
      await ask({ bot_id: 'webqa-basic', messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'file_url', file_url: { url: 'https://x.example.com/a.pdf' } }] }] }),
    ]);
    expect(charge).to.equal(0);
    expect(refusals.map((r) => [r.status, r.body.error.code, r.body.error.param])).to.deep.equal([
      [400, 'pro_bot_required', 'extension_options.follow_ups'],
      [400, 'pro_bot_required', 'extension_options.cards'],
      [400, 'pro_bot_required', 'messages[0].content[1]'],
    ]);
    for (const r of refusals) expect(r.body.error.message).to.match(/needs? a Pro bot; 'webqa-basic' is not one/);

    const messages = [{ role: 'user', content: 'Plain question [sim:tokens=3]' }];
    const { result: plain, charge: plainCharge } = await charged(() => ask({ bot_id: 'webqa-basic', messages }));
    expect(plain.status).to.equal(200);
    expect(plain.body).to.deep.include({ follow_ups: [], cards: [] });
    expect(plain.body.usage).to.deep.include({ prompt_tokens: countMessageTokens(messages), completion_tokens: 3 });
    expect(plainCharge).to.equal(tokenCharge(basic, countMessageTokens(messages), 3));
  });

  it('answers 400, 401, 402 and 502 in the OpenAI shape (the spec\'s list), and charges what a broken stream delivered', async () => {
    const { charge } = await charged(async () => {
      expect((await ask({ messages: [{ role: 'user', content: 'x' }] })).body.error).to.deep.include({ code: 'invalid_request', param: 'bot_id' });
      expect((await ask({ bot_id: 'webqa-pro' })).body.error).to.deep.include({ param: 'messages' });
      expect((await ask({ bot_id: 'nope', messages: [{ role: 'user', content: 'x' }] })).body.error).to.deep.include({ code: 'bot_not_found', param: 'bot_id' });
      expect((await ask({ bot_id: 'chat-fast', messages: [{ role: 'user', content: 'x' }] })).status).to.equal(400);
      expect((await ask({ bot_id: 'webqa-pro', model: 'gpt-x', messages: [{ role: 'user', content: 'x' }] })).body.error).to.deep.include({ code: 'model_not_found', param: 'model' });
      expect((await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: [{ type: 'image_url' }] }] })).status).to.equal(400);
      expect((await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'x' }], extension_options: { colour: 'red' } })).status).to.equal(400);
      const failed = await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'x [sim:fail]' }] });
      expect(failed.status).to.equal(502);
      expect(failed.body.error.type).to.equal('upstream_error');
    });
    expect(charge).to.equal(0);

    const unauthorised = await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'x' }] }, '/v1/agent/chat/completions', null);
    expect(unauthorised.status).to.equal(401);
    expect(unauthorised.body.error).to.include.keys('message', 'type', 'param', 'code');

    const poor = await gw.fundedAccount(10);
    const short = await ask({ bot_id: 'webqa-basic', messages: [{ role: 'user', content: 'x' }] }, '/v1/agent/chat/completions', poor.key);
    expect(short.status).to.equal(402);
    expect(short.body.error.code).to.equal('insufficient_balance');

    const restricted = await gw.fundedAccount(1_000_000, ['webqa-basic']);
    const forbidden = await ask({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'x' }] }, '/v1/agent/chat/completions', restricted.key);
    expect(forbidden.status).to.equal(400);
    expect(forbidden.body.error).to.deep.include({ code: 'model_not_allowed', param: 'model', type: 'invalid_request_error' });
    expect(forbidden.body.error.message).to.include("'webqa-pro'");

    // A stalled stream: the two delivered tokens and the prompt are charged; the stream ends with an error.
    const messages = [{ role: 'user', content: 'Never finish [sim:stall]' }];
    const { result: text, charge: stallCharge } = await charged(async () => {
      const res = await fetch(`${gw.url}/v1/agent/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ bot_id: 'webqa-pro', stream: true, messages }),
      });
      return res.text();
    });
    const frames = text.split('\n\n').filter((f) => f.startsWith('data: {')).map((f) => JSON.parse(f.slice(6)));
    const delivered = frames.flatMap((f) => (f.choices ?? []).map((c: any) => c.delta.content ?? '')).join('');
    expect(countTokens(delivered)).to.equal(2);
    expect(frames[frames.length - 1].error.message).to.include('timed out');
    expect(stallCharge).to.equal(tokenCharge(pro, countMessageTokens(messages), 2));
  });

  it('answers the upstream agent\'s 429 as 502 upstream_rate_limited, plain and streamed, reserving nothing; while its channel cools down, 502 gateway_busy sending nothing', async () => {
    const messages = [{ role: 'user' as const, content: 'busy [sim:status=429]' }];
    const { charge } = await charged(async () => {
      for (const stream of [false, true]) {
        const res = await ask({ bot_id: 'webqa-pro', stream, messages });
        expect(res.status, `stream ${stream}: ${JSON.stringify(res.body)}`).to.equal(502);
        expect(res.body.error).to.deep.include({ code: 'upstream_rate_limited', type: 'upstream_error' });
        // The bot's only channel cools down: a turn that would be answered is not sent, and gets
        // the gateway's own 502 (web Q&A has no 429) with the wait left.
        const busy = await ask({ bot_id: 'webqa-pro', stream, messages: [{ role: 'user', content: 'What is a spring tide?' }] });
        expect(busy.status, `stream ${stream}: ${JSON.stringify(busy.body)}`).to.equal(502);
        expect(busy.body.error).to.deep.include({ code: 'gateway_busy', type: 'upstream_error' });
        expect(Number(busy.headers.get('retry-after'))).to.be.greaterThan(0);
        gw.upstreams.mend('coze');
      }
      const err = await client.chat.completions.create({ model: 'webqa-pro', messages, bot_id: 'webqa-pro' } as OpenAI.ChatCompletionCreateParamsNonStreaming).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(OpenAI.InternalServerError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).to.equal(502);
      gw.upstreams.mend('coze');
    });
    expect(charge).to.equal(0);
  });

  it('takes stream_options as chat does: include_usage puts usage: null on every chunk before the last', async () => {
    const messages = [{ role: 'user' as const, content: 'Tides? [sim:tokens=3]' }];
    const stream = await client.chat.completions.create({
      model: 'webqa-pro',
      messages,
      stream: true,
      stream_options: { include_usage: true },
      bot_id: 'webqa-pro',
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    const chunks: Record<string, any>[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).to.deep.equal([]);
    expect(last.usage.prompt_tokens).to.equal(countMessageTokens(messages));
    expect(chunks.slice(0, -1).every((c) => 'usage' in c && c.usage === null), 'usage: null before the last chunk').to.equal(true);
    const refused = await ask({ bot_id: 'webqa-pro', stream: true, stream_options: { include_usage: 'yes' }, messages });
    expect(refused.body.error).to.deep.include({ param: 'stream_options.include_usage' });
  });
});

describe('web Q&A over a key\'s request rate @integration', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '2', WEBQA_RATE_WAIT_MS: '2000' });
  });
  after(async () => gw.close());

  it('answers 502 gateway_busy (never 429) when no turn comes within the bounded wait, reserving nothing', async () => {
    const { key } = await gw.fundedAccount(10_000_000);
    const ask = () => gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-basic', messages: [{ role: 'user', content: 'hi [sim:tokens=1]' }] });
    expect((await ask()).status).to.equal(200);
    expect((await ask()).status).to.equal(200);
    const before = (await gw.api(key, 'GET', '/v1/account')).body.balance;
    // At 2 a minute the next turn is 30 s away, beyond the 2 s wait: refused at once.
    const busy = await ask();
    expect(busy.status, JSON.stringify(busy.body)).to.equal(502);
    expect(busy.body.error).to.deep.include({ code: 'gateway_busy', type: 'upstream_error' });
    expect(Number(busy.headers.get('retry-after'))).to.be.greaterThan(0);
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance).to.deep.equal(before);
    await gw.expectAuditClean();
  });

  it("answers 502 gateway_busy (never 429) over the key's tokens per minute too, reserving nothing", async () => {
    const { accountId } = await gw.fundedAccount(10_000_000);
    // 100 tokens a minute: a turn counts its prompt and the bot's output limit (more than 100: the
    // whole minute), then gives back what it did not use; the next is ~4 s of refill away, beyond the wait.
    const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { tokens_per_minute: 100 });
    expect(issued.status).to.equal(201);
    expect(issued.body.tokens_per_minute).to.equal(100);
    const key = issued.body.key as string;
    const ask = () => gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-basic', messages: [{ role: 'user', content: 'hi [sim:tokens=1]' }] });
    expect((await ask()).status).to.equal(200);
    const before = (await gw.api(key, 'GET', '/v1/account')).body.balance;
    const busy = await ask();
    expect(busy.status, JSON.stringify(busy.body)).to.equal(502);
    expect(busy.body.error).to.deep.include({ code: 'gateway_busy', type: 'upstream_error' });
    expect(busy.body.error.message).to.contain('tokens-per-minute limit of 100');
    expect(Number(busy.headers.get('retry-after'))).to.be.greaterThan(0);
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance).to.deep.equal(before);
    await gw.expectAuditClean();
  });
});
