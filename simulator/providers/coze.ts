/**
 * The simulated Coze (扣子) OpenAPI at the simulator's `/coze` prefix (the base URL of a Coze channel,
 * `https://api.coze.cn`, has no path of its own): the v3 chat of a bot, streamed and not, its
 * polling, and conversations.
 *
 * References: https://www.coze.cn/open/docs/developer_guides/chat_v3 (`POST /v3/chat`),
 * https://www.coze.cn/open/docs/developer_guides/retrieve_chat (`GET /v3/chat/retrieve`; the official
 * SDK, `@coze/api`, sends it as a POST, so both are served),
 * https://www.coze.cn/open/docs/developer_guides/list_chat_messages (`GET /v3/chat/message/list`),
 * https://www.coze.cn/open/docs/developer_guides/create_conversation (`POST /v1/conversation/create`),
 * https://docs.coze.cn/developer_guides/chat_cancel (`POST /v3/chat/cancel`),
 * https://www.coze.cn/open/docs/developer_guides/coze_error_codes.
 *
 * Every answer is Coze's envelope `{code, msg, data, detail: {logid}}` with an `x-tt-logid` header;
 * a refusal is a non-zero `code` (4000 parameters, 4001 chat, 4002 conversation, 4006 bot, 4007
 * a non-streamed chat without history, 4016 a chat already running in the conversation) with
 * status 200, and a missing or unknown token is 4100 with status 401 (the HTTP status Coze gives
 * its refusals is not checked against the provider). Ids are strings of 19 digits.
 *
 * A non-streamed chat answers `in_progress` and finishes at its second retrieval (so a client
 * really polls); a streamed one sends `conversation.chat.created`, `in_progress`, the answer's
 * `conversation.message.delta`s, its `conversation.message.completed`, the cards (an answer of
 * content type `card`, only when `enable_card` is set), the `verbose` end of the answers, the
 * `follow_up` suggestions, `conversation.chat.completed` with `usage`, and `done`. The bots and
 * directives are simulator/bot-turns.ts's; besides, `[sim:code=NNNN]` refuses the chat with Coze's
 * code NNNN (status 200), `[sim:status=NNN]` with status NNN and the code Coze gives it, and
 * `[sim:stream-error=NNNN]` fails the chat with `last_error.code` NNNN after two tokens.
 * Conversations remember their user questions (the newest 1000 conversations, 20 questions each).
 *
 * A chat runs on when its stream is left, as Coze's do: a stalled one (`[sim:stall]`, streamed or
 * not) stays `in_progress`, and its conversation refuses a next chat (4016), until
 * `POST /v3/chat/cancel {conversation_id, chat_id}` makes it `canceled` and drops its question from
 * the conversation's memory (Coze keeps a cancelled turn out of the context); a chat that is
 * completed, failed or requires_action is not cancelled (4000: Coze's code for it is not checked
 * against the provider).
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { TokenMessage } from '../../src/billing/tokens';
import { previousQuestionIn, questionOf, SIM_BOTS, simBotTurn, STALL_AFTER_TOKENS, type SimTurn } from '../bot-turns';
import { parseDirectives } from '../directives';
import { eventFrame, sendJson, SseWriter, startEventStream, waitUnlessGone } from '../http';
import type { ExtraRoute, SimContext } from '../route';
import { hasAcceptedBearer } from './credentials';
import type { SimulatedProvider } from './provider';

const MAX_KEPT = 1000;
const MAX_QUESTIONS = 20;
/** The retrieval at which a non-streamed chat is over. */
const FINISHED_AT_RETRIEVAL = 2;

class CozeRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly status = 200,
  ) {
    super(message);
  }
}

/** Coze's code for an HTTP status a `[sim:status]` directive asks for. */
const CODE_OF_STATUS: Readonly<Record<number, number>> = { 400: 4000, 401: 4100, 403: 4101, 404: 4200, 429: 4009 };

interface SimConversation {
  readonly id: string;
  readonly questions: string[];
  running: boolean;
}

interface SimChat {
  readonly id: string;
  readonly conversation: SimConversation;
  /** The question the conversation remembered for this chat; null when it remembered none. */
  readonly question: string | null;
  canceled: boolean;
  readonly botId: string;
  readonly createdAt: number;
  readonly turn: SimTurn;
  readonly cards: boolean;
  retrievals: number;
}

interface ChatRequest {
  readonly botId: string;
  readonly stream: boolean;
  readonly saveHistory: boolean;
  readonly cards: boolean;
  readonly messages: readonly TokenMessage[];
  readonly mediaParts: number;
}

