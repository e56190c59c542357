/**
 * A web Q&A turn on a Coze bot, through Coze's v3 chat.
 *
 * References (read against the official Node SDK, `@coze/api` 1.3.9, `resources/chat`):
 * - chat: https://www.coze.cn/open/docs/developer_guides/chat_v3 (`POST /v3/chat?conversation_id=…`,
 *   body `bot_id`, `user_id`, `additional_messages` [{role, type, content, content_type: text |
 *   object_string}], `stream`, `auto_save_history`, `enable_card`; streamed events
 *   `conversation.chat.created` / `in_progress` / `completed` (with `usage {token_count,
 *   output_count, input_count}`) / `failed` / `requires_action`, `conversation.message.delta` /
 *   `completed` (types answer, follow_up, verbose, function_call, tool_response, tool_output;
 *   content types text, card), `error`, `done`; non-streamed: the chat, `in_progress`)
 * - retrieve: https://www.coze.cn/open/docs/developer_guides/retrieve_chat (`GET /v3/chat/retrieve`;
 *   the SDK sends it as a POST)
 * - messages: https://www.coze.cn/open/docs/developer_guides/list_chat_messages (`GET /v3/chat/message/list`)
 * - conversations: https://www.coze.cn/open/docs/developer_guides/create_conversation (`POST /v1/conversation/create`)
 * - cancel: https://docs.coze.cn/developer_guides/chat_cancel (the SDK's `chat.cancel`: `POST
 *   /v3/chat/cancel {conversation_id, chat_id}`; the chat turns `canceled`, its turn is not kept as
 *   the conversation's context, a completed, failed or requires_action chat cannot be cancelled,
 *   and it does not end a stream: the client closes it)
 * - errors: https://www.coze.cn/open/docs/developer_guides/coze_error_codes (errors.ts)
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { BotChatAdapter, BotChatAsk, BotChatEvent, BotChatMessage, BotChatResult, BotChatUsage } from '../bot-chat';
import { isTokenCount, protocolError, recordOf, withHttpLinksOnly } from '../answer-fields';
import { UpstreamError } from '../errors';
import type { SseEvent } from '../sse';
import type { WireAnswer, WireRequest, WireTransport } from '../wire';
import { cozeErrorOf, cozeFailure, errorFields } from './errors';

/** Coze's EnterMessage. */
interface EnterMessage {
  readonly role: 'user' | 'assistant';
  readonly type?: 'answer';
  readonly content: string;
  readonly content_type: 'text' | 'object_string';
}

/**
 * A message as Coze takes it. Coze takes user and assistant messages only: a bot's instructions
 * are its own configuration, so a `system` message is not sent. An assistant message is an
 * earlier `answer` (Coze ties the default type, `question`, to the user). Parts become one
 * `object_string` message (at most one text item, which Coze requires, then the media by URL);
 * text parts alone are plain text.
 */
function enterMessage(message: BotChatMessage): EnterMessage[] {
  if (message.role === 'system') return [];
  const role = message.role;
  const typed = role === 'assistant' ? { type: 'answer' as const } : {};
  if (typeof message.content === 'string') return [{ role, ...typed, content: message.content, content_type: 'text' }];
  const text = message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  const media = message.content.flatMap((p) => (p.type === 'text' ? [] : [{ type: p.type, file_url: p.url }]));
  if (media.length === 0) return [{ role, ...typed, content: text, content_type: 'text' }];
  const items = [...(text === '' ? [] : [{ type: 'text', text }]), ...media];
  return [{ role, ...typed, content: JSON.stringify(items), content_type: 'object_string' }];
}

/**
 * `POST /v3/chat`. `auto_save_history` is always true: Coze refuses a non-streamed chat without
 * it (4007), and a conversation continues only from what Coze saved. `enable_card` asks Coze's
 * question-answer nodes for cards when the client wants cards.
 */
export function cozeChatRequest(ask: BotChatAsk, conversationId: string, stream: boolean): WireRequest {
  return {
    method: 'POST',
    path: '/v3/chat',
    query: { conversation_id: conversationId },
    model: ask.catalogModel,
    body: {
      bot_id: ask.bot,
      user_id: ask.user,
      stream,
      auto_save_history: true,
      additional_messages: ask.messages.flatMap(enterMessage),
      ...(ask.cards ? { enable_card: true } : {}),
    },
  };
}

/** `POST /v1/conversation/create`, bound to the bot (Coze lists a bot's conversations by it). */
export function cozeConversationRequest(ask: BotChatAsk): WireRequest {
  return { method: 'POST', path: '/v1/conversation/create', model: ask.catalogModel, body: { bot_id: ask.bot } };
}

