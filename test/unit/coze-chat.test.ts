import { expect } from 'chai';
import type { BotChatAsk, BotChatEvent } from '../../src/upstreams/bot-chat';
import { cardOf, cozeBotChat, cozeChatRequest, readCozeEvents } from '../../src/upstreams/coze/chat';
import { cozeErrorOf } from '../../src/upstreams/coze/errors';
import type { SseEvent } from '../../src/upstreams/sse';
import type { WireAnswer, WireEventTransport, WireRequest, WireTransport } from '../../src/upstreams/wire';
import { thrown, upstreamErrorOf, wireAnswer } from '../support/wire-answer';

/**
 * The Coze v3 chat adapter against the reference's own examples, used as fixtures:
 * https://www.coze.cn/open/docs/developer_guides/chat_v3 (the streamed "基础问答" answer and the
 * stream overview's card, suggestion and failure events), retrieve_chat and list_chat_messages
 * (their answer examples), coze_error_codes (the codes).
 */

const ask: BotChatAsk = {
  bot: '734829333445931',
  catalogModel: 'webqa-pro',
  user: 'acct_1/u-9',
  conversationId: '7374752000116113452',
  messages: [
    { role: 'system', content: 'Answer from the web.' },
    { role: 'assistant', content: 'Earlier answer.' },
    { role: 'user', content: [{ type: 'text', text: '帮我看看这张图片里都有什么' }, { type: 'image', url: 'https://example.com/a.png' }] },
  ],
  maxOutputTokens: 2048,
  cards: false,
};

const event = (name: string, data: unknown): SseEvent => ({ event: name, data: typeof data === 'string' ? data : JSON.stringify(data) });

async function collect(events: SseEvent[]): Promise<BotChatEvent[]> {
  const out: BotChatEvent[] = [];
  for await (const e of readCozeEvents((async function* () { yield* events; })(), 'coze')) out.push(e);
  return out;
}

/** The reference's streamed "基础问答" example, its ids as published. */
const BASIC_STREAM: SseEvent[] = [
  event('conversation.chat.created', { id: '7382159487131697202', conversation_id: '7381473525342978089', bot_id: '7379462189365198898', completed_at: 1718792949, last_error: { code: 0, msg: '' }, status: 'created', usage: { token_count: 0, output_count: 0, input_count: 0 } }),
  event('conversation.chat.in_progress', { id: '7382159487131697202', conversation_id: '7381473525342978089', status: 'in_progress' }),
  event('conversation.message.delta', { id: '7382159494123470858', role: 'assistant', type: 'answer', content: '2', content_type: 'text', chat_id: '7382159487131697202' }),
  event('conversation.message.delta', { id: '7382159494123470858', role: 'assistant', type: 'answer', content: '星期三', content_type: 'text', chat_id: '7382159487131697202' }),
  event('conversation.message.completed', { id: '7382159494123470858', role: 'assistant', type: 'answer', content: '2星期三', content_type: 'text', chat_id: '7382159487131697202' }),
  event('conversation.message.completed', { id: '7382159494123552778', role: 'assistant', type: 'verbose', content: '{"msg_type":"generate_answer_finish","data":"","from_module":null,"from_unit":null}', content_type: 'text' }),
  event('conversation.chat.completed', { id: '7382159487131697202', conversation_id: '7381473525342978089', status: 'completed', usage: { token_count: 633, output_count: 19, input_count: 614 } }),
  event('done', '"[DONE]"'),
];

