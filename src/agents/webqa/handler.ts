import type { AuthenticatedKey } from '../../accounts/service';
import type { ModelEntry, Catalog } from '../../billing/catalog';
import { pricingOf, tokenCharge, tokenLine } from '../../billing/money';
import type { RequestCharge } from '../../billing/request-charge';
import { countMessageTokens, countTokens } from '../../billing/tokens';
import { metered, type MeteringDeps } from '../../billing/metered';
import { readJson } from '../../http/body';
import { authOf, type GatewayContext } from '../../http/context';
import { ApiError } from '../../http/errors';
import { clientUrlProblem } from '../../http/urls';
import { SseResponse } from '../../http/sse';
import { isAbort, UpstreamError } from '../../http/upstream-errors';
import type { SseEvent } from '../../upstreams/sse';
import { requireAllowed } from '../access';
import { botCapabilities, botPricing } from '../model-types';
import { ConversationIds } from './conversation-ids';
import { parseCard, textMessages, upstreamBody, type UpstreamBotChat, type UpstreamBotMessage, type UpstreamBotUsage } from './bot-protocol';
import { mediaParts, parseWebQaRequest, type WebQaRequest } from './schemas';
import type { Config } from '../../config';
import type { Clock } from '../../feature-types';
import type { UrlSigner } from '../../files/signed-urls';
import type { RateLimiter } from '../../http/rate-limit';
import type { Upstreams } from '../../upstreams/registry';

/** What the web Q&A agent uses. */
export type WebQaDeps = MeteringDeps & {
  readonly catalog: Catalog;
  readonly upstreams: Pick<Upstreams, 'channel'>;
  readonly rateLimiter: Pick<RateLimiter, 'waitTurn'>;
  /** Signs the conversation ids handed to clients. */
  readonly signer: UrlSigner;
  readonly clock: Clock;
  readonly config: Pick<Config, 'webQaRateWaitMs' | 'ssePingMs' | 'fileUrlAllowPrivateTargets'>;
};

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

interface Plan {
  readonly bot: ModelEntry;
  readonly body: Record<string, unknown>;
  readonly promptTokens: number;
  readonly estimate: number;
}

const conversationIds = (deps: WebQaDeps): ConversationIds => new ConversationIds(deps.signer);

/**
 * POST /v1/agent/chat/completions: a web Q&A turn proxied to the upstream agent channel, billed by
 * the tokens the agent reports, reserved and settled like chat. The answer is an OpenAI chat
 * completion plus the agent's extras: `bot_id`, `conversation_id`, `follow_ups`, `cards`.
 */
export async function handleWebQa(deps: WebQaDeps, ctx: GatewayContext): Promise<void> {
  const request = parseWebQaRequest(await readJson(ctx));
  const plan = planTurn(deps, ctx, request);
  await withoutTooManyRequests(() => turn(deps, ctx, request, plan));
}

/**
 * The spec lists no 429 for web Q&A: a key over its rate waits up to WEBQA_RATE_WAIT_MS for its
 * turn (then 502 `gateway_busy`), and the upstream's own rate limit is a 502 `upstream_rate_limited`.
 */
async function withoutTooManyRequests(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 429) throw err;
    throw new ApiError(502, err.code, err.message, { type: 'upstream_error', headers: err.options.headers });
  }
}

async function turn(deps: WebQaDeps, ctx: GatewayContext, request: WebQaRequest, plan: Plan): Promise<void> {
  const channel = deps.upstreams.channel(plan.bot.channel);
  const admit = (auth: AuthenticatedKey) => deps.rateLimiter.waitTurn(auth.keyId, deps.config.webQaRateWaitMs, auth.rateLimitPerMinute);
  await metered(deps, ctx, { model: plan.bot, estimate: plan.estimate, admit }, async (charge) => {
    if (request.stream) return streamTurn(deps, ctx, request, plan, charge);
    const chat = await channel.json<UpstreamBotChat>('POST', '/bots/chat', { ...plan.body, stream: false }, charge.signal);
    if (chat.status !== 'completed') throw new UpstreamError(502, `the agent ended the chat as ${chat.status}: ${chat.last_error?.msg ?? 'no reason given'}`, 'upstream_error');
    const messages = chat.messages ?? [];
    const answer = messages.filter((m) => m.type === 'answer').map((m) => m.content).join('');
    const followUps = messages.filter((m) => m.type === 'follow_up').map((m) => m.content);
    const usage = toUsage(chat.usage) ?? counted(plan.promptTokens, answer, followUps);
    await settle(charge, plan.bot, usage);
    ctx.body = {
      id: chat.id,
      object: 'chat.completion',
      created: Math.floor(deps.clock().getTime() / 1000),
      model: plan.bot.id,
      bot_id: plan.bot.id,
      conversation_id: conversationIds(deps).forClient(authOf(ctx).accountId, chat.conversation_id),
      choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
      follow_ups: followUps,
      cards: cardsOf(messages),
      usage,
    };
  });
}

/**
 * The bot (a catalog model of type `bot`), its access, the Pro-only features, and the estimate:
 * the prompt's tokens plus the bot's maximum output, at the bot's prices.
 */
