import type { ModelEntry } from '../billing/catalog';
import { chatCapabilities, chatPricing } from './model-type';
import { pricingOf, tokenLine } from '../billing/money';
import type { RequestCharge } from '../billing/request-charge';
import { countResponsesInputTokens, countTokens, responsesUsageObject } from '../billing/tokens';
import { readJson } from '../http/body';
import { authOf, type GatewayContext } from '../http/context';
import { resolveModel } from '../http/models-access';
import { isAbort, streamedError, UpstreamError } from '../http/upstream-errors';
import type { Channel } from '../upstreams/channel';
import { Delivery, metered, openClientStream } from '../billing/metered';
import { parseResponsesRequest, type ResponsesRequest } from './schemas';
import type { ChatDeps } from './chat-completions';
import { planTokens, type TokenPlan } from './token-plan';
import { DeliveredOutput } from './delivered-output';

interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details?: Record<string, unknown> | null;
  output_tokens: number;
  output_tokens_details?: Record<string, unknown> | null;
  total_tokens: number;
  [more: string]: unknown;
}

interface ResponseObject {
  id: string;
  object: string;
  status: string;
  model: string;
  output: { type: string; content?: { type: string; text?: string }[] }[];
  usage?: ResponsesUsage | null;
  [more: string]: unknown;
}

interface StreamEvent {
  type: string;
  sequence_number: number;
  response?: ResponseObject;
  delta?: string;
  output_index?: number;
  content_index?: number;
  [more: string]: unknown;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

function upstreamBody(model: ModelEntry, request: ResponsesRequest, maxOutput: number): Record<string, unknown> {
  return { ...request, model: chatCapabilities(model).upstream_model ?? model.id, max_output_tokens: maxOutput };
}

function outputText(response: ResponseObject): string {
  return response.output.flatMap((item) => (item.content ?? []).map((part) => part.text ?? '')).join('');
}

/**
 * A usage as the client gets it: with every detail OpenAI's ResponseUsage requires, those the
 * provider did not report as 0 (a provider that predates `cache_write_tokens` wrote none), the
 * ones it reported as it reported them.
 */
function completeUsage(usage: ResponsesUsage): ResponsesUsage {
  return {
    ...usage,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0, ...usage.input_tokens_details },
    output_tokens_details: { reasoning_tokens: 0, ...usage.output_tokens_details },
  };
}

/** When an upstream reports no usage: the gateway's own count of what it delivered, never zero. */
function counted(model: ModelEntry, inputTokens: number, delivered: string): ResponsesUsage {
  return completeUsage({ ...responsesUsageObject(inputTokens, countTokens(delivered, model.tokenizer)) });
}

/**
 * The `error` of a response the gateway failed: ResponseErrorCode has none of the gateway's
 * codes, so a failure of the provider or its stream is `server_error` (a provider's
 * `rate_limit_exceeded` stays one), and the gateway's code leads the message.
 */
function failedResponseError(code: string, message: string): { code: string; message: string } {
  return { code: code === 'rate_limit_exceeded' ? code : 'server_error', message: `${code}: ${message}` };
}

function settle(charge: RequestCharge, model: ModelEntry, usage: ResponsesUsage, extra: Record<string, unknown> = {}): Promise<void> {
  return charge.settle(pricingOf(tokenLine(chatPricing(model), usage.input_tokens, usage.output_tokens)), {
    model: model.id,
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    ...extra,
  });
}

/**
 * POST /v1/responses, passed to the channel's Responses endpoint. An upstream without that
 * interface answers with its error, which is passed through; the reservation is released.
 */
export async function handleResponses(deps: ChatDeps, ctx: GatewayContext): Promise<void> {
  const request = parseResponsesRequest(await readJson(ctx));
  const auth = authOf(ctx);
  const model = resolveModel(deps.catalog, auth, request.model, ['chat']);
  const count = deps.promptTokens.counter(auth.accountId, model.tokenizer);
  const inputTokens = () => countResponsesInputTokens(request.input, count) + (request.instructions ? count(request.instructions) : 0);
  const p = planTokens(model, {
    maxOutput: request.max_output_tokens === undefined ? undefined : { value: request.max_output_tokens, param: 'max_output_tokens' },
    prompt: { param: 'input', count: inputTokens },
  });
  const channel = deps.upstreams.channel(model.channel);
  await metered(deps, ctx, { model, estimate: p.estimate, early: true }, async (charge) => {
    if (request.stream) return streamResponses(deps, ctx, channel, model, request, p, charge);
    const response = await channel.json<ResponseObject>('POST', '/responses', upstreamBody(model, request, p.maxOutput), charge.signal);
    const usage = response.usage ? completeUsage(response.usage) : counted(model, p.promptTokens, outputText(response));
    await settle(charge, model, usage);
    ctx.body = { ...response, model: model.id, usage };
  });
}

async function streamResponses(
  deps: ChatDeps,
  ctx: GatewayContext,
  channel: Channel,
  model: ModelEntry,
  request: ResponsesRequest,
  p: TokenPlan,
  charge: RequestCharge,
): Promise<void> {
  // The charge's signal watches the client from the start, not from the first byte (see streamChat).
  const upstream = await channel.stream('/responses', { ...upstreamBody(model, request, p.maxOutput), stream: true }, charge.signal);
  const { sse, events } = await openClientStream(charge, ctx, deps.config.ssePingMs, upstream);
  const delivery = new Delivery(charge.signal);
  const output = new DeliveredOutput();
  let sequence = -1;
  let response: ResponseObject | null = null;
  let usage: ResponsesUsage | null = null;
  let terminal = false;
  try {
    for await (const raw of events) {
      const event = JSON.parse(raw.data) as StreamEvent;
      if (event.type === 'error') throw streamedError(event, channel.config.name);
      sequence = event.sequence_number;
      output.observe(event);
      if (event.response) {
        response = { ...event.response, model: model.id };
        event.response = response;
        if (event.response.usage) usage = event.response.usage;
      }
      if (event.type === 'response.output_text.delta') delivery.add(event.delta ?? '');
      if (TERMINAL.has(event.type)) {
        terminal = true;
        delivery.assertWhole();
        // An upstream that reported no usage: the terminal event carries the usage the gateway
        // counted (and settles), so the client always learns what it was charged for.
        usage = usage ? completeUsage(usage) : counted(model, p.promptTokens, delivery.text);
        if (response) {
          response = { ...response, usage };
          event.response = response;
        }
        await settle(charge, model, usage);
        await sse.event(event.type, event);
        break;
      }
      await sse.event(event.type, event);
    }
    if (!terminal) throw new UpstreamError(502, 'the upstream stream ended before the response completed', 'upstream_incomplete', 'protocol');
  } catch (err) {
    await settle(charge, model, counted(model, p.promptTokens, delivery.text), { interrupted: isAbort(err) ? 'client_disconnected' : 'upstream_failed' });
    if (!isAbort(err)) {
      const code = err instanceof UpstreamError ? (err.code ?? 'upstream_error') : 'upstream_error';
      const message = err instanceof UpstreamError ? `upstream: ${err.message}` : 'the upstream stream broke off';
      ctx.state.logger.warn({ err }, 'responses stream interrupted');
      await sse.event('error', { type: 'error', code, message, param: null, sequence_number: ++sequence });
      if (response) {
        await sse.event('response.failed', {
          type: 'response.failed',
          sequence_number: ++sequence,
          response: { ...response, status: 'failed', error: failedResponseError(code, message), output: output.output(), usage: counted(model, p.promptTokens, delivery.text) },
        });
      }
    }
  } finally {
    sse.end();
  }
}