describe('Coze v3 chat adapter', () => {
  it('asks as the reference takes it: conversation in the query, user and assistant messages only, parts as one object_string', () => {
    const request = cozeChatRequest(ask, '7374752000116113452', true);
    expect([request.method, request.path, request.query]).to.deep.equal(['POST', '/v3/chat', { conversation_id: '7374752000116113452' }]);
    expect(request.body).to.deep.equal({
      bot_id: '734829333445931',
      user_id: 'acct_1/u-9',
      stream: true,
      auto_save_history: true,
      additional_messages: [
        { role: 'assistant', type: 'answer', content: 'Earlier answer.', content_type: 'text' },
        { role: 'user', content: JSON.stringify([{ type: 'text', text: '帮我看看这张图片里都有什么' }, { type: 'image', file_url: 'https://example.com/a.png' }]), content_type: 'object_string' },
      ],
    });
    expect((cozeChatRequest({ ...ask, cards: true }, 'c', false).body as Record<string, unknown>)['enable_card']).to.equal(true);
  });

  it("reads the reference's streamed answer: started, the deltas once (not again whole), completed with Coze's usage", async () => {
    expect(await collect(BASIC_STREAM)).to.deep.equal([
      { type: 'started', chatId: '7382159487131697202', conversationId: '7381473525342978089' },
      { type: 'text', text: '2' },
      { type: 'text', text: '星期三' },
      { type: 'completed', usage: { inputTokens: 614, outputTokens: 19 } },
    ]);
  });

  it('reads an answer sent whole, cards (an answer or a tool output of content type card) and follow-up suggestions', async () => {
    const events = await collect([
      BASIC_STREAM[0]!,
      event('conversation.message.completed', { id: 'msg_003', role: 'assistant', type: 'tool_output', content: '{"title":"t","url":"https://a.example"}', content_type: 'card' }),
      event('conversation.message.completed', { id: 'msg_004', role: 'assistant', type: 'answer', content: '{{card_json}}', content_type: 'card' }),
      event('conversation.message.completed', { id: 'msg_005', role: 'assistant', type: 'answer', content: '以下是', content_type: 'text' }),
      event('conversation.message.completed', { id: 'msg_008', role: 'assistant', type: 'follow_up', content: '朗尼克的报价是否会成功？', content_type: 'text' }),
      event('conversation.message.completed', { id: 'msg_001', role: 'assistant', type: 'knowledge', content: '---\nrecall slice 1', content_type: 'text' }),
      BASIC_STREAM[6]!,
    ]);
    expect(events.slice(1, -1)).to.deep.equal([
      { type: 'card', card: { title: 't', url: 'https://a.example' } },
      { type: 'card', card: { type: 'text', content: '{{card_json}}' } },
      { type: 'text', text: '以下是' },
      { type: 'follow_up', text: '朗尼克的报价是否会成功？' },
    ]);
  });

  it("throws a failed chat (the reference's flat {code, msg}, or the chat's last_error), an error event, and a credential refusal without Coze's words", async () => {
    const flat = await upstreamErrorOf(() => collect([BASIC_STREAM[0]!, event('conversation.chat.failed', { code: 701231, msg: 'error' })]));
    expect([flat.status, flat.code, flat.message]).to.deep.equal([502, '701231', 'error']);
    const chat = await upstreamErrorOf(() => collect([event('conversation.chat.failed', { id: '1', conversation_id: '2', status: 'failed', last_error: { code: 4010, msg: 'prompt too long' } })]));
    expect([chat.status, chat.code]).to.deep.equal([502, '4010']);
    const auth = await upstreamErrorOf(() => collect([event('error', { code: 4100, msg: 'token pat_abc is invalid' })]));
    expect([auth.status, auth.code]).to.deep.equal([401, 'upstream_auth_failed']);
    expect(auth.message).not.to.include('pat_abc');
  });

  it("keeps a card's link members only as http(s) URLs, at any depth (a client opens them); the rest as Coze sent it", () => {
    const card = {
      title: 'Note: tides',
      url: 'javascript:alert(1)',
      image_url: 'https://img.example.com/a.png',
      body: [{ text: 'see', href: 'data:text/html,<script>x</script>', jumpUrl: 'http://docs.example.com/t' }, { src: 'file:///etc/passwd', alt: 'x' }],
      links: ['javascript:alert(2)', 'https://docs.example.com/u', { url: 'vbscript:x', title: 'y' }],
    };
    expect(cardOf(JSON.stringify(card))).to.deep.equal({
      title: 'Note: tides',
      image_url: 'https://img.example.com/a.png',
      body: [{ text: 'see', jumpUrl: 'http://docs.example.com/t' }, { alt: 'x' }],
      links: ['https://docs.example.com/u', { title: 'y' }],
    });
  });

  it("maps Coze's codes: credentials, rate limits, the operator's bot or account, the client's request", () => {
    const of = (code: number, status = 200) => thrown(() => { throw cozeErrorOf(wireAnswer(status, { code, msg: `m${code}` }), 'coze'); });
    expect([4100, 4101].map((c) => [of(c).status, of(c).code])).to.deep.equal([[401, 'upstream_auth_failed'], [403, 'upstream_auth_failed']]);
    expect([4008, 4009, 4020].map((c) => of(c).status)).to.deep.equal([429, 429, 429]);
    expect([4006, 4011, 4013, 4015, 5000].map((c) => of(c).status)).to.deep.equal([502, 502, 502, 502, 502]);
    expect([4000, 4002, 4016].map((c) => [of(c).status, of(c).code, of(c).message])).to.deep.equal([[400, '4000', 'm4000'], [400, '4002', 'm4002'], [400, '4016', 'm4016']]);
    expect(thrown(() => { throw cozeErrorOf(wireAnswer(503, 'busy'), 'coze'); }).status, 'an answer without a code, by its status').to.equal(502);
  });

  /** A transport answering each request with the next of `answers`, recording the requests. */
  function scripted(answers: WireAnswer[]): WireTransport & { readonly sent: WireRequest[] } {
    const sent: WireRequest[] = [];
    return { name: 'coze', sent, call: async (request) => (sent.push(request), answers.shift() ?? wireAnswer(500, { code: 5000, msg: 'no more answers' })) };
  }

  const chatData = (status: string, extra: Record<string, unknown> = {}) => wireAnswer(200, { code: 0, msg: '', data: { id: '738137187639794', conversation_id: '738136585609548', bot_id: '737946218936519', status, ...extra } });

  it('runs a non-streamed turn: a new conversation, the chat in_progress, polled with backing-off waits, then its messages', async () => {
    const slept: number[] = [];
    const transport = scripted([
      wireAnswer(200, { code: 0, msg: '', data: { id: '738136585609548', created_at: 1718289297 } }),
      chatData('in_progress'),
      chatData('in_progress'),
      chatData('completed', { usage: { input_count: 242, output_count: 56, token_count: 298 } }),
      wireAnswer(200, {
        code: 0,
        data: [
          { id: '1', type: 'verbose', content: '{"msg_type":"generate_answer_finish","data":"","from_module":null,"from_unit":null}', content_type: 'text' },
          { id: '2', type: 'answer', content: '2024 年 10 月 1 日是星期二。', content_type: 'text' },
          { id: '3', type: 'follow_up', content: '还有什么节日？', content_type: 'text' },
        ],
        msg: '',
      }),
    ]);
    const result = await cozeBotChat.chat(transport, { ...ask, conversationId: null }, { waitMs: 60_000, sleep: async (ms) => void slept.push(ms) });
    expect(transport.sent.map((r) => `${r.method} ${r.path} ${JSON.stringify(r.query ?? {})}`)).to.deep.equal([
      'POST /v1/conversation/create {}',
      'POST /v3/chat {"conversation_id":"738136585609548"}',
      'GET /v3/chat/retrieve {"conversation_id":"738136585609548","chat_id":"738137187639794"}',
      'GET /v3/chat/retrieve {"conversation_id":"738136585609548","chat_id":"738137187639794"}',
      'GET /v3/chat/message/list {"conversation_id":"738136585609548","chat_id":"738137187639794"}',
    ]);
    expect(transport.sent[0]!.body).to.deep.equal({ bot_id: '734829333445931' });
    expect((transport.sent[1]!.body as Record<string, unknown>)['stream']).to.equal(false);
    expect(slept).to.deep.equal([100, 200]);
    expect(result).to.deep.equal({
      chatId: '738137187639794',
      conversationId: '738136585609548',
      answer: '2024 年 10 月 1 日是星期二。',
      followUps: ['还有什么节日？'],
      cards: [],
      usage: { inputTokens: 242, outputTokens: 56 },
    });
  });

  it('gives up on a chat still running after waitMs, and reads a failed or interrupted chat as its failure', async () => {
    const slept: number[] = [];
    const running = scripted(Array.from({ length: 10 }, () => chatData('in_progress')));
    const timeout = await upstreamErrorOf(() => cozeBotChat.chat(running, ask, { waitMs: 1000, sleep: async (ms) => void slept.push(ms) }));
    expect([timeout.code, timeout.kind]).to.deep.equal(['upstream_timeout', 'timeout']);
    expect(slept).to.deep.equal([100, 200, 400]);

    const failed = await upstreamErrorOf(() => cozeBotChat.chat(scripted([chatData('failed', { last_error: { code: 4013, msg: 'model error' } })]), ask, { waitMs: 1000 }));
    expect([failed.status, failed.code, failed.message]).to.deep.equal([502, '4013', 'model error']);
    const action = await upstreamErrorOf(() => cozeBotChat.chat(scripted([chatData('requires_action')]), ask, { waitMs: 1000 }));
    expect(action.code).to.equal('upstream_requires_action');
    const refused = await upstreamErrorOf(() => cozeBotChat.chat(scripted([wireAnswer(200, { code: 4016, msg: 'a chat is running' })]), ask, { waitMs: 1000 }));
    expect([refused.status, refused.code]).to.deep.equal([400, '4016']);
  });
  const CANCEL = 'POST /v3/chat/cancel {"conversation_id":"738136585609548","chat_id":"738137187639794"}';
  const calls = (transport: { readonly sent: WireRequest[] }) => transport.sent.map((r) => `${r.method} ${r.path} ${JSON.stringify(r.body ?? r.query ?? {})}`);

  it('cancels a chat it stops polling, best effort: after its timeout, and when the client leaves (the cancel without the aborted signal)', async () => {
    const running = scripted([chatData('in_progress'), ...Array.from({ length: 5 }, () => chatData('in_progress'))]);
    const timeout = await upstreamErrorOf(() => cozeBotChat.chat(running, ask, { waitMs: 1000, sleep: async () => undefined }));
    expect(timeout.code).to.equal('upstream_timeout');
    expect(calls(running).at(-1)).to.equal(CANCEL);
    expect(running.sent.at(-1)!.model, 'the bot, for the metrics').to.equal('webqa-pro');

    const left = new AbortController();
    const signals: (AbortSignal | undefined)[] = [];
    const answers = [chatData('in_progress'), chatData('in_progress'), chatData('canceled')];
    const transport: WireTransport & { sent: WireRequest[] } = { name: 'coze', sent: [], call: async (request, signal) => (transport.sent.push(request), signals.push(signal), answers.shift()!) };
    const sleep = async (_ms: number, signal?: AbortSignal) => {
      left.abort();
      signal?.throwIfAborted();
    };
    const aborted = await cozeBotChat.chat(transport, ask, { waitMs: 60_000, signal: left.signal, sleep }).then(() => null, (e: unknown) => e);
    expect((aborted as Error).name).to.equal('AbortError');
    expect(calls(transport)[0]).to.match(/^POST \/v3\/chat \{/);
    expect(calls(transport).slice(1), 'the chat cancelled, not polled again').to.deep.equal([CANCEL]);
    expect(signals[1], 'not the aborted signal').to.equal(undefined);

    // A cancel Coze refuses (the chat ended meanwhile) or that fails changes nothing: the turn's own error stands.
    const refusing = scripted([chatData('in_progress'), chatData('in_progress'), wireAnswer(200, { code: 4000, msg: 'a completed chat cannot be canceled' })]);
    const still = await upstreamErrorOf(() => cozeBotChat.chat(refusing, ask, { waitMs: 150, sleep: async () => undefined }));
    expect([still.code, calls(refusing).at(-1)]).to.deep.equal(['upstream_timeout', CANCEL]);
  });

  /** An event transport whose chat stream sends `events`, then ends (or throws `end`), recording the calls. */
  function streaming(events: SseEvent[], end?: Error): WireEventTransport & { readonly sent: WireRequest[] } {
    const sent: WireRequest[] = [];
    return {
      name: 'coze',
      sent,
      call: async (request) => (sent.push(request), wireAnswer(200, { code: 0, msg: '', data: {} })),
      openEvents: async (request) => {
        sent.push(request);
        return {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          events: async function* () {
            yield* events;
            if (end) throw end;
          },
          whole: async () => wireAnswer(200, ''),
        };
      },
    };
  }

  it('cancels a streamed chat left before Coze completed it (the client gone, the stream broken off), and only then', async () => {
    const created = BASIC_STREAM.slice(0, 3);
    const cancelOf = '{"conversation_id":"7381473525342978089","chat_id":"7382159487131697202"}';

    const gone = streaming(BASIC_STREAM);
    for await (const e of await cozeBotChat.stream(gone, ask)) if (e.type === 'text') break;
    expect(calls(gone).slice(1)).to.deep.equal([`POST /v3/chat/cancel ${cancelOf}`]);

    const broken = streaming(created, Object.assign(new Error('the channel timed out'), { name: 'UpstreamError' }));
    const read = await cozeBotChat.stream(broken, ask);
    const failure = await (async () => {
      for await (const _ of read) void _;
    })().then(() => null, (e: unknown) => e);
    expect((failure as Error).message).to.equal('the channel timed out');
    expect(calls(broken).slice(1)).to.deep.equal([`POST /v3/chat/cancel ${cancelOf}`]);

    const whole = streaming(BASIC_STREAM);
    for await (const _ of await cozeBotChat.stream(whole, ask)) void _;
    expect(calls(whole), 'completed: nothing to cancel').to.have.length(1);
    const beforeStart = streaming([], new Error('cut'));
    await (async () => {
      for await (const _ of await cozeBotChat.stream(beforeStart, ask)) void _;
    })().catch(() => undefined);
    expect(calls(beforeStart), 'no chat id yet: nothing to cancel').to.have.length(1);
  });
});