function planTurn(deps: WebQaDeps, ctx: GatewayContext, request: WebQaRequest): Plan {
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
  // a restricted key must allow it too, though the turn is billed at the bot's prices.
  if (model !== null) requireAllowed(auth, [bot, { id: model }], `bot '${bot.id}' with model '${model}'`, 400);
  const promptTokens = countMessageTokens(textMessages(request));
  if (promptTokens > caps.context_window) {
    throw new ApiError(400, 'context_length_exceeded', `the messages have about ${promptTokens} tokens; ${bot.id} accepts ${caps.context_window}`, { param: 'messages' });
  }
  const body = upstreamBody(bot, request, {
    accountId: auth.accountId,
    conversationId: ext.conversation_id ? conversationIds(deps).fromClient(auth.accountId, ext.conversation_id) : null,
    model,
    followUps: pro && ext.follow_ups !== false,
    cards: pro && ext.cards !== false,
    stream: request.stream === true,
  });
  return { bot, body, promptTokens, estimate: tokenCharge(botPricing(bot), promptTokens, caps.max_output_tokens) };
}

/**
 * Streamed: `chat.completion.chunk`s with the answer's deltas, a `finish_reason: "stop"` chunk, then
 * one chunk with `choices: []` carrying `conversation_id`, `follow_ups`, `cards` and `usage`, then
 * `data: [DONE]`. A failure mid-stream charges what was delivered and ends with `data: {"error": …}`.
 */
async function streamTurn(deps: WebQaDeps, ctx: GatewayContext, request: WebQaRequest, plan: Plan, charge: RequestCharge): Promise<void> {
  const upstreamAbort = new AbortController();
  // Opened first: a refusal (4xx/5xx) is still a plain JSON error answer.
  const events = await deps.upstreams.channel(plan.bot.channel).stream('/bots/chat', { ...plan.body, stream: true }, upstreamAbort.signal);
  const sse = new SseResponse(ctx, deps.config.ssePingMs);
  sse.clientGone.addEventListener('abort', () => upstreamAbort.abort());
  const base = { id: '', object: 'chat.completion.chunk', created: Math.floor(deps.clock().getTime() / 1000), model: plan.bot.id, bot_id: plan.bot.id };
  // include_usage: every chunk carries `usage`, null until the last one (as chat streams do).
  const usageSlot = request.stream_options?.include_usage === true ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...usageSlot });
  let delivered = '';
  let conversationId: string | null = null;
  const extras: UpstreamBotMessage[] = [];
  let usage: Usage | null = null;
  try {
    let completed = false;
    for await (const event of events) {
      const step = readEvent(event);
      if (step.kind === 'done') break;
      if (step.kind === 'created') {
        base.id = step.id;
        conversationId = conversationIds(deps).forClient(authOf(ctx).accountId, step.conversationId);
        await sse.data(chunk({ role: 'assistant', content: '' }, null));
      } else if (step.kind === 'delta') {
        delivered += step.content;
        await sse.data(chunk({ content: step.content }, null));
      } else if (step.kind === 'message') {
        // An agent that sends the answer only whole (no deltas) still reaches the client.
        if (step.message.type === 'answer' && delivered === '' && step.message.content !== '') {
          delivered = step.message.content;
          await sse.data(chunk({ content: delivered }, null));
        } else if (step.message.type !== 'answer') {
          extras.push(step.message);
        }
      } else if (step.kind === 'completed') {
        completed = true;
        usage = toUsage(step.usage);
      }
    }
    if (!completed) throw new UpstreamError(502, 'the agent stream ended before the chat completed', 'upstream_incomplete', 'protocol');
    const followUps = extras.filter((m) => m.type === 'follow_up').map((m) => m.content);
    usage ??= counted(plan.promptTokens, delivered, followUps);
    await settle(charge, plan.bot, usage);
    await sse.data(chunk({}, 'stop'));
    await sse.data({ ...base, choices: [], conversation_id: conversationId, follow_ups: followUps, cards: cardsOf(extras), usage });
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

type Step =
  | { kind: 'created'; id: string; conversationId: string }
  | { kind: 'delta'; content: string }
  | { kind: 'message'; message: UpstreamBotMessage }
  | { kind: 'completed'; usage: UpstreamBotUsage | undefined }
  | { kind: 'done' }
  | { kind: 'other' };

function readEvent(event: SseEvent): Step {
  if (event.event === 'done' || event.data === '[DONE]') return { kind: 'done' };
  const data = JSON.parse(event.data) as Record<string, unknown>;
  switch (event.event) {
    case 'conversation.chat.created':
      return { kind: 'created', id: String(data['id'] ?? ''), conversationId: String(data['conversation_id'] ?? '') };
    case 'conversation.message.delta':
      return data['type'] === 'answer' && typeof data['content'] === 'string' ? { kind: 'delta', content: data['content'] } : { kind: 'other' };
    case 'conversation.message.completed':
      return { kind: 'message', message: { type: String(data['type'] ?? ''), content: typeof data['content'] === 'string' ? data['content'] : '' } };
    case 'conversation.chat.completed':
      return { kind: 'completed', usage: data['usage'] as UpstreamBotUsage | undefined };
    case 'conversation.chat.failed':
    case 'error': {
      const last = (data['last_error'] ?? data) as { msg?: unknown; message?: unknown };
      throw new UpstreamError(502, `the agent failed: ${String(last.msg ?? last.message ?? 'no reason given')}`, 'upstream_error');
    }
    default:
      return { kind: 'other' };
  }
}

function cardsOf(messages: readonly UpstreamBotMessage[]): Record<string, unknown>[] {
  return messages.filter((m) => m.type === 'card').map((m) => parseCard(m.content));
}

function toUsage(usage: UpstreamBotUsage | undefined): Usage | null {
  if (!usage || !Number.isSafeInteger(usage.input_count) || !Number.isSafeInteger(usage.output_count)) return null;
  return { prompt_tokens: usage.input_count, completion_tokens: usage.output_count, total_tokens: usage.input_count + usage.output_count };
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
