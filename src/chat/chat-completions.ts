import type { ModelEntry, Catalog } from '../billing/catalog';
import { chatCapabilities, chatPricing, chatTokenLine } from './model-type';
import { pricingOf } from '../billing/money';
import type { RequestCharge } from '../billing/request-charge';
import { countChatPromptTokens, countTokens, type PartTokens, type TextTokenCounter } from '../billing/tokens';
import type { PromptTokenMemo } from '../billing/prompt-token-memo';
import { readJson } from '../http/body';
import { authOf, type GatewayContext } from '../http/context';
import { resolveModel } from '../http/models-access';
import { isAbort, streamedError, UpstreamError } from '../http/upstream-errors';
import { chatCompletion, chatCompletionStream } from '../upstreams/openai/relay';
import { Delivery, metered, openClientStream, routedCall, type MeteringDeps, type RoutingDeps } from '../billing/metered';
import { CHAT_REQUEST_FIELDS, parseChatRequest, type ChatRequest } from './schemas';
import { checkChatFeatures, jsonTokens } from './request-features';
import { deliveredText, withClientFinishReasons, type ChatChoice, type ChatOutput } from './chat-answers';
import { plannedTokens, planTokens, type TokenAsk, type TokenPlan } from './token-plan';
import { withChanges } from '../domain/with-changes';
import type { Config } from '../config';
import type { Upstreams } from '../upstreams/registry';

/** What the chat endpoints (chat completions, Responses) use. */
export type ChatDeps = MeteringDeps & RoutingDeps & {
  readonly catalog: Catalog;
  /** The chat feature's memory of the prompt texts it counted, per account. */
  readonly promptTokens: PromptTokenMemo;
  readonly upstreams: Pick<Upstreams, 'channel' | 'hasChannel'>;
  readonly config: Pick<Config, 'ssePingMs'>;
};

interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Relayed as the provider sent them; cached tokens are priced at the cached price. */
  prompt_tokens_details?: { cached_tokens?: number; [more: string]: unknown };
  /** Relayed as the provider sent them; reasoning tokens are already in `completion_tokens`. */
  completion_tokens_details?: { reasoning_tokens?: number; [more: string]: unknown };
}

interface ChatCompletion {
  id: string;
  object: string;
  model: string;
  choices: readonly (ChatChoice & { message: ChatOutput })[];
  usage?: ChatUsage;
}

interface ChatChunk {
  id: string;
  object: string;
  created?: number;
  model: string;
  choices: readonly (ChatChoice & { delta: ChatOutput })[];
  usage?: ChatUsage | null;
  /** Set, instead of the rest, on the item a provider sends when its stream fails. */
  error?: unknown;
}

/** The output limit a chat request sets: `max_completion_tokens`, else the older `max_tokens`. */
function outputLimit(request: ChatRequest): TokenAsk['maxOutput'] {
  if (request.max_completion_tokens !== undefined) return { value: request.max_completion_tokens, param: 'max_completion_tokens' };
  return request.max_tokens === undefined ? undefined : { value: request.max_tokens, param: 'max_tokens' };
}

/**
 * The body sent upstream: the client's request under the provider's model name, usage always asked
 * for, the client's `stream_options` left out (undefined: JSON has no text for it). The output
 * limit planned goes as `max_tokens`, except to a client that set `max_completion_tokens`: that is
 * forwarded as sent, never renamed (reasoning models refuse `max_tokens`), and its `max_tokens`
 * left out (the plan took the newer field); and except to a reasoning model (the catalog's
 * `reasoning`) asked with no limit at all, which gets the planned limit as `max_completion_tokens`
 * for the same reason. A copy by withChanges, not a rest and a spread literal, which gave every
 * request's body a hidden class of its own (src/domain/with-changes.ts).
 */
