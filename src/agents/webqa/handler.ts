import { createHash } from 'node:crypto';
import type { ModelEntry, Catalog } from '../../billing/catalog';
import { pricingOf, tokenCharge, tokenLine } from '../../billing/money';
import type { RequestCharge } from '../../billing/request-charge';
import { countMessageTokens, countTokens } from '../../billing/tokens';
import { metered, routedCall, unlessPinned, type MeteringDeps, type RoutingDeps } from '../../billing/metered';
import { readJson } from '../../http/body';
import { authOf, type GatewayContext } from '../../http/context';
import { ApiError } from '../../http/errors';
import { clientUrlProblem } from '../../http/urls';
import { SseResponse } from '../../http/sse';
import { isAbort, UpstreamError } from '../../http/upstream-errors';
import { newId } from '../../ids';
import { botChatAdapterOf } from '../../upstreams/bot-adapters';
import type { BotChatAdapter, BotChatAsk, BotChatMessage, BotChatUsage, BotMediaKind } from '../../upstreams/bot-chat';
import { requireAllowed } from '../access';
import { botCapabilities, botPricing } from '../model-types';
import { ConversationIds } from './conversation-ids';
import { KeptConversations, type KeptMessage, type KeptTurn } from './kept-conversations';
import { mediaParts, mediaUrlOf, messageText, parseWebQaRequest, type ContentPart, type WebQaMessage, type WebQaRequest } from './schemas';
import type { Pool } from 'pg';
import type { Config } from '../../config';
import type { Clock } from '../../feature-types';
import type { UrlSigner } from '../../files/signed-urls';
import type { RateLimiter } from '../../http/rate-limit';
import type { Upstreams } from '../../upstreams/registry';

/** What the web Q&A agent uses. */
export type WebQaDeps = MeteringDeps & RoutingDeps & {
  readonly catalog: Catalog;
  readonly upstreams: Pick<Upstreams, 'protocolOf' | 'hasChannel'>;
  readonly rateLimiter: Pick<RateLimiter, 'admit' | 'settleTokens'>;
  /** Signs the conversation ids handed to clients. */
  readonly signer: UrlSigner;
  readonly clock: Clock;
  /** Where the gateway keeps the conversations of bots whose provider keeps none (KeptConversations). */
  readonly pool: Pick<Pool, 'query'>;
  readonly config: Pick<Config, 'webQaRateWaitMs' | 'ssePingMs' | 'fileUrlAllowPrivateTargets' | 'webQaHistoryTtlMs'>;
};

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

interface Plan {
  readonly bot: ModelEntry;
  readonly adapter: BotChatAdapter;
  /** The turn as the provider is asked for it. */
  readonly ask: BotChatAsk;
  /** Whether the client gets follow-ups and cards (a Pro bot, unless asked not to). */
  readonly followUps: boolean;
  readonly cards: boolean;
  /** For a provider that keeps no conversation: the gateway's conversation, whose turns it keeps (KeptConversations). */
  readonly keptConversation: string | null;
  /** The channel holding the provider's conversation a turn continues; undefined: the router picks. */
  readonly channel: string | undefined;
  readonly promptTokens: number;
  readonly estimate: number;
  /** The tokens the turn may use at most: its prompt and the bot's output limit (what a key's tokens-per-minute limit counts at admission). */
  readonly tokens: number;
}

const conversationIds = (deps: WebQaDeps): ConversationIds => new ConversationIds(deps.signer);
const keptConversations = (deps: WebQaDeps): KeptConversations => new KeptConversations(deps.pool, deps.config.webQaHistoryTtlMs);

/**
 * POST /v1/agent/chat/completions: a web Q&A turn proxied to the bot's provider (src/upstreams/bot-chat.ts), billed by
 * the tokens the agent reports, reserved and settled like chat. The answer is an OpenAI chat
 * completion plus the agent's extras: `bot_id`, `conversation_id`, `follow_ups`, `cards`.
 */
export async function handleWebQa(deps: WebQaDeps, ctx: GatewayContext): Promise<void> {
  const request = parseWebQaRequest(await readJson(ctx));
  const plan = await planTurn(deps, ctx, request);
  await withoutTooManyRequests(() => turn(deps, ctx, request, plan));
}