export function cozeRetrieveRequest(conversationId: string, chatId: string, model: string): WireRequest {
  return { method: 'GET', path: '/v3/chat/retrieve', query: { conversation_id: conversationId, chat_id: chatId }, model };
}

/** `POST /v3/chat/cancel`, the body as the SDK's `chat.cancel` sends it. */
export function cozeCancelRequest(conversationId: string, chatId: string, model: string): WireRequest {
  return { method: 'POST', path: '/v3/chat/cancel', body: { conversation_id: conversationId, chat_id: chatId }, model };
}

/**
 * Cancels a chat the gateway gave up on (its timeout, the client gone, a stream that broke off):
 * Coze would run it on, and refuses a new chat in its conversation while it runs (4016). Best
 * effort, without the turn's signal (it may be the abort that brought us here): a refusal (the
 * chat ended meanwhile) or a failure leaves nothing the gateway could do.
 */
async function cancelChat(transport: WireTransport, conversationId: string, chatId: string, model: string): Promise<void> {
  try {
    await transport.call(cozeCancelRequest(conversationId, chatId, model));
  } catch {
    // best effort: see above
  }
}

export function cozeMessagesRequest(conversationId: string, chatId: string, model: string): WireRequest {
  return { method: 'GET', path: '/v3/chat/message/list', query: { conversation_id: conversationId, chat_id: chatId }, model };
}

/** `data` of a successful Coze envelope; an error status or a non-zero `code` throws the gateway's error for it. */
export function cozeData(answer: WireAnswer, channel: string): unknown {
  if (answer.status >= 400) throw cozeErrorOf(answer, channel);
  const body = answer.json();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw protocolError(channel, 'an answer that is not a JSON object');
  const { code } = body as { code?: unknown };
  if (code !== 0 && code !== undefined) throw cozeErrorOf(answer, channel);
  return (body as { data?: unknown }).data;
}

/** A chat as Coze reports it (`data` of a chat's creation or retrieval, a chat event). */
export interface CozeChatReading {
  readonly id: string;
  readonly conversationId: string;
  readonly status: string;
  readonly usage: BotChatUsage | null;
  readonly lastError: unknown;
}

export function readCozeChat(data: unknown, channel: string): CozeChatReading {
  const chat = recordOf(data);
  const id = chat['id'];
  const conversationId = chat['conversation_id'];
  if (typeof id !== 'string' || id === '' || typeof conversationId !== 'string' || conversationId === '') throw protocolError(channel, 'a chat without its id or conversation_id');
  return { id, conversationId, status: String(chat['status'] ?? ''), usage: usageOf(chat['usage']), lastError: chat['last_error'] };
}

/** Coze's `usage {token_count, output_count, input_count}`; null when it reports none readable. */
export function usageOf(value: unknown): BotChatUsage | null {
  const usage = recordOf(value);
  const input = usage['input_count'];
  const output = usage['output_count'];
  if (!isTokenCount(input) || !isTokenCount(output)) return null;
  return { inputTokens: input, outputTokens: output };
}

/**
 * A card message's content: Coze's card JSON (its Card SDK's data), kept as Coze sent it when it is
 * a JSON object, except for link members that are not http(s) (a client opens them); anything else
 * is kept as text.
 */
export function cardOf(content: unknown): Readonly<Record<string, unknown>> {
  if (typeof content === 'string') {
    try {
      const card = JSON.parse(content) as unknown;
      if (typeof card === 'object' && card !== null && !Array.isArray(card)) return withHttpLinksOnly(card) as Record<string, unknown>;
    } catch {
      // not JSON: kept as text below
    }
  }
  return { type: 'text', content: typeof content === 'string' ? content : '' };
}

/**
 * What a message of the chat is to the gateway: the answer's text (`answer` in text), a card (any
 * message whose content type is `card`: an answer, or a plugin's `tool_output`), a follow-up
 * suggestion (`follow_up`); everything else (`verbose`, `function_call`, `tool_response`,
 * `knowledge`, a user's `question`) is the bot's work, not its answer.
 */
function readMessage(value: unknown): BotChatEvent | null {
  const message = recordOf(value);
  const content = message['content'];
  if (message['content_type'] === 'card') return { type: 'card', card: cardOf(content) };
  if (typeof content !== 'string' || content === '') return null;
  if (message['type'] === 'answer') return { type: 'text', text: content };
  if (message['type'] === 'follow_up') return { type: 'follow_up', text: content };
  return null;
}

