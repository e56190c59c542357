/**
 * The simulated bot-chat provider, shaped on the public bot-chat APIs (a bot id, a conversation,
 * streamed message deltas, follow-up suggestions and cards):
 *
 * `POST /v1/bots/chat {bot_id, user_id?, conversation_id?, model?, stream?, max_tokens?,
 *   suggestions?, cards?, additional_messages: [{role, content_type: 'text'|'object_string', content}]}`
 *
 * - Plain: `{id, conversation_id, bot_id, status: 'completed', created_at, completed_at,
 *   messages: [{id, role: 'assistant', type: 'answer'|'follow_up'|'card', content_type, content}],
 *   usage: {input_count, output_count, token_count}}`; a card's content is a JSON string.
 * - Streamed: `event: conversation.chat.created`, `conversation.message.delta` (one per answer
 *   token), `conversation.message.completed` (the answer, each follow-up, each card),
 *   `conversation.chat.completed` (with usage), then `event: done` / `data: [DONE]`.
 *
 * `object_string` content is a JSON array of parts `{type: 'text', text}` or
 * `{type: 'image'|'file'|'audio', file_url}` (mixed media). Two bots: `webqa-pro` (Pro: follow-ups,
 * cards, mixed media) and `webqa-basic`, which refuses those with 400.
 *
 * Conversations: the bots remember the user's earlier questions per bot and `conversation_id` (a
 * new one is created when none is given), in memory and bounded (the newest MAX_CONVERSATIONS
 * conversations, MAX_TURNS questions each), and a default answer mentions the previous one.
 *
 * Directives in the last user message: `[sim:tokens=N]`, `[sim:fail]`, `[sim:status=NNN]`,
 * `[sim:delay=MS]`, `[sim:stall]`, and `[sim:usage=P,C]`: the reported usage is P input and C
 * output tokens whatever the text (otherwise it is counted with the gateway's token rule, so a
 * gateway that ignored the report could not be told apart).
 */
import type { ServerResponse } from 'node:http';
import { countMessageTokens, countTokens, splitTokens, type TokenMessage } from '../src/billing/tokens';
import { parseDirectives, stripDirectives } from './directives';
import { codeForStatus, eventFrame, HttpError, sendError, sendJson, SseWriter, startEventStream, waitUnlessGone } from './http';
import type { ExtraRoute, SimContext } from './server';

const BOTS: Readonly<Record<string, { readonly pro: boolean }>> = { 'webqa-pro': { pro: true }, 'webqa-basic': { pro: false } };
const STALL_AFTER_TOKENS = 2;
const DEFAULT_MAX_TOKENS = 1024;
const MAX_CONVERSATIONS = 1000;
const MAX_TURNS = 20;
const REPORTED_USAGE = /^(\d{1,9}),(\d{1,9})$/;

/** The user's questions per conversation, newest conversations kept (least recently used dropped first). */
class ConversationMemory {
  private readonly questions = new Map<string, string[]>();

  /** The questions asked so far (a copy). */
  earlier(key: string): readonly string[] {
    return [...(this.questions.get(key) ?? [])];
  }

  remember(key: string, question: string): void {
    const list = this.questions.get(key) ?? [];
    this.questions.delete(key);
    list.push(question);
    if (list.length > MAX_TURNS) list.splice(0, list.length - MAX_TURNS);
    this.questions.set(key, list);
    for (const oldest of this.questions.keys()) {
      if (this.questions.size <= MAX_CONVERSATIONS) break;
      this.questions.delete(oldest);
    }
  }
}

interface BotRequest {
  readonly botId: string;
  readonly conversationId: string | null;
  readonly messages: readonly TokenMessage[];
  readonly mediaParts: number;
  readonly stream: boolean;
  readonly maxTokens: number;
  readonly suggestions: boolean;
  readonly cards: boolean;
}

interface BotMessage {
  readonly id: string;
  readonly role: 'assistant';
  readonly type: 'answer' | 'follow_up' | 'card';
  readonly content_type: 'text' | 'card';
  readonly content: string;
}

export function botRoutes(): ExtraRoute[] {
  let seq = 0;
  const memory = new ConversationMemory();
  return [{ method: 'POST', path: '/v1/bots/chat', handler: (ctx) => handleBotChat(ctx, ++seq, memory) }];
}

