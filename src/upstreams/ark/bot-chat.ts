/**
 * A web Q&A turn on a Volcengine Ark bot (方舟应用), through Ark's bots API: OpenAI's chat
 * completions at `POST {base}/bots/chat/completions`, the bot id (`bot-…`) as `model`.
 *
 * References: https://www.volcengine.com/docs/82379/1285207 (应用(Bot) API: `model` the bot id,
 * `messages`, `stream`, `stream_options`, `max_tokens`: 4096 when absent, its range the model's);
 * the answer and its chunks as
 * the official Python SDK types them (volcengine-python-sdk, `volcenginesdkarkruntime/types/bot_chat`:
 * OpenAI's completion plus `references` [{url, title, summary, site_name, publish_time, cover_image,
 * logo_url, doc_id, doc_name, …}], `bot_usage {model_usage: [{name, prompt_tokens,
 * completion_tokens, total_tokens}], action_usage: [{name, search_count}]}` and `metadata`).
 * Errors are Ark's (the `ark` protocol's errorOf). Ark's bots keep no conversation: the gateway
 * sends a conversation's earlier turns with each one (keepsConversations false).
 */
import type { BotChatAdapter, BotChatAsk, BotChatEvent, BotChatMessage, BotChatUsage } from '../bot-chat';
import { clientLink, isTokenCount, protocolError, recordOf } from '../answer-fields';
import { streamedError } from '../openai/errors';
import type { SseEvent } from '../sse';
import type { WireAnswer, WireRequest } from '../wire';
import { arkProtocol } from './protocol';

/** A message in OpenAI's form: text, or parts (`text`, `image_url`: the only media Ark's bots take). */
function openaiMessage(message: BotChatMessage): Record<string, unknown> {
  if (typeof message.content === 'string') return { role: message.role, content: message.content };
  return {
    role: message.role,
    content: message.content.map((part) => {
      if (part.type === 'text') return { type: 'text', text: part.text };
      if (part.type === 'image') return { type: 'image_url', image_url: { url: part.url } };
      throw new Error(`Ark's bots take images, not ${part.type} parts`);
    }),
  };
}

/**
 * `POST /bots/chat/completions`. `max_tokens` is the bot's output limit, what the gateway reserved
 * for, as it is (its range is the model's, which the operator chose: an Ark refusal is theirs to
 * mend); it bounds each model call, so a bot that calls several models may report more in sum
 * (docs/providers.md). A stream asks `include_usage`, for its last chunk's usage.
 */
export function arkBotChatRequest(ask: BotChatAsk, stream: boolean): WireRequest {
  return {
    method: 'POST',
    path: '/bots/chat/completions',
    model: ask.catalogModel,
    body: {
      model: ask.bot,
      messages: ask.messages.map(openaiMessage),
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
      max_tokens: ask.maxOutputTokens,
    },
  };
}

/**
 * The tokens a turn used: the sum of `bot_usage.model_usage` (each model the bot called) when Ark
 * reports it, else OpenAI's `usage`; null when neither is readable. A breakdown with an entry it
 * cannot read falls back to `usage`, with a warning the feature logs (its sum may differ).
 */
export function arkBotUsage(body: Readonly<Record<string, unknown>>): BotChatUsage | null {
  const perModel = recordOf(body['bot_usage'])['model_usage'];
  if (!Array.isArray(perModel) || perModel.length === 0) return tokensOf(body['usage']);
  const read = perModel.map((u) => tokensOf(u));
  if (read.every((u): u is BotChatUsage => u !== null)) return read.reduce((a, b) => ({ inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens }));
  const usage = tokensOf(body['usage']);
  const unread = read.flatMap((u, i) => (u === null ? [i] : []));
  const warning = `bot_usage.model_usage entries ${unread.join(', ')} have no token counts: ${usage ? 'read from usage instead' : 'and usage has none either'}`;
  return usage ? { ...usage, warning } : null;
}

function tokensOf(value: unknown): BotChatUsage | null {
  const usage = recordOf(value);
  const input = usage['prompt_tokens'];
  const output = usage['completion_tokens'];
  return isTokenCount(input) && isTokenCount(output) ? { inputTokens: input, outputTokens: output } : null;
}