/**
 * The spec lists no 429 for web Q&A: a key over its rate waits up to WEBQA_RATE_WAIT_MS for its
 * turn (then 502 `gateway_busy`), the upstream's own rate limit is a 502 `upstream_rate_limited`,
 * and a bot whose every channel is cooling down (the gateway's own `rate_limit_exceeded`) is a 502
 * `gateway_busy` with the same Retry-After.
 */
async function withoutTooManyRequests(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 429) throw err;
    const code = err.code === 'rate_limit_exceeded' ? 'gateway_busy' : err.code;
    throw new ApiError(502, code, err.message, { type: 'upstream_error', headers: err.options.headers });
  }
}

async function turn(deps: WebQaDeps, ctx: GatewayContext, request: WebQaRequest, plan: Plan): Promise<void> {
  await metered(deps, ctx, { model: plan.bot, estimate: plan.estimate, tokens: plan.tokens, waitForTurnMs: deps.config.webQaRateWaitMs, ...unlessPinned(deps, plan.channel) }, async (charge) => {
    if (request.stream) return streamTurn(deps, ctx, request, plan, charge);
    const { value: chat, channel } = await routedCall(deps, plan.bot, charge, (ch) => plan.adapter.chat(ch, plan.ask, { signal: charge.signal, waitMs: ch.config.timeout_ms }), plan.channel);
    const followUps = plan.followUps ? chat.followUps : [];
    const usage = reportedUsage(ctx, plan, channel, chat.usage) ?? counted(plan.promptTokens, chat.answer, followUps);
    await settle(charge, plan.bot, usage);
    await keepTurn(deps, ctx, request, plan, chat.answer);
    ctx.body = {
      id: chat.chatId,
      object: 'chat.completion',
      created: Math.floor(deps.clock().getTime() / 1000),
      model: plan.bot.id,
      bot_id: plan.bot.id,
      conversation_id: clientConversationId(deps, ctx, plan, chat.conversationId, channel),
      choices: [{ index: 0, message: { role: 'assistant', content: chat.answer }, finish_reason: 'stop' }],
      follow_ups: followUps,
      cards: plan.cards ? chat.cards : [],
      usage,
    };
  });
}

/**
 * The conversation id the client gets: the gateway's own where the gateway keeps the conversation,
 * else the provider's with a mark of the channel that holds it (`<provider id>@<mark>`), so that
 * its next turns go to that channel only.
 */
function clientConversationId(deps: WebQaDeps, ctx: GatewayContext, plan: Plan, providerConversation: string | null, channel: string): string | null {
  const id = plan.keptConversation ?? (providerConversation === null ? null : `${providerConversation}${CHANNEL_MARK}${channelMark(channel)}`);
  return id === null ? null : conversationIds(deps).forClient(authOf(ctx).accountId, id);
}

/** Between a provider's conversation id and the mark of the channel that holds it, inside the signed id. */
const CHANNEL_MARK = '@';

/**
 * A channel as a conversation id names it: a short digest of its name, so that the operator's
 * channel names (which may say which provider account serves whom) never reach a client.
 */
function channelMark(channel: string): string {
  return createHash('sha256').update(channel).digest('hex').slice(0, 10);
}

/**
 * A continued provider conversation's id and the channel holding it: the bot's channel whose mark
 * the id carries. An id handed out before ids named their channel is held by the bot's first
 * channel, which was then its only one; so is one whose channel the bot no longer lists (the
 * provider then answers that it has no such conversation).
 */
function providerConversation(bot: ModelEntry, signed: string): { id: string; channel: string } {
  const at = signed.lastIndexOf(CHANNEL_MARK);
  if (at <= 0) return { id: signed, channel: bot.channel };
  const mark = signed.slice(at + 1);
  return { id: signed.slice(0, at), channel: bot.channels.find((c) => channelMark(c.name) === mark)?.name ?? bot.channel };
}

/**
 * A completed turn of a conversation the gateway keeps is recorded for the next one, as text.
 * Best effort: the answer was paid for and is good; a turn that could not be kept only leaves the
 * next turn without it.
 */