/** A chat that ended other than completed: its failure, the gateway's error. */
function endedChat(chat: CozeChatReading, channel: string): UpstreamError {
  if (chat.status === 'failed') {
    const { code, msg } = errorFields(chat.lastError);
    return cozeFailure(code, msg ?? 'the Coze chat failed', channel);
  }
  if (chat.status === 'requires_action') {
    // A local plugin of the bot waits for its output, which only the bot's own client can give.
    return new UpstreamError(502, 'the Coze bot asked for the output of a local plugin, which the gateway does not run', 'upstream_requires_action');
  }
  return new UpstreamError(502, `the Coze chat ended ${chat.status}`, 'upstream_chat_canceled');
}

/** Polls start quickly (most turns are short) and back off to Coze's suggested once a second. */
const POLL_DELAYS_MS = [100, 200, 400, 800];
const POLL_MAX_DELAY_MS = 1000;
const FINAL = new Set(['completed', 'failed', 'requires_action', 'canceled']);

async function conversationOf(transport: Parameters<BotChatAdapter['chat']>[0], ask: BotChatAsk, signal: AbortSignal | undefined): Promise<string> {
  if (ask.conversationId !== null) return ask.conversationId;
  const conversation = recordOf(cozeData(await transport.call(cozeConversationRequest(ask), signal), transport.name));
  const id = conversation['id'];
  if (typeof id !== 'string' || id === '') throw protocolError(transport.name, 'a created conversation without an id');
  return id;
}

/**
 * A turn read whole: the chat is created (`in_progress`), polled through `/v3/chat/retrieve` until
 * it is final, and its messages read through `/v3/chat/message/list`. A chat still running after
 * `waitMs` of polling is a timeout; one the gateway stops polling (that timeout, the client gone)
 * is cancelled.
 */
async function chat(...[transport, ask, options]: Parameters<BotChatAdapter['chat']>): Promise<BotChatResult> {
  const { signal } = options;
  const conversationId = await conversationOf(transport, ask, signal);
  const created = readCozeChat(cozeData(await transport.call(cozeChatRequest(ask, conversationId, false), signal), transport.name), transport.name);
  let chat: CozeChatReading;
  try {
    chat = await pollToEnd(transport, created, ask.catalogModel, options);
  } catch (err) {
    await cancelChat(transport, created.conversationId, created.id, ask.catalogModel);
    throw err;
  }
  if (chat.status !== 'completed') throw endedChat(chat, transport.name);
  const listed = cozeData(await transport.call(cozeMessagesRequest(chat.conversationId, chat.id, ask.catalogModel), signal), transport.name);
  if (!Array.isArray(listed)) throw protocolError(transport.name, 'a message list that is not an array');
  const read = listed.map(readMessage);
  return {
    chatId: chat.id,
    conversationId: chat.conversationId,
    answer: read.flatMap((e) => (e?.type === 'text' ? [e.text] : [])).join(''),
    followUps: read.flatMap((e) => (e?.type === 'follow_up' ? [e.text] : [])),
    cards: read.flatMap((e) => (e?.type === 'card' ? [e.card] : [])),
    usage: chat.usage,
  };
}

/** Retrieves the chat until it is final; at most `waitMs` of waiting, then a timeout. */
async function pollToEnd(transport: WireTransport, created: CozeChatReading, model: string, options: Parameters<BotChatAdapter['chat']>[2]): Promise<CozeChatReading> {
  const { signal, waitMs } = options;
  const sleep = options.sleep ?? ((ms: number, s?: AbortSignal) => sleepFor(ms, undefined, { signal: s }));
  let chat = created;
  for (let waited = 0, polls = 0; !FINAL.has(chat.status); polls++) {
    const delay = POLL_DELAYS_MS[polls] ?? POLL_MAX_DELAY_MS;
    if (waited + delay > waitMs) throw new UpstreamError(0, `channel ${transport.name}: the Coze chat was still ${chat.status} after ${waited} ms`, 'upstream_timeout', 'timeout');
    await sleep(delay, signal);
    waited += delay;
    chat = readCozeChat(cozeData(await transport.call(cozeRetrieveRequest(chat.conversationId, chat.id, model), signal), transport.name), transport.name);
  }
  return chat;
}