/**
 * A reference the bot's web search or knowledge base answered from, as a card: a page
 * (`url`, http or https) is a `link` card with its title, summary and site; a reference without
 * such a URL (a knowledge-base chunk) is not shown.
 */
export function referenceCard(value: unknown): Readonly<Record<string, unknown>> | null {
  const reference = recordOf(value);
  // A client opens the link: an http(s) one only (no `javascript:` or `data:`).
  const url = clientLink(reference['url']);
  if (url === null) return null;
  const text = (key: string): string | null => (typeof reference[key] === 'string' && reference[key] !== '' ? (reference[key] as string) : null);
  const [summary, site, published] = [text('summary'), text('site_name'), text('publish_time')];
  return {
    type: 'link',
    title: text('title') ?? url,
    url,
    ...(summary === null ? {} : { description: summary }),
    ...(site === null ? {} : { site_name: site }),
    ...(published === null ? {} : { publish_time: published }),
  };
}

function cardsOf(references: unknown): Readonly<Record<string, unknown>>[] {
  if (!Array.isArray(references)) return [];
  return references.flatMap((r: unknown): Readonly<Record<string, unknown>>[] => {
    const card = referenceCard(r);
    return card === null ? [] : [card];
  });
}

/** The answer to a non-streamed turn. */
export function readArkBotChat(answer: WireAnswer, channel: string): Awaited<ReturnType<BotChatAdapter['chat']>> {
  if (answer.status >= 400) throw arkProtocol.errorOf(answer, channel);
  const body = recordOf(answer.json());
  const id = body['id'];
  if (typeof id !== 'string' || id === '') throw protocolError(channel, 'a completion without an id');
  const message = recordOf(recordOf((Array.isArray(body['choices']) ? body['choices'] : [])[0])['message']);
  const content = message['content'];
  return {
    chatId: id,
    conversationId: null,
    answer: typeof content === 'string' ? content : '',
    followUps: [],
    cards: cardsOf(body['references']),
    usage: arkBotUsage(body),
  };
}

/**
 * Ark's chunks as the gateway's events: the first chunk starts the turn, each `delta.content` is
 * text, `references` (on whichever chunk carries them) become cards, each once by URL, the usage
 * chunk's usage is kept, and `[DONE]` completes the turn. An `error` item is the provider's failure.
 */
export async function* readArkBotEvents(events: AsyncIterable<SseEvent>, channel: string): AsyncGenerator<BotChatEvent> {
  let started = false;
  let usage: BotChatUsage | null = null;
  const seen = new Set<string>();
  for await (const event of events) {
    if (event.data === '[DONE]') {
      yield { type: 'completed', usage };
      return;
    }
    let chunk: Readonly<Record<string, unknown>>;
    try {
      chunk = recordOf(JSON.parse(event.data));
    } catch {
      throw protocolError(channel, 'a chunk that is not JSON');
    }
    if (chunk['error'] !== undefined) throw streamedError(chunk['error'], channel);
    if (!started) {
      started = true;
      yield { type: 'started', chatId: typeof chunk['id'] === 'string' ? chunk['id'] : '', conversationId: null };
    }
    for (const card of cardsOf(chunk['references'])) {
      if (seen.has(card['url'] as string)) continue;
      seen.add(card['url'] as string);
      yield { type: 'card', card };
    }
    const choices = Array.isArray(chunk['choices']) ? chunk['choices'] : [];
    const text = recordOf(recordOf(choices[0])['delta'])['content'];
    if (typeof text === 'string' && text !== '') yield { type: 'text', text };
    usage = arkBotUsage(chunk) ?? usage;
  }
}

/** Ark's bots as the web Q&A feature runs them, through a channel of the `ark` protocol. */
export const arkBotChat: BotChatAdapter = {
  keepsConversations: false,
  media: ['image'],
  chat: async (transport, ask, options) => readArkBotChat(await transport.call(arkBotChatRequest(ask, false), options.signal), transport.name),
  stream: async (transport, ask, signal) => {
    const opened = await transport.openEvents(arkBotChatRequest(ask, true), signal);
    if (opened.status >= 400) throw arkProtocol.errorOf(await opened.whole(), transport.name);
    return readArkBotEvents(opened.events(), transport.name);
  },
};
