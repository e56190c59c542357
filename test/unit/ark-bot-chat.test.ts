import { expect } from 'chai';
import { arkBotChat, arkBotChatRequest, readArkBotChat, readArkBotEvents } from '../../src/upstreams/ark/bot-chat';
import type { BotChatAsk, BotChatEvent } from '../../src/upstreams/bot-chat';
import type { SseEvent } from '../../src/upstreams/sse';
import { thrown, upstreamErrorOf, wireAnswer } from '../support/wire-answer';

/**
 * Ark's bots API adapter. Fixtures: the request of https://www.volcengine.com/docs/82379/1285207
 * (a bot id as `model`), and answers in the shape the official Python SDK types
 * (`volcenginesdkarkruntime/types/bot_chat`: OpenAI's completion and chunk plus `references`,
 * `bot_usage {model_usage, action_usage}`, `metadata`).
 */

const ask: BotChatAsk = {
  bot: 'bot-20240604000000-abcde',
  catalogModel: 'webqa-ark',
  user: 'acct_1',
  conversationId: null,
  messages: [
    { role: 'system', content: 'Answer from the web.' },
    { role: 'user', content: [{ type: 'text', text: '图片主要讲了什么?' }, { type: 'image', url: 'https://ark-project.tos-cn-beijing.volces.com/doc_image/ark_demo_img_1.png' }] },
  ],
  maxOutputTokens: 8192,
  cards: true,
};