async function keepTurn(deps: WebQaDeps, ctx: GatewayContext, request: WebQaRequest, plan: Plan, answer: string): Promise<void> {
  if (plan.keptConversation === null) return;
  try {
    const messages = request.messages.flatMap((m): KeptMessage[] => {
      const content = messageText(m);
      return content === '' ? [] : [{ role: botRole(m), content }];
    });
    await keptConversations(deps).record(authOf(ctx).accountId, plan.keptConversation, plan.bot.id, { messages, answer }, deps.clock());
  } catch (err) {
    ctx.state.logger.warn({ err }, 'could not keep a web Q&A turn for its conversation');
  }
}

/**
 * The bot (a catalog model of type `bot`), its access, the Pro-only features, and the estimate:
 * the prompt's tokens plus the bot's maximum output, at the bot's prices.
 */
async function planTurn(deps: WebQaDeps, ctx: GatewayContext, request: WebQaRequest): Promise<Plan> {
  const bot = deps.catalog.get(request.bot_id);
  if (!bot || bot.type !== 'bot') throw new ApiError(400, 'bot_not_found', `there is no bot '${request.bot_id}'`, { param: 'bot_id' });
  const auth = authOf(ctx);
  requireAllowed(auth, [bot], `bot '${bot.id}'`, 400);
  const caps = botCapabilities(bot);
  const ext = request.extension_options ?? {};
  const pro = caps.tier === 'pro';
  const media = mediaParts(request);
  if (!pro) {
    const asked = [...(media.length > 0 ? ['mixed media'] : []), ...(ext.follow_ups ? ['follow_ups'] : []), ...(ext.cards ? ['cards'] : [])];
    if (asked.length > 0) {
      const param = media[0]?.param ?? (ext.follow_ups ? 'extension_options.follow_ups' : 'extension_options.cards');
      throw new ApiError(400, 'pro_bot_required', `${asked.join(', ')} need${asked.length === 1 ? 's' : ''} a Pro bot; '${bot.id}' is not one`, { param });
    }
  }
  // The bot's one protocol (a bot of mixed protocols is not sold); null only when its channels
  // changed since the catalog answered: as if it had never been sold.
  const protocol = deps.upstreams.protocolOf(bot);
  if (protocol === null) throw new ApiError(400, 'bot_not_found', `there is no bot '${request.bot_id}'`, { param: 'bot_id' });
  const adapter = botChatAdapterOf(protocol);
  for (const part of media) {
    const kind = MEDIA_KINDS[part.type];
    if (!adapter.media.includes(kind)) {
      throw new ApiError(400, 'media_not_supported', `bot '${bot.id}' takes ${adapter.media.join(', ')} parts, not ${part.type}`, { param: part.param });
    }
  }
  // The agent fetches what a media part names: the address rule of every client URL.
  for (const part of media) {
    const problem = clientUrlProblem(part.url, part.urlParam, { httpsOnly: false, allowPrivateTargets: deps.config.fileUrlAllowPrivateTargets });
    if (problem) throw new ApiError(400, 'invalid_media_url', problem, { param: part.urlParam });
  }
  const model = request.model !== undefined && request.model !== bot.id ? request.model : null;
  if (model !== null && !deps.catalog.get(model)) throw new ApiError(400, 'model_not_found', `The model '${model}' does not exist`, { param: 'model' });
  if (model !== null && !caps.models.includes(model)) {
    const choices = [bot.id, ...caps.models].map((m) => `'${m}'`).join(', ');
    throw new ApiError(400, 'model_not_supported', `bot '${bot.id}' answers with ${choices}, not '${model}'`, { param: 'model' });
  }
  // A model the request names is a model it uses (as the risk writer is for the risk endpoint):
  // a restricted key must allow it too, though the turn is billed at the bot's prices. Neither
  // Coze nor Ark's bots take a model per turn (a bot answers with the model it is configured
  // with), so it is checked here and not sent (docs/providers.md).
  if (model !== null) requireAllowed(auth, [bot, { id: model }], `bot '${bot.id}' with model '${model}'`, 400);
  const requestTokens = countMessageTokens(textMessages(request.messages));
  if (requestTokens > caps.context_window) {
    throw new ApiError(400, 'context_length_exceeded', `the messages have about ${requestTokens} tokens; ${bot.id} accepts ${caps.context_window}`, { param: 'messages' });
  }
  // A conversation id names the provider's conversation, or the gateway's own where the provider keeps none.
  const continued = ext.conversation_id ? conversationIds(deps).fromClient(auth.accountId, ext.conversation_id) : null;
  const held = adapter.keepsConversations && continued !== null ? providerConversation(bot, continued) : null;
  if (held !== null && !deps.upstreams.hasChannel(held.channel)) {
    // The provider account that keeps the conversation is no longer configured (its channel was
    // deleted or left out of CHANNELS): no other one knows it.
    throw new ApiError(400, 'conversation_not_found', `conversation ${ext.conversation_id} can no longer be continued: the provider account that keeps it is no longer configured`, {
      param: 'extension_options.conversation_id',
    });
  }
  const keptConversation = adapter.keepsConversations ? null : (continued ?? newId('conv'));
  const kept = keptConversation !== null && continued !== null ? await keptConversations(deps).recentTurns(auth.accountId, keptConversation, deps.clock()) : [];
  const earlier = turnsWithinWindow(kept, requestTokens, caps).flatMap((t): BotChatMessage[] => [...t.messages, { role: 'assistant', content: t.answer }]);
  // What the provider reads: the earlier turns it is sent count towards the reservation too.
  const promptTokens = countMessageTokens([...earlier, ...textMessages(request.messages)]);
  const cards = pro && ext.cards !== false;
  const ask: BotChatAsk = {
    bot: caps.upstream_model ?? bot.id,
    catalogModel: bot.id,
    // Every account's users share the gateway's provider account: keep them apart there.
    user: ext.user_id ? `${auth.accountId}/${ext.user_id}` : auth.accountId,
    conversationId: held?.id ?? null,
    messages: [...earlier, ...request.messages.map(botMessage)],
    maxOutputTokens: caps.max_output_tokens,
    cards,
  };
  return { bot, adapter, ask, followUps: pro && ext.follow_ups !== false, cards, keptConversation, channel: held?.channel, promptTokens, estimate: tokenCharge(botPricing(bot), promptTokens, caps.max_output_tokens), tokens: promptTokens + caps.max_output_tokens };
}

