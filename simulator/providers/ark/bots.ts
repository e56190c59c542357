/**
 * The simulated Volcengine Ark bots API (方舟应用), at `/ark/api/v3/bots/chat/completions`: OpenAI's
 * chat completions with a bot id (`bot-…`) as `model`, answered with OpenAI's completion or chunks
 * plus `references` (the pages the bot's web search answered from) and `bot_usage {model_usage,
 * action_usage}`; a stream's usage comes on its last chunk (`choices: []`) when `stream_options.
 * include_usage` is set. References: https://www.volcengine.com/docs/82379/1285207, the answer as
 * the official Python SDK types it (`volcenginesdkarkruntime/types/bot_chat`).
 *
 * The bots: `bot-20260520000000-wqpro` (a Pro bot: a reference per answer) and
 * `bot-20260520000000-wqbas` (basic). They keep no conversation: the previous question a bot
 * mentions is the one in the messages it is sent. Directives: simulator/bot-turns.ts's;
 * `[sim:stream-error=CODE]` sends Ark's error item after two tokens. An unknown bot is Ark's 404
 * `InvalidEndpointOrModel.NotFound`.
 */
import type { ServerResponse } from 'node:http';
import type { TokenMessage } from '../../../src/billing/tokens';
import { previousQuestionIn, SIM_BOTS, simBotTurn, STALL_AFTER_TOKENS, type SimBot, type SimTurn } from '../../bot-turns';
import { parseDirectives } from '../../directives';
import { dataFrame, HttpError, SseWriter, startEventStream, waitUnlessGone } from '../../http';
import type { ExtraRoute } from '../../route';
import { ARK_STATUS_CODES, arkJsonBody, arkRoute, sendArk } from './common';

export const SIM_ARK_BOTS: Readonly<Record<string, SimBot>> = { 'bot-20260520000000-wqpro': SIM_BOTS['webqa-pro']!, 'bot-20260520000000-wqbas': SIM_BOTS['webqa-basic']! };
/** `max_tokens` when a request has none (the reference's default; its range is the model's, not checked here). */
const ARK_DEFAULT_MAX_TOKENS = 4096;
/** The model a simulated bot reports it called. */
const BOT_MODEL = 'doubao-seed-1-6-250615';

function invalid(param: string, why: string): HttpError {
  return new HttpError(400, `The parameter \`${param}\` specified in the request is not valid: ${why}.`, 'InvalidParameter', param);
}

/** OpenAI's messages as text, and the media parts (only `image_url`: what Ark's bots take). */
function readMessages(value: unknown): { messages: TokenMessage[]; mediaParts: number } {
  if (!Array.isArray(value) || value.length === 0) throw invalid('messages', 'expected a non-empty array');
  let mediaParts = 0;
  const messages = value.map((m: unknown, i): TokenMessage => {
    const message = (typeof m === 'object' && m !== null ? m : {}) as Record<string, unknown>;
    const role = message['role'];
    if (role !== 'system' && role !== 'user' && role !== 'assistant') throw invalid(`messages[${i}].role`, 'expected system, user or assistant');
    const content = message['content'];
    if (typeof content === 'string') return { role, content };
    if (!Array.isArray(content)) throw invalid(`messages[${i}].content`, 'expected a string or an array of parts');
    const texts = content.map((part: unknown, j) => {
      const p = (typeof part === 'object' && part !== null ? part : {}) as Record<string, unknown>;
      if (p['type'] === 'text' && typeof p['text'] === 'string') return p['text'];
      if (p['type'] === 'image_url' && typeof (p['image_url'] as { url?: unknown } | undefined)?.url === 'string') {
        mediaParts++;
        return null;
      }
      throw invalid(`messages[${i}].content[${j}]`, 'expected a text or image_url part');
    });
    return { role, content: texts.filter((t): t is string => t !== null).join('\n') };
  });
  return { messages, mediaParts };
}

function referencesOf(turn: SimTurn): Record<string, unknown>[] {
  return turn.cards.map((card) => ({ url: card['url'], title: card['title'], summary: card['description'], site_name: 'docs.example.com', publish_time: '2026-05-20' }));
}