function upstreamBody(model: ModelEntry, request: ChatRequest, maxTokens: number, stream: boolean): ChatRequest {
  const unlimited = request.max_completion_tokens === undefined && request.max_tokens === undefined;
  const completionLimit = request.max_completion_tokens ?? (unlimited && chatCapabilities(model).reasoning === true ? maxTokens : undefined);
  return withChanges(request, {
    model: chatCapabilities(model).upstream_model ?? model.id,
    max_tokens: completionLimit === undefined ? maxTokens : undefined,
    stream,
    stream_options: stream ? { include_usage: true } : undefined,
    max_completion_tokens: completionLimit,
  });
}

const NO_TOOLS: readonly unknown[] = [];
const NO_PART_TOKENS: PartTokens = {};

/**
 * The whole prompt a chat request gives the model: its messages with their parts and calls and its
 * tool (and legacy function) definitions (countChatPromptTokens, the rule the simulator reports
 * by), and a structured output's JSON schema, which the provider reads as prompt too.
 */
function chatPromptTokens(request: ChatRequest, count: TextTokenCounter, parts: PartTokens): number {
  const tools = request.tools && request.functions ? [...request.tools, ...request.functions] : (request.tools ?? request.functions ?? NO_TOOLS);
  return countChatPromptTokens(request.messages, tools, parts, count) + jsonTokens(request.response_format?.json_schema, count);
}

export async function handleChatCompletion(deps: ChatDeps, ctx: GatewayContext): Promise<void> {
  const request = parseChatRequest(await readJson(ctx));
  const auth = authOf(ctx);
  const model = resolveModel(deps.catalog, auth, request.model, ['chat']);
  const caps = chatCapabilities(model);
  checkChatFeatures(model, request, CHAT_REQUEST_FIELDS);
  const count = deps.promptTokens.counter(auth.accountId, model.tokenizer);
  const plan = planTokens(model, {
    maxOutput: outputLimit(request),
    choices: request.n,
    prompt: { param: 'messages', count: () => chatPromptTokens(request, count, caps.part_allowances ?? NO_PART_TOKENS) },
  });
  await metered(deps, ctx, { model, estimate: plan.estimate, tokens: plannedTokens(plan, request.n), early: true, router: deps.router }, (charge) =>
    request.stream ? streamChat(deps, ctx, model, request, plan, charge) : completeChat(deps, ctx, model, request, plan, charge),
  );
}

async function completeChat(
  deps: ChatDeps,
  ctx: GatewayContext,
  model: ModelEntry,
  request: ChatRequest,
  plan: TokenPlan,
  charge: RequestCharge,
): Promise<void> {
  const body = upstreamBody(model, request, plan.maxOutput, false);
  const { value: completion } = await routedCall(deps, model, charge, (channel) => chatCompletion<ChatCompletion>(channel, body, charge.signal));
  const usage = completion.usage ?? countedUsage(model, plan.promptTokens, completion.choices.map((c) => deliveredText(c.message)).join(''));
  await settleChat(charge, model, usage);
  ctx.body = { ...completion, choices: withClientFinishReasons(completion.choices, request), model: model.id, usage };
}

/**
 * The chat price of `usage`, recorded with the usage behind it: the input the provider served
 * from its cache at the cached price (chatTokenLine), every completion token (reasoning included)
 * at the output price. The record keeps the cached and reasoning tokens when there were any, and
 * is otherwise what it always was.
 */
function settleChat(charge: RequestCharge, model: ModelEntry, usage: ChatUsage, extra: Record<string, unknown> = {}): Promise<void> {
  const { prompt_tokens_details: promptDetails, completion_tokens_details: completionDetails, ...counts } = usage;
  const cached = promptDetails?.cached_tokens ?? 0;
  const reasoning = completionDetails?.reasoning_tokens ?? 0;
  const line = chatTokenLine(chatPricing(model), { input: usage.prompt_tokens, cachedInput: cached, output: usage.completion_tokens });
  return charge.settle(pricingOf(line), {
    model: model.id,
    ...counts,
    ...(cached > 0 ? { cached_input_tokens: cached } : {}),
    ...(reasoning > 0 ? { reasoning_tokens: reasoning } : {}),
    ...extra,
  });
}