/**
 * The most recent kept turns that fit the bot's context window beside the new messages and the
 * output reserved for: the oldest are dropped first, so the provider is never sent more than its
 * window holds. A turn's cost is its messages' and answer's tokens (countMessageTokens adds per
 * message, plus one reply priming, counted once in `requestTokens`).
 */
function turnsWithinWindow(turns: readonly KeptTurn[], requestTokens: number, caps: ReturnType<typeof botCapabilities>): KeptTurn[] {
  const priming = countMessageTokens([]);
  const costs = turns.map((t) => countMessageTokens([...t.messages, { role: 'assistant', content: t.answer }]) - priming);
  let room = caps.context_window - caps.max_output_tokens - requestTokens;
  let first = turns.length;
  while (first > 0 && costs[first - 1]! <= room) room -= costs[--first]!;
  return turns.slice(first);
}

/** The media kind a bot is handed for each media part of a message: the one place the parts map to kinds. */
const MEDIA_KINDS: Readonly<Record<Exclude<ContentPart['type'], 'text'>, BotMediaKind>> = { image_url: 'image', file_url: 'file', audio_url: 'audio' };

/** A message's role as a bot takes it: system, assistant, or else the user's (a tool's or developer's message included). */
function botRole(message: WebQaMessage): BotChatMessage['role'] {
  return message.role === 'system' || message.role === 'assistant' ? message.role : 'user';
}

function botMessage(message: WebQaMessage): BotChatMessage {
  const role = botRole(message);
  if (typeof message.content === 'string') return { role, content: message.content };
  return {
    role,
    content: message.content.map((part) => (part.type === 'text' ? { type: 'text', text: part.text } : { type: MEDIA_KINDS[part.type], url: mediaUrlOf(part) })),
  };
}

function textMessages(messages: readonly WebQaMessage[]): { role: string; content: string }[] {
  return messages.map((m) => ({ role: m.role, content: messageText(m) }));
}

/**
 * Streamed: `chat.completion.chunk`s with the answer's deltas, a `finish_reason: "stop"` chunk, then
 * one chunk with `choices: []` carrying `conversation_id`, `follow_ups`, `cards` and `usage`, then
 * `data: [DONE]`. A failure mid-stream charges what was delivered and ends with `data: {"error": …}`.
 */