/** A streamed turn: the conversation (created when new), then the chat's event stream, or Coze's refusal of it. */
async function stream(...[transport, ask, signal]: Parameters<BotChatAdapter['stream']>): Promise<AsyncGenerator<BotChatEvent>> {
  const conversationId = await conversationOf(transport, ask, signal);
  const opened = await transport.openEvents(cozeChatRequest(ask, conversationId, true), signal);
  // Coze refuses a chat with a JSON envelope, with an error status or with 200 (the SDK reads both).
  if (opened.status >= 400 || !(opened.headers['content-type'] ?? '').includes('text/event-stream')) {
    const answer = await opened.whole();
    throw answer.status >= 400 ? cozeErrorOf(answer, transport.name) : failureOrProtocol(answer, transport.name);
  }
  return cancelledUnlessCompleted(readCozeEvents(opened.events(), transport.name), transport, ask.catalogModel);
}

/**
 * The stream's events, and a cancel of its chat when the stream is left before Coze completed it
 * (the client gone, the stream broken off or timed out): closing the connection alone does not stop
 * a Coze chat. Once Coze failed it, the cancel is refused, harmlessly.
 */
async function* cancelledUnlessCompleted(events: AsyncGenerator<BotChatEvent>, transport: WireTransport, model: string): AsyncGenerator<BotChatEvent> {
  let chat: { readonly id: string; readonly conversationId: string } | null = null;
  let completed = false;
  try {
    for await (const event of events) {
      if (event.type === 'started' && event.conversationId !== null) chat = { id: event.chatId, conversationId: event.conversationId };
      if (event.type === 'completed') completed = true;
      yield event;
    }
  } finally {
    if (chat !== null && !completed) await cancelChat(transport, chat.conversationId, chat.id, model);
  }
}

function failureOrProtocol(answer: WireAnswer, channel: string): UpstreamError {
  const { code } = errorFields(safeJson(answer.text()));
  return code !== null && code !== 0 ? cozeErrorOf(answer, channel) : protocolError(channel, 'a chat stream that is not an event stream');
}

/**
 * Coze's chat events as the gateway's. A message's deltas are its text; its `completed` event
 * repeats the whole text, so an answer is taken from `completed` only when no delta of that
 * message came (an answer sent whole). `done` ends the stream.
 */
export async function* readCozeEvents(events: AsyncIterable<SseEvent>, channel: string): AsyncGenerator<BotChatEvent> {
  const streamed = new Set<string>();
  for await (const event of events) {
    if (event.event === 'done') return;
    if (event.event === null || (!event.event.startsWith('conversation.') && event.event !== 'error')) continue;
    const data = safeJson(event.data);
    if (data === undefined) throw protocolError(channel, `a ${event.event} event whose data is not JSON`);
    switch (event.event) {
      case 'conversation.chat.created': {
        const chat = readCozeChat(data, channel);
        yield { type: 'started', chatId: chat.id, conversationId: chat.conversationId };
        break;
      }
      case 'conversation.message.delta': {
        const message = recordOf(data);
        if (message['type'] === 'answer' && message['content_type'] !== 'card' && typeof message['content'] === 'string' && message['content'] !== '') {
          streamed.add(String(message['id']));
          yield { type: 'text', text: message['content'] };
        }
        break;
      }
      case 'conversation.message.completed': {
        const read = readMessage(data);
        if (read && !(read.type === 'text' && streamed.has(String(recordOf(data)['id'])))) yield read;
        break;
      }
      case 'conversation.chat.completed':
        yield { type: 'completed', usage: usageOf(recordOf(data)['usage']) };
        break;
      case 'conversation.chat.failed': {
        // The chat (its `last_error`), or, as one reference example shows it, `{code, msg}` itself.
        const chat = recordOf(data);
        const { code, msg } = errorFields('last_error' in chat ? chat['last_error'] : chat);
        throw streamFailure(cozeFailure(code, msg ?? 'the Coze chat failed', channel));
      }
      case 'conversation.chat.requires_action':
        throw endedChat({ id: '', conversationId: '', status: 'requires_action', usage: null, lastError: null }, channel);
      case 'error': {
        const { code, msg } = errorFields(data);
        throw streamFailure(cozeFailure(code, msg ?? 'Coze sent an error in the stream', channel));
      }
      default:
        // conversation.chat.in_progress, conversation.audio.delta, and events Coze may add.
        break;
    }
  }
}

/** A failure after the stream began is the provider's (502), whatever its code says, its code kept. */
function streamFailure(err: UpstreamError): UpstreamError {
  return err.code === 'upstream_auth_failed' ? err : new UpstreamError(502, err.message, err.code);
}

/** Coze's bot chat as the web Q&A feature runs it, through a channel of the `coze` protocol. */
export const cozeBotChat: BotChatAdapter = {
  keepsConversations: true,
  media: ['image', 'file', 'audio'],
  chat,
  stream,
};

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