async function handleBotChat(ctx: SimContext, seq: number, memory: ConversationMemory): Promise<void> {
  const request = parseRequest(ctx.body);
  const bot = BOTS[request.botId];
  if (!bot) throw new HttpError(404, `bot ${request.botId} does not exist`, 'bot_not_found', 'bot_id');
  if (!bot.pro && (request.suggestions || request.cards || request.mediaParts > 0)) {
    throw new HttpError(400, `bot ${request.botId} is not a Pro bot: suggestions, cards and mixed media need a Pro bot`, 'pro_bot_required');
  }
  const prompt = lastUserText(request.messages);
  const directives = parseDirectives(prompt);
  if (directives.delayMs !== undefined && !(await waitUnlessGone(ctx.res, directives.delayMs))) return;
  const status = directives.status ?? (directives.fail ? 500 : undefined);
  if (status !== undefined) {
    sendError(ctx.res, status, `Simulated bot error (HTTP ${status})`, codeForStatus(status));
    return;
  }
  if (directives.stall && !request.stream) return; // never answers

  const conversationId = request.conversationId ?? `conv_sim_${seq}`;
  const conversation = `${request.botId}\n${conversationId}`;
  const earlier = memory.earlier(conversation);
  const question = stripDirectives(prompt).split(/\s+/).filter(Boolean).join(' ');
  if (question !== '') memory.remember(conversation, question);
  const topic = stripDirectives(prompt).split(/\s+/).filter(Boolean).slice(0, 3).join(' ') || 'this';
  const followUps = request.suggestions ? [`Tell me more about ${topic}?`, `Which sources cover ${topic}?`, `What changed recently about ${topic}?`] : [];
  const cards = request.cards ? [{ type: 'link', title: `Sources for ${topic}`, url: `https://docs.example.com/search?q=${encodeURIComponent(topic)}`, description: 'A simulated reference card.' }] : [];
  // Follow-ups are generated output too: they come out of the same token budget.
  const followUpTokens = followUps.reduce((n, f) => n + countTokens(f), 0);
  const full =
    directives.tokens !== undefined
      ? Array.from({ length: directives.tokens }, (_, i) => `word${i + 1}`).join(' ')
      : answerText(request.botId, prompt, request.mediaParts, earlier[earlier.length - 1] ?? null);
  const pieces = splitTokens(full).slice(0, Math.max(1, request.maxTokens - followUpTokens));
  const reported = REPORTED_USAGE.exec(typeof directives.raw['usage'] === 'string' ? directives.raw['usage'] : '');
  const input = reported ? Number(reported[1]) : countMessageTokens(request.messages);
  const output = reported ? Number(reported[2]) : pieces.length + followUpTokens;
  const usage = { input_count: input, output_count: output, token_count: input + output };
  const ids = { id: `chat_sim_${seq}`, conversation_id: conversationId, bot_id: request.botId };
  const created = Math.floor(Date.now() / 1000);
  const extras: BotMessage[] = [
    ...followUps.map((content, i): BotMessage => ({ id: `msg_sim_${seq}_f${i}`, role: 'assistant', type: 'follow_up', content_type: 'text', content })),
    ...cards.map((card, i): BotMessage => ({ id: `msg_sim_${seq}_c${i}`, role: 'assistant', type: 'card', content_type: 'card', content: JSON.stringify(card) })),
  ];
  const answer: BotMessage = { id: `msg_sim_${seq}_a`, role: 'assistant', type: 'answer', content_type: 'text', content: pieces.join('') };
  if (!request.stream) {
    sendJson(ctx.res, 200, { ...ids, status: 'completed', created_at: created, completed_at: created, messages: [answer, ...extras], usage });
    return;
  }
  await streamChat(ctx.res, ids, answer, pieces, extras, usage, directives.stall);
}