function botUsage(turn: SimTurn): Record<string, unknown> {
  const { input, output } = turn.usage;
  return {
    model_usage: [{ name: BOT_MODEL, prompt_tokens: input, completion_tokens: output, total_tokens: input + output }],
    action_usage: turn.cards.length > 0 ? [{ name: 'content_plugin', search_count: 1 }] : [],
  };
}

function usageOf(turn: SimTurn): Record<string, number> {
  return { prompt_tokens: turn.usage.input, completion_tokens: turn.usage.output, total_tokens: turn.usage.input + turn.usage.output };
}

export function arkBotRoutes(): ExtraRoute[] {
  let seq = 0;
  return [
    arkRoute('POST', '/bots/chat/completions', async ({ res, rawBody }) => {
      const b = arkJsonBody(rawBody);
      const botId = b['model'];
      if (typeof botId !== 'string' || botId === '') throw invalid('model', 'it is required');
      const bot = Object.hasOwn(SIM_ARK_BOTS, botId) ? SIM_ARK_BOTS[botId]! : null;
      if (!bot) throw new HttpError(404, `The model or endpoint ${botId} does not exist or you do not have access to it.`, 'InvalidEndpointOrModel.NotFound');
      const { messages, mediaParts } = readMessages(b['messages']);
      const maxTokens = b['max_tokens'] ?? ARK_DEFAULT_MAX_TOKENS;
      if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) throw invalid('max_tokens', 'expected a positive integer');
      const stream = b['stream'] === true;
      const includeUsage = stream && (b['stream_options'] as { include_usage?: unknown } | undefined)?.include_usage === true;

      const directives = parseDirectives(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
      if (directives.delayMs !== undefined && !(await waitUnlessGone(res, directives.delayMs))) return;
      const status = directives.status ?? (directives.fail ? 500 : undefined);
      if (status !== undefined) throw new HttpError(status, `simulated HTTP ${status}`, ARK_STATUS_CODES[status] ?? 'InternalServiceError');
      if (directives.stall && !stream) return; // never answers

      const turn = simBotTurn({ botId, bot, messages, mediaParts, previousQuestion: previousQuestionIn(messages), followUps: false, cards: true, maxTokens });
      const id = `0217${Date.now()}${String(++seq).padStart(6, '0')}`;
      const created = Math.floor(Date.now() / 1000);
      const references = referencesOf(turn);
      if (!stream) {
        sendArk(res, {
          id,
          object: 'chat.completion',
          created,
          model: botId,
          choices: [{ index: 0, message: { role: 'assistant', content: turn.answer }, finish_reason: 'stop' }],
          usage: usageOf(turn),
          bot_usage: botUsage(turn),
          ...(references.length > 0 ? { references } : {}),
          metadata: {},
        });
        return;
      }
      await streamBot(res, { id, object: 'chat.completion.chunk', created, model: botId }, turn, references, includeUsage);
    }),
  ];
}

async function streamBot(res: ServerResponse, base: Record<string, unknown>, turn: SimTurn, references: readonly Record<string, unknown>[], includeUsage: boolean): Promise<void> {
  const { directives, pieces } = turn;
  startEventStream(res);
  const out = new SseWriter(res);
  // The search plugin's references come before the answer, on the first chunk.
  await out.push(dataFrame({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], ...(references.length > 0 ? { references } : {}) }));
  const broken = directives.stall || directives.streamError !== undefined;
  const sent = broken ? Math.min(STALL_AFTER_TOKENS, pieces.length) : pieces.length;
  for (let i = 0; i < sent; i++) {
    if (!(await out.push(dataFrame({ ...base, choices: [{ index: 0, delta: { content: pieces[i] }, finish_reason: null }] })))) return;
  }
  if (directives.stall) {
    await out.flush(); // and never end
    return;
  }
  if (directives.streamError !== undefined) {
    await out.push(dataFrame({ error: { code: directives.streamError, message: 'The simulated bot failed.', param: '', type: 'InternalServiceError' } }));
    out.end();
    return;
  }
  await out.push(dataFrame({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  if (includeUsage) await out.push(dataFrame({ ...base, choices: [], usage: usageOf(turn), bot_usage: botUsage(turn) }));
  await out.push('data: [DONE]\n\n');
  out.end();
}