async function streamTurn(deps: WebQaDeps, ctx: GatewayContext, request: WebQaRequest, plan: Plan, charge: RequestCharge): Promise<void> {
  const upstreamAbort = new AbortController();
  // Opened first: a refusal (4xx/5xx) is still a plain JSON error answer, and failed over to the
  // bot's next channel while nothing reached the client.
  const { value: events, channel } = await routedCall(deps, plan.bot, charge, (ch) => plan.adapter.stream(ch, plan.ask, upstreamAbort.signal), plan.channel);
  const sse = new SseResponse(ctx, deps.config.ssePingMs);
  sse.clientGone.addEventListener('abort', () => upstreamAbort.abort());
  const base = { id: '', object: 'chat.completion.chunk', created: Math.floor(deps.clock().getTime() / 1000), model: plan.bot.id, bot_id: plan.bot.id };
  // include_usage: every chunk carries `usage`, null until the last one (as chat streams do).
  const usageSlot = request.stream_options?.include_usage === true ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...usageSlot });
  let delivered = '';
  let started = false;
  let conversationId: string | null = clientConversationId(deps, ctx, plan, null, channel);
  const followUps: string[] = [];
  const cards: Readonly<Record<string, unknown>>[] = [];
  let usage: Usage | null = null;
  const start = async (): Promise<void> => {
    if (started) return;
    started = true;
    await sse.data(chunk({ role: 'assistant', content: '' }, null));
  };
  try {
    let completed = false;
    for await (const event of events) {
      switch (event.type) {
        case 'started':
          base.id = event.chatId;
          conversationId = clientConversationId(deps, ctx, plan, event.conversationId, channel);
          await start();
          break;
        case 'text':
          await start();
          delivered += event.text;
          await sse.data(chunk({ content: event.text }, null));
          break;
        case 'follow_up':
          if (plan.followUps) followUps.push(event.text);
          break;
        case 'card':
          if (plan.cards) cards.push(event.card);
          break;
        case 'completed':
          completed = true;
          usage = reportedUsage(ctx, plan, channel, event.usage);
          break;
      }
    }
    if (!completed) throw new UpstreamError(502, 'the agent stream ended before the chat completed', 'upstream_incomplete', 'protocol');
    usage ??= counted(plan.promptTokens, delivered, followUps);
    await settle(charge, plan.bot, usage);
    await keepTurn(deps, ctx, request, plan, delivered);
    await start();
    await sse.data(chunk({}, 'stop'));
    await sse.data({ ...base, choices: [], conversation_id: conversationId, follow_ups: followUps, cards, usage });
    await sse.data('[DONE]');
  } catch (err) {
    await settle(charge, plan.bot, counted(plan.promptTokens, delivered, []), isAbort(err) ? 'client_disconnected' : 'upstream_failed');
    if (!isAbort(err)) {
      ctx.state.logger.warn({ err }, 'web Q&A stream interrupted');
      const code = err instanceof UpstreamError ? (err.code ?? 'upstream_error') : 'upstream_error';
      const message = err instanceof UpstreamError ? `upstream: ${err.message}` : 'the agent stream broke off';
      await sse.data({ error: { message, type: 'upstream_error', param: null, code } });
    }
  } finally {
    sse.end();
  }
}

/** The usage the provider reported, as the answer's; a fallback its adapter had to read it by is logged. */
function reportedUsage(ctx: GatewayContext, plan: Plan, channel: string, usage: BotChatUsage | null): Usage | null {
  if (usage?.warning) ctx.state.logger.warn({ channel, bot: plan.bot.id, warning: usage.warning }, 'web Q&A usage read from a fallback of the provider\'s report');
  if (!usage) return null;
  return { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens };
}

/** When the agent reports no usage: the gateway's own count of what it delivered, never zero. */
function counted(promptTokens: number, answer: string, followUps: readonly string[]): Usage {
  const completion = countTokens(answer) + followUps.reduce((n, f) => n + countTokens(f), 0);
  return { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
}

function settle(charge: RequestCharge, bot: ModelEntry, usage: Usage, interrupted?: string): Promise<void> {
  return charge.settle(pricingOf(tokenLine(botPricing(bot), usage.prompt_tokens, usage.completion_tokens)), {
    model: bot.id,
    ...usage,
    ...(interrupted ? { interrupted } : {}),
  });
}