async function streamChat(
  res: ServerResponse,
  ids: { id: string; conversation_id: string; bot_id: string },
  answer: BotMessage,
  pieces: readonly string[],
  extras: readonly BotMessage[],
  usage: object,
  stall: boolean,
): Promise<void> {
  startEventStream(res);
  const out = new SseWriter(res);
  const chat = { id: ids.id, conversation_id: ids.conversation_id, bot_id: ids.bot_id };
  const message = (m: BotMessage, content: string): object => ({ ...m, content, chat_id: ids.id, conversation_id: ids.conversation_id, bot_id: ids.bot_id });
  await out.push(eventFrame('conversation.chat.created', { ...chat, status: 'created' }));
  if (!(await out.flush())) return;
  const send = stall ? Math.min(STALL_AFTER_TOKENS, pieces.length) : pieces.length;
  for (let i = 0; i < send; i++) {
    if (!(await out.push(eventFrame('conversation.message.delta', message(answer, pieces[i]!))))) return;
  }
  if (stall) {
    await out.flush(); // and never end
    return;
  }
  await out.push(eventFrame('conversation.message.completed', message(answer, answer.content)));
  for (const extra of extras) await out.push(eventFrame('conversation.message.completed', message(extra, extra.content)));
  await out.push(eventFrame('conversation.chat.completed', { ...chat, status: 'completed', usage }));
  await out.push('event: done\ndata: [DONE]\n\n');
  out.end();
}

function answerText(botId: string, prompt: string, mediaParts: number, previousQuestion: string | null): string {
  const words = stripDirectives(prompt).split(/\s+/).filter(Boolean).slice(0, 8);
  const media = mediaParts > 0 ? ` (with ${mediaParts} attachment${mediaParts === 1 ? '' : 's'})` : '';
  const earlier = previousQuestion === null ? '' : ` (earlier in this conversation you asked: "${previousQuestion.split(' ').slice(0, 8).join(' ')}")`;
  return `${botId} answers${media}: ${words.length > 0 ? words.join(' ') : 'hello'}${earlier}`;
}

function parseRequest(raw: unknown): BotRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new HttpError(400, 'The request body must be a JSON object.', 'invalid_request');
  const body = raw as Record<string, unknown>;
  if (typeof body['bot_id'] !== 'string' || body['bot_id'] === '') throw new HttpError(400, 'bot_id is required', 'invalid_request', 'bot_id');
  const list = body['additional_messages'];
  if (!Array.isArray(list) || list.length === 0) throw new HttpError(400, 'additional_messages must be a non-empty array', 'invalid_request', 'additional_messages');
  let mediaParts = 0;
  const messages = list.map((m: unknown, i): TokenMessage => {
    const message = (m ?? {}) as Record<string, unknown>;
    if (typeof message['role'] !== 'string' || typeof message['content'] !== 'string') {
      throw new HttpError(400, `additional_messages[${i}] needs a role and a string content`, 'invalid_request', `additional_messages[${i}]`);
    }
    if (message['content_type'] !== 'object_string') return { role: message['role'], content: message['content'] };
    const parts = parseParts(message['content'], i);
    mediaParts += parts.filter((p) => p['type'] !== 'text').length;
    return { role: message['role'], content: parts.flatMap((p) => (p['type'] === 'text' && typeof p['text'] === 'string' ? [p['text']] : [])).join('\n') };
  });
  const maxTokens = body['max_tokens'];
  return {
    botId: body['bot_id'],
    conversationId: typeof body['conversation_id'] === 'string' && body['conversation_id'] !== '' ? body['conversation_id'] : null,
    messages,
    mediaParts,
    stream: body['stream'] === true,
    maxTokens: typeof maxTokens === 'number' && Number.isInteger(maxTokens) && maxTokens >= 1 ? maxTokens : DEFAULT_MAX_TOKENS,
    suggestions: body['suggestions'] === true,
    cards: body['cards'] === true,
  };
}

function parseParts(content: string, index: number): Record<string, unknown>[] {
  try {
    const parts = JSON.parse(content) as unknown;
    if (Array.isArray(parts) && parts.every((p) => typeof p === 'object' && p !== null)) return parts as Record<string, unknown>[];
  } catch {
    // fall through
  }
  throw new HttpError(400, `additional_messages[${index}].content must be a JSON array of parts`, 'invalid_request', `additional_messages[${index}]`);
}

function lastUserText(messages: readonly TokenMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return messages[i]!.content;
  return '';
}