const COMPLETION = {
  id: '021718067849899d92fcbe0865fdffdde8ac62e84dbc3bb0d1e8d',
  object: 'chat.completion',
  created: 1718067850,
  model: 'bot-20240604000000-abcde',
  choices: [{ index: 0, message: { role: 'assistant', content: '今天北京晴。' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 999, completion_tokens: 999, total_tokens: 1998 },
  references: [
    { url: 'https://weather.example.com/beijing', logo_url: 'https://weather.example.com/logo.png', site_name: '天气网', title: '北京天气', summary: '晴，25℃', publish_time: '2024-06-11' },
    { doc_id: 'doc-1', doc_name: 'faq.pdf', chunk_id: '3', chunk_title: 'FAQ' },
  ],
  bot_usage: {
    model_usage: [
      { name: 'doubao-pro-32k', prompt_tokens: 120, completion_tokens: 10, total_tokens: 130 },
      { name: 'doubao-lite-4k', prompt_tokens: 30, completion_tokens: 5, total_tokens: 35 },
    ],
    action_usage: [{ name: 'content_plugin', search_count: 1 }],
  },
  metadata: {},
};

describe("Ark's bots API adapter", () => {
  it('asks with the bot id as model, OpenAI messages (images as image_url), max_tokens the bot\'s output limit as it is, usage asked of a stream', () => {
    const plain = arkBotChatRequest(ask, false);
    expect([plain.method, plain.path]).to.deep.equal(['POST', '/bots/chat/completions']);
    expect(plain.body).to.deep.equal({
      model: 'bot-20240604000000-abcde',
      messages: [
        { role: 'system', content: 'Answer from the web.' },
        { role: 'user', content: [{ type: 'text', text: '图片主要讲了什么?' }, { type: 'image_url', image_url: { url: 'https://ark-project.tos-cn-beijing.volces.com/doc_image/ark_demo_img_1.png' } }] },
      ],
      stream: false,
      // Above the reference's default of 4096: the range is the model's, not capped by the gateway.
      max_tokens: 8192,
    });
    expect((arkBotChatRequest({ ...ask, maxOutputTokens: 1024 }, true).body as Record<string, unknown>)).to.deep.include({ stream: true, stream_options: { include_usage: true }, max_tokens: 1024 });
    expect(() => arkBotChatRequest({ ...ask, messages: [{ role: 'user', content: [{ type: 'file', url: 'https://x.example/a.pdf' }] }] }, false)).to.throw(/images, not file/);
  });

  it('reads an answer: the text, web references as link cards (knowledge chunks without a URL left out), usage summed over the models the bot called', () => {
    expect(readArkBotChat(wireAnswer(200, COMPLETION), 'ark-bots')).to.deep.equal({
      chatId: COMPLETION.id,
      conversationId: null,
      answer: '今天北京晴。',
      followUps: [],
      cards: [{ type: 'link', title: '北京天气', url: 'https://weather.example.com/beijing', description: '晴，25℃', site_name: '天气网', publish_time: '2024-06-11' }],
      usage: { inputTokens: 150, outputTokens: 15 },
    });
    const { bot_usage: _omitted, ...openaiOnly } = COMPLETION;
    expect(readArkBotChat(wireAnswer(200, openaiOnly), 'ark-bots').usage, "OpenAI's usage without bot_usage").to.deep.equal({ inputTokens: 999, outputTokens: 999 });
    const unreadable = { ...COMPLETION, bot_usage: { model_usage: [COMPLETION.bot_usage.model_usage[0], { name: 'doubao-lite-4k', total_tokens: 35 }] } };
    expect(readArkBotChat(wireAnswer(200, unreadable), 'ark-bots').usage, 'an unreadable breakdown: usage, with a warning to log').to.deep.equal({
      inputTokens: 999,
      outputTokens: 999,
      warning: 'bot_usage.model_usage entries 1 have no token counts: read from usage instead',
    });
    const { usage: _usage, ...unreadableOnly } = unreadable;
    expect(readArkBotChat(wireAnswer(200, unreadableOnly), 'ark-bots').usage, 'nothing readable: the gateway counts').to.equal(null);
    // A client opens a card's link: references whose url is not http(s) make no card.
    const schemes = { ...COMPLETION, references: ['javascript:alert(1)', 'data:text/html,x', 'ftp://files.example.com/a', 'HTTP://Weather.example.com/b'].map((url) => ({ url, title: url })) };
    expect(readArkBotChat(wireAnswer(200, schemes), 'ark-bots').cards.map((c) => c['url'])).to.deep.equal(['HTTP://Weather.example.com/b']);
    const refused = thrown(() => readArkBotChat(wireAnswer(404, { error: { code: 'InvalidEndpointOrModel.NotFound', message: 'no such bot', param: '', type: 'NotFound' } }), 'ark-bots'));
    expect([refused.status, refused.code]).to.deep.equal([404, 'InvalidEndpointOrModel.NotFound']);
  });

  const chunks = (...items: unknown[]): AsyncIterable<SseEvent> => (async function* () {
    for (const item of items) yield { event: null, data: typeof item === 'string' ? item : JSON.stringify(item) };
  })();

  async function collect(events: AsyncIterable<SseEvent>): Promise<BotChatEvent[]> {
    const out: BotChatEvent[] = [];
    for await (const e of readArkBotEvents(events, 'ark-bots')) out.push(e);
    return out;
  }

  it('reads a stream: started, the references once, the deltas, the last chunk\'s usage, completed at [DONE]', async () => {
    const base = { id: 'chunk-id-1', object: 'chat.completion.chunk', created: 1, model: ask.bot };
    const events = await collect(
      chunks(
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' } }], references: COMPLETION.references },
        { ...base, choices: [{ index: 0, delta: { content: '今天' } }], references: COMPLETION.references },
        { ...base, choices: [{ index: 0, delta: { content: '北京晴。' }, finish_reason: 'stop' }] },
        { ...base, choices: [], usage: { prompt_tokens: 150, completion_tokens: 15, total_tokens: 165 }, bot_usage: COMPLETION.bot_usage },
        '[DONE]',
      ),
    );
    expect(events.map((e) => e.type)).to.deep.equal(['started', 'card', 'text', 'text', 'completed']);
    expect(events[0]).to.deep.equal({ type: 'started', chatId: 'chunk-id-1', conversationId: null });
    expect(events.at(-1)).to.deep.equal({ type: 'completed', usage: { inputTokens: 150, outputTokens: 15 } });
    const broken = await collect(chunks({ ...base, choices: [{ index: 0, delta: { content: 'x' } }] }));
    expect(broken.map((e) => e.type), 'no [DONE]: never completed').to.deep.equal(['started', 'text']);
    const failed = await upstreamErrorOf(() => collect(chunks({ error: { code: 'InternalServiceError', message: 'bot failed' } })));
    expect([failed.status, failed.code]).to.deep.equal([502, 'InternalServiceError']);
    expect(arkBotChat.keepsConversations).to.equal(false);
  });
});