/** A map that keeps its newest MAX_KEPT entries. */
function keep<V>(map: Map<string, V>, key: string, value: V): V {
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= MAX_KEPT) break;
    map.delete(oldest);
  }
  return value;
}

function sendCoze(res: ServerResponse, data: unknown): void {
  const logid = randomBytes(12).toString('hex').toUpperCase();
  sendJson(res, 200, { code: 0, msg: '', data, detail: { logid } }, { 'x-tt-logid': logid });
}

function sendRefusal(res: ServerResponse, refusal: CozeRefusal, retryAfter?: string): void {
  const logid = randomBytes(12).toString('hex').toUpperCase();
  sendJson(res, refusal.status, { code: refusal.code, msg: refusal.message, detail: { logid } }, { 'x-tt-logid': logid, ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
}

function jsonObject(raw: Buffer | undefined): Record<string, unknown> {
  if (!raw || raw.length === 0) return {};
  try {
    const body = JSON.parse(raw.toString('utf8')) as unknown;
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // refused below
  }
  throw new CozeRefusal(4000, 'the request body is not a JSON object');
}

/** Coze's object_string items: at most one text, and media beside any text. */
function objectString(content: string, index: number): { text: string; media: number } {
  let items: unknown;
  try {
    items = JSON.parse(content);
  } catch {
    throw new CozeRefusal(4000, `additional_messages[${index}].content is not a JSON array of object_string items`);
  }
  if (!Array.isArray(items) || items.length === 0) throw new CozeRefusal(4000, `additional_messages[${index}].content is not a JSON array of object_string items`);
  const list = items as Record<string, unknown>[];
  const texts = list.filter((i) => i['type'] === 'text');
  const media = list.filter((i) => ['image', 'file', 'audio'].includes(String(i['type'])));
  if (texts.length + media.length !== list.length || media.some((m) => typeof m['file_url'] !== 'string' && typeof m['file_id'] !== 'string')) {
    throw new CozeRefusal(4000, `additional_messages[${index}] has an item that is not text, or media without file_url or file_id`);
  }
  if (texts.length > 1) throw new CozeRefusal(4000, `additional_messages[${index}] has more than one text item`);
  if (texts.length === 1 && media.length === 0) throw new CozeRefusal(4000, `additional_messages[${index}]: text alone is content_type text, not object_string`);
  return { text: typeof texts[0]?.['text'] === 'string' ? (texts[0]['text'] as string) : '', media: media.length };
}

function parseChat(body: Record<string, unknown>): ChatRequest {
  const botId = body['bot_id'];
  if (typeof botId !== 'string' || botId === '') throw new CozeRefusal(4000, 'bot_id is required');
  if (!SIM_BOTS[botId]) throw new CozeRefusal(4006, `invalid bot ${botId}`);
  if (typeof body['user_id'] !== 'string' || body['user_id'] === '') throw new CozeRefusal(4000, 'user_id is required');
  const stream = body['stream'] === true;
  const saveHistory = body['auto_save_history'] !== false;
  if (!stream && !saveHistory) throw new CozeRefusal(4007, 'stream false is allowed only with auto_save_history true');
  const list = body['additional_messages'] ?? [];
  if (!Array.isArray(list) || list.length > 100) throw new CozeRefusal(4004, 'additional_messages must be an array of at most 100 messages');
  let mediaParts = 0;
  const messages = list.map((m: unknown, i): TokenMessage => {
    const message = (typeof m === 'object' && m !== null ? m : {}) as Record<string, unknown>;
    const role = message['role'];
    if (role !== 'user' && role !== 'assistant') throw new CozeRefusal(4000, `additional_messages[${i}].role must be user or assistant`);
    if (typeof message['content'] !== 'string') throw new CozeRefusal(4000, `additional_messages[${i}].content must be a string`);
    if (role === 'assistant' && message['type'] !== 'answer') throw new CozeRefusal(4000, `additional_messages[${i}]: an assistant message is of type answer`);
    if (message['content_type'] === 'text') return { role, content: message['content'] };
    if (message['content_type'] !== 'object_string') throw new CozeRefusal(4000, `additional_messages[${i}].content_type must be text or object_string`);
    const parts = objectString(message['content'], i);
    mediaParts += parts.media;
    return { role, content: parts.text };
  });
  if (!messages.some((m) => m.role === 'user')) throw new CozeRefusal(4000, "additional_messages must carry the user's question");
  return { botId, stream, saveHistory, cards: body['enable_card'] === true, messages, mediaParts };
}

function cozeRoutes(): ExtraRoute[] {
  let seq = 0;
  const newId = (): string => String(7_400_000_000_000_000_000n + BigInt(Date.now()) * 1000n + BigInt(++seq % 1000));
  const conversations = new Map<string, SimConversation>();
  const chats = new Map<string, SimChat>();

  const openConversation = (): SimConversation => {
    const id = newId();
    return keep(conversations, id, { id, questions: [], running: false });
  };

  const authed =
    (handler: (ctx: SimContext) => void | Promise<void>) =>
    async (ctx: SimContext): Promise<void> => {
      if (!hasAcceptedBearer(ctx, 'coze')) return sendRefusal(ctx.res, new CozeRefusal(4100, 'authentication is invalid', 401));
      try {
        await handler(ctx);
      } catch (err) {
        if (!(err instanceof CozeRefusal) || ctx.res.headersSent) throw err;
        sendRefusal(ctx.res, err);
      }
    };

  /** A chat as Coze reports it: its status by what the directives and the retrievals say. */
  const chatData = (chat: SimChat): Record<string, unknown> => {
    const { directives } = chat.turn;
    const failed = directives.streamError !== undefined;
    const over = !chat.canceled && !directives.stall && chat.retrievals >= FINISHED_AT_RETRIEVAL;
    const status = chat.canceled ? 'canceled' : !over ? 'in_progress' : failed ? 'failed' : 'completed';
    if (over) chat.conversation.running = false;
    const usage = status === 'completed' ? { token_count: chat.turn.usage.input + chat.turn.usage.output, output_count: chat.turn.usage.output, input_count: chat.turn.usage.input } : { token_count: 0, output_count: 0, input_count: 0 };
    return {
      id: chat.id,
      conversation_id: chat.conversation.id,
      bot_id: chat.botId,
      created_at: chat.createdAt,
      ...(status === 'completed' ? { completed_at: chat.createdAt } : {}),
      ...(status === 'failed' ? { failed_at: chat.createdAt } : {}),
      last_error: failed && over ? { code: Number(directives.streamError) || 5000, msg: 'the simulated chat failed' } : { code: 0, msg: '' },
      status,
      usage,
    };
  };

  const messagesOf = (chat: SimChat): Record<string, unknown>[] => {
    const base = { conversation_id: chat.conversation.id, bot_id: chat.botId, chat_id: chat.id, role: 'assistant', created_at: chat.createdAt, updated_at: chat.createdAt };
    let n = 0;
    const message = (type: string, content: string, contentType = 'text') => ({ id: `${chat.id}${String(++n).padStart(2, '0')}`, ...base, type, content, content_type: contentType });
    return [
      message('answer', chat.turn.answer),
      ...(chat.cards ? chat.turn.cards.map((card) => message('answer', JSON.stringify(card), 'card')) : []),
      message('verbose', JSON.stringify({ msg_type: 'generate_answer_finish', data: '', from_module: null, from_unit: null })),
      ...chat.turn.followUps.map((f) => message('follow_up', f)),
    ];
  };

  const findChat = (ctx: SimContext): SimChat => {
    const chat = chats.get(ctx.query.get('chat_id') ?? '');
    if (!chat || chat.conversation.id !== ctx.query.get('conversation_id')) throw new CozeRefusal(4001, 'invalid chat');
    return chat;
  };

  const retrieve = authed((ctx) => {
    const chat = findChat(ctx);
    chat.retrievals++;
    sendCoze(ctx.res, chatData(chat));
  });

  return [
    {
      method: 'POST',
      path: '/v1/conversation/create',
      body: 'raw',
      handler: authed(({ res, rawBody }) => {
        jsonObject(rawBody);
        const conversation = openConversation();
        sendCoze(res, { id: conversation.id, created_at: Math.floor(Date.now() / 1000), meta_data: {}, last_section_id: newId() });
      }),
    },
    {
      method: 'POST',
      path: '/v3/chat',
      body: 'raw',
      handler: authed(async (ctx) => {
        const request = parseChat(jsonObject(ctx.rawBody));
        const directives = parseDirectives(request.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
        if (directives.delayMs !== undefined && !(await waitUnlessGone(ctx.res, directives.delayMs))) return;
        const coded = typeof directives.raw['code'] === 'string' ? Number(directives.raw['code']) : NaN;
        if (Number.isInteger(coded) && coded > 0) throw new CozeRefusal(coded, `simulated refusal (code ${coded})`);
        const status = directives.status ?? (directives.fail ? 500 : undefined);
        if (status !== undefined) return sendRefusal(ctx.res, new CozeRefusal(CODE_OF_STATUS[status] ?? 5000, `simulated refusal (HTTP ${status})`, status), directives.retryAfter);
        const named = ctx.query.get('conversation_id');
        const conversation = named ? conversations.get(named) : openConversation();
        if (!conversation) throw new CozeRefusal(4002, 'invalid conversation');
        if (conversation.running) throw new CozeRefusal(4016, 'a chat is already running in this conversation');
        const bot = SIM_BOTS[request.botId]!;
        const turn = simBotTurn({
          botId: request.botId,
          bot,
          messages: request.messages,
          mediaParts: request.mediaParts,
          previousQuestion: conversation.questions.at(-1) ?? previousQuestionIn(request.messages),
          followUps: true,
          cards: request.cards,
        });
        const asked = questionOf(request.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
        const question = request.saveHistory && asked !== '' ? asked : null;
        if (question !== null) {
          conversation.questions.push(question);
          if (conversation.questions.length > MAX_QUESTIONS) conversation.questions.shift();
        }
        const id = newId();
        const chat = keep(chats, id, { id, conversation, question, canceled: false, botId: request.botId, createdAt: Math.floor(Date.now() / 1000), turn, cards: request.cards, retrievals: 0 });
        conversation.running = true;
        if (!request.stream) return sendCoze(ctx.res, chatData(chat));
        try {
          await streamChat(ctx.res, chat, chatData, messagesOf);
        } finally {
          // A stalled chat runs on after its stream is left, until cancelled.
          if (!turn.directives.stall || chat.canceled) conversation.running = false;
        }
      }),
    },
    {
      method: 'POST',
      path: '/v3/chat/cancel',
      body: 'raw',
      handler: authed(({ res, rawBody }) => {
        const body = jsonObject(rawBody);
        const chat = chats.get(String(body['chat_id'] ?? ''));
        if (!chat || chat.conversation.id !== body['conversation_id']) throw new CozeRefusal(4001, 'invalid chat');
        const status = chatData(chat)['status'];
        if (status !== 'in_progress' && status !== 'created') throw new CozeRefusal(4000, `a ${String(status)} chat cannot be canceled`);
        chat.canceled = true;
        chat.conversation.running = false;
        const remembered = chat.question === null ? -1 : chat.conversation.questions.lastIndexOf(chat.question);
        if (remembered >= 0) chat.conversation.questions.splice(remembered, 1);
        sendCoze(res, chatData(chat));
      }),
    },
    { method: 'GET', path: '/v3/chat/retrieve', handler: retrieve },
    { method: 'POST', path: '/v3/chat/retrieve', body: 'raw', handler: retrieve },
    {
      method: 'GET',
      path: '/v3/chat/message/list',
      handler: authed((ctx) => {
        const chat = findChat(ctx);
        sendCoze(ctx.res, chatData(chat)['status'] === 'completed' ? messagesOf(chat) : []);
      }),
    },
  ];
}

async function streamChat(res: ServerResponse, chat: SimChat, chatData: (chat: SimChat) => Record<string, unknown>, messagesOf: (chat: SimChat) => Record<string, unknown>[]): Promise<void> {
  const { directives, pieces } = chat.turn;
  startEventStream(res);
  const out = new SseWriter(res);
  const snapshot = chatData(chat);
  await out.push(eventFrame('conversation.chat.created', { ...snapshot, status: 'created' }));
  await out.push(eventFrame('conversation.chat.in_progress', snapshot));
  if (!(await out.flush())) return;
  const [answer, ...rest] = messagesOf(chat);
  const broken = directives.stall || directives.streamError !== undefined;
  const sent = broken ? Math.min(STALL_AFTER_TOKENS, pieces.length) : pieces.length;
  for (let i = 0; i < sent; i++) {
    if (!(await out.push(eventFrame('conversation.message.delta', { ...answer, content: pieces[i] })))) return;
  }
  if (directives.stall) {
    await out.flush(); // and never end
    return;
  }
  if (directives.streamError !== undefined) {
    const code = Number(directives.streamError) || 5000;
    await out.push(eventFrame('conversation.chat.failed', { ...snapshot, status: 'failed', last_error: { code, msg: 'the simulated chat failed' } }));
    out.end();
    return;
  }
  for (const message of [answer, ...rest]) await out.push(eventFrame('conversation.message.completed', message));
  chat.retrievals = FINISHED_AT_RETRIEVAL;
  await out.push(eventFrame('conversation.chat.completed', chatData(chat)));
  await out.push('event: done\ndata: "[DONE]"\n\n');
  out.end();
}

/** Coze at `/coze`. */
export const cozeProvider: SimulatedProvider = {
  protocol: 'coze',
  title: 'Coze v3 chat (web Q&A bots), conversations',
  basePath: '',
  routes: cozeRoutes,
};