/** When an upstream reports no usage: the gateway's own count of what it delivered, never zero. */
function countedUsage(model: ModelEntry, promptTokens: number, delivered: string): ChatUsage {
  const completion = countTokens(delivered, model.tokenizer);
  return { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
}

async function streamChat(
  deps: ChatDeps,
  ctx: GatewayContext,
  model: ModelEntry,
  request: ChatRequest,
  plan: TokenPlan,
  charge: RequestCharge,
): Promise<void> {
  // The charge's signal watches the client from the start, not from the first byte: one that
  // leaves while the upstream is still being asked aborts that call too (and the frame releases
  // the reservation); one that leaves mid-stream aborts the rest of it (and what was delivered is
  // settled below). Opening the upstream stream first: a refusal (4xx/5xx) still becomes a plain
  // JSON error answer, and a refusal, a 5xx, a 429 or no connection is failed over to the model's
  // next channel (routedCall) while nothing has reached the client; once the stream is open here,
  // a break is never failed over (the client has had part of an answer).
  const body = upstreamBody(model, request, plan.maxOutput, true);
  const { value: upstream, channel } = await routedCall(deps, model, charge, (relay) => chatCompletionStream(relay, body, charge.signal));
  const { sse, events } = await openClientStream(charge, ctx, deps.config.ssePingMs, upstream);
  const includeUsage = request.stream_options?.include_usage === true;
  const delivery = new Delivery(charge.signal);
  let usage: ChatUsage | null = null;
  let lastChunk: ChatChunk | null = null;
  try {
    for await (const event of events) {
      if (event.data === '[DONE]') break;
      const chunk = JSON.parse(event.data) as ChatChunk;
      if (chunk.error !== undefined) throw streamedError(chunk.error, channel);
      lastChunk = chunk;
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) delivery.add(deliveredText(choice.delta));
      if (chunk.choices.length === 0 && !includeUsage) continue;
      const { usage: _usage, ...rest } = chunk;
      // Replaced only when a finish reason changes, so that a chunk is relayed as cheaply as ever.
      const choices = withClientFinishReasons(chunk.choices, request);
      if (choices !== chunk.choices) rest.choices = choices;
      await sse.data({ ...rest, model: model.id, ...(includeUsage ? { usage: chunk.usage ?? null } : {}) });
    }
    delivery.assertWhole();
    const reported = usage !== null;
    usage ??= countedUsage(model, plan.promptTokens, delivery.text);
    await settleChat(charge, model, usage);
    // An upstream that reported no usage sent no usage chunk: the client that asked for one gets
    // the usage just settled, in the chunk shape the SDK expects (same id, no choices).
    if (includeUsage && !reported) {
      await sse.data({
        id: lastChunk?.id ?? `chatcmpl-${ctx.state.requestId}`,
        object: 'chat.completion.chunk',
        created: lastChunk?.created ?? Math.floor(Date.now() / 1000),
        model: model.id,
        choices: [],
        usage,
      });
    }
    await sse.data('[DONE]');
  } catch (err) {
    // The client left, or the upstream failed or stalled mid-stream: charge what was delivered.
    await settleChat(charge, model, countedUsage(model, plan.promptTokens, delivery.text), { interrupted: isAbort(err) ? 'client_disconnected' : 'upstream_failed' });
    if (!isAbort(err)) {
      const message = err instanceof UpstreamError ? `upstream: ${err.message}` : 'the upstream stream broke off';
      ctx.state.logger.warn({ err, lastChunkId: lastChunk?.id }, 'chat stream interrupted');
      await sse.data({ error: { message, type: 'upstream_error', param: null, code: err instanceof UpstreamError ? (err.code ?? 'upstream_error') : 'upstream_error' } });
    }
  } finally {
    sse.end();
  }
}
