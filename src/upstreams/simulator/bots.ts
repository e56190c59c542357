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
 * cards, mixed media) and `webqa-basic`, which refuses those with 400. Directives in the last user
 * message: `[sim:tokens=N]`, `[sim:fail]`, `[sim:status=NNN]`, `[sim:delay=MS]`, `[sim:stall]`.
 */
import type { ServerResponse } from 'node:http';
import { countMessageTokens, countTokens, splitTokens, type TokenMessage } from '../../billing/tokens';
import { parseDirectives, stripDirectives } from './directives';
import { codeForStatus, eventFrame, HttpError, sendError, sendJson, SseWriter, startEventStream, waitUnlessGone } from './http';
import type { ExtraRoute, SimContext } from './server';

const BOTS: Readonly<Record<string, { readonly pro: boolean }>> = { 'webqa-pro': { pro: true }, 'webqa-basic': { pro: false } };
const STALL_AFTER_TOKENS = 2;
const DEFAULT_MAX_TOKENS = 1024;

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
  return [{ method: 'POST', path: '/v1/bots/chat', handler: (ctx) => handleBotChat(ctx, ++seq) }];
}

async function handleBotChat(ctx: SimContext, seq: number): Promise<void> {
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

  const topic = stripDirectives(prompt).split(/\s+/).filter(Boolean).slice(0, 3).join(' ') || 'this';
  const followUps = request.suggestions ? [`Tell me more about ${topic}?`, `Which sources cover ${topic}?`, `What changed recently about ${topic}?`] : [];
  const cards = request.cards ? [{ type: 'link', title: `Sources for ${topic}`, url: `https://docs.example.com/search?q=${encodeURIComponent(topic)}`, description: 'A simulated reference card.' }] : [];
  // Follow-ups are generated output too: they come out of the same token budget.
  const followUpTokens = followUps.reduce((n, f) => n + countTokens(f), 0);
  const full = directives.tokens !== undefined ? Array.from({ length: directives.tokens }, (_, i) => `word${i + 1}`).join(' ') : answerText(request.botId, prompt, request.mediaParts);
  const pieces = splitTokens(full).slice(0, Math.max(1, request.maxTokens - followUpTokens));
  const input = countMessageTokens(request.messages);
  const output = pieces.length + followUpTokens;
  const usage = { input_count: input, output_count: output, token_count: input + output };
  const ids = { id: `chat_sim_${seq}`, conversation_id: request.conversationId ?? `conv_sim_${seq}`, bot_id: request.botId };
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

function answerText(botId: string, prompt: string, mediaParts: number): string {
  const words = stripDirectives(prompt).split(/\s+/).filter(Boolean).slice(0, 8);
  const media = mediaParts > 0 ? ` (with ${mediaParts} attachment${mediaParts === 1 ? '' : 's'})` : '';
  return `${botId} answers${media}: ${words.length > 0 ? words.join(' ') : 'hello'}`;
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
