import type { ModelEntry } from '../billing/catalog';
import { chatCapabilities } from './model-type';
import type { RequestCharge } from '../billing/request-charge';
import { countTokens, responsesUsageObject } from '../billing/tokens';
import { readJson } from '../http/body';
import { authOf, type GatewayContext } from '../http/context';
import { resolveModel } from '../http/models-access';
import { isAbort, streamedError, UpstreamError } from '../http/upstream-errors';
import { createResponse, createResponseStream } from '../upstreams/openai/relay';
import { Delivery, metered, openClientStream, routedCall, unlessPinned } from '../billing/metered';
import { parseResponsesRequest, type ResponsesRequest } from './schemas';
import type { ChatDeps } from './chat-completions';
import { plannedTokens, planTokens, type TokenPlan } from './token-plan';
import { DeliveredOutput } from './delivered-output';
import { ApiError } from '../http/errors';
import type { Clock } from '../feature-types';
import { askOfResponses } from './responses-request';
import { responsesSettlement, type ResponsesUsage } from './responses-billing';
import type { StoredResponses } from './stored-responses/service';

/** What the Responses endpoint uses beside the chat endpoints' dependencies: the record of stored Responses. */
export type ResponsesDeps = ChatDeps & { readonly stored: StoredResponses; readonly clock: Clock };

interface ResponseObject {
  id: string;
  object: string;
  status: string;
  model: string;
  output: { type: string; content?: { type: string; text?: string }[]; name?: string; arguments?: string }[];
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
  item?: unknown;
  [more: string]: unknown;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

function upstreamBody(model: ModelEntry, request: ResponsesRequest, maxOutput: number): Record<string, unknown> {
  return { ...request, model: chatCapabilities(model).upstream_model ?? model.id, max_output_tokens: maxOutput };
}

/** The text a Response delivered: its message text and the names and arguments of the function calls it made. */
function outputText(response: ResponseObject): string {
  return response.output.flatMap((item) => [...(item.content ?? []).map((part) => part.text ?? ''), item.type === 'function_call' ? `${item.name ?? ''}${item.arguments ?? ''}` : '']).join('');
}

/**
 * The events whose `delta` is output the client is charged for when the stream is cut: message
 * text, refusals (as chat counts a refusal), reasoning summaries, and a function call's arguments.
 */
const CHARGED_DELTAS: ReadonlySet<string> = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_summary_text.delta',
  'response.function_call_arguments.delta',
]);

/** The text an event delivers that the client is charged for when the stream is cut: CHARGED_DELTAS, and a function call's name (as chat counts a tool call's). */
function deliveredText(event: StreamEvent): string {
  if (CHARGED_DELTAS.has(event.type)) return event.delta ?? '';
  if (event.type === 'response.output_item.added') {
    const item = event.item as { type?: unknown; name?: unknown } | undefined;
    if (item?.type === 'function_call' && typeof item.name === 'string') return item.name;
  }
  return '';
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

/** Settles the tokens of `usage` and the built-in tool calls among `output`, in one settlement. */
function settle(charge: RequestCharge, model: ModelEntry, usage: ResponsesUsage, output: ResponseObject['output'], extra: Record<string, unknown> = {}): Promise<void> {
  const { pricing, details } = responsesSettlement(model, usage, output);
  return charge.settle(pricing, { ...details, ...extra });
}

/**
 * Records a relayed Response its provider stores (`store` not false), so that the caller's
 * account can read, delete and continue it, with its input plus output tokens as charged (`usage`):
 * the context a continuation carries. The answer is delivered and charged by then: a record that
 * fails is logged, and the Response is one the gateway will not find.
 */
async function remember(deps: ResponsesDeps, ctx: GatewayContext, model: ModelEntry, channel: string, request: ResponsesRequest, responseId: string | undefined, usage: ResponsesUsage): Promise<void> {
  if (request.store === false || responseId === undefined) return;
  const auth = authOf(ctx);
  try {
    const totalTokens = usage.input_tokens + usage.output_tokens;
    const data = { responseId, accountId: auth.accountId, keyId: auth.keyId, model: model.id, channel, at: deps.clock().toISOString(), totalTokens };
    if (!(await deps.stored.record(data, ctx.state.requestId))) ctx.state.logger.warn({ responseId }, 'response id not recordable or already recorded: not stored');
  } catch (err) {
    ctx.state.logger.warn({ err, responseId }, 'the response is answered but not recorded as stored');
  }
}

/**
 * The channel a request goes to and the context it carries: for a `previous_response_id`, the
 * channel that made that response and its input plus output tokens, which the provider bills again
 * as this request's input (only a Response of the caller's account continues; any other id is
 * refused before anything is reserved); else no channel (the router picks among the model's) and no context.
 */
async function continuation(deps: ResponsesDeps, ctx: GatewayContext, request: ResponsesRequest): Promise<{ channel: string | undefined; contextTokens: number }> {
  const previousId = request.previous_response_id;
  if (previousId === undefined) return { channel: undefined, contextTokens: 0 };
  const previous = await deps.stored.find(authOf(ctx).accountId, previousId);
  if (!previous) throw new ApiError(400, 'previous_response_not_found', `Previous response with id '${previousId}' not found`, { param: 'previous_response_id' });
  if (!deps.upstreams.hasChannel(previous.channel)) {
    // Its channel was deleted or left out of CHANNELS: no other provider account holds the response.
    throw new ApiError(400, 'previous_response_not_found', `Previous response with id '${previousId}' can no longer be continued: the provider account that holds it is no longer configured`, {
      param: 'previous_response_id',
    });
  }
  return { channel: previous.channel, contextTokens: previous.totalTokens };
}

/**
 * POST /v1/responses, passed to the channel's Responses endpoint. An upstream without that
 * interface answers with its error, which is passed through; the reservation is released.
 */
export async function handleResponses(deps: ResponsesDeps, ctx: GatewayContext): Promise<void> {
  const request = parseResponsesRequest(await readJson(ctx));
  const auth = authOf(ctx);
  const model = resolveModel(deps.catalog, auth, request.model, ['chat']);
  const count = deps.promptTokens.counter(auth.accountId, model.tokenizer);
  const ask = askOfResponses(model, request, count);
  const { channel: pinned, contextTokens } = await continuation(deps, ctx, request);
  const p = planTokens(model, {
    maxOutput: request.max_output_tokens === undefined ? undefined : { value: request.max_output_tokens, param: 'max_output_tokens' },
    prompt: { param: 'input', count: () => ask.promptTokens() + contextTokens },
  });
  await metered(deps, ctx, { model, estimate: p.estimate + ask.builtInToolReserve, tokens: plannedTokens(p), early: true, ...unlessPinned(deps, pinned) }, async (charge) => {
    if (request.stream) return streamResponses(deps, ctx, pinned, model, request, p, charge);
    const body = upstreamBody(model, request, p.maxOutput);
    const { value: response, channel } = await routedCall(deps, model, charge, (relay) => createResponse<ResponseObject>(relay, body, charge.signal), pinned);
    const usage = response.usage ? completeUsage(response.usage) : counted(model, p.promptTokens, outputText(response));
    await settle(charge, model, usage, response.output);
    await remember(deps, ctx, model, channel, request, response.id, usage);
    ctx.body = { ...response, model: model.id, usage };
  });
}

async function streamResponses(
  deps: ResponsesDeps,
  ctx: GatewayContext,
  /** The channel of a `previous_response_id`; undefined: the router picks. */
  pinned: string | undefined,
  model: ModelEntry,
  request: ResponsesRequest,
  p: TokenPlan,
  charge: RequestCharge,
): Promise<void> {
  // The charge's signal watches the client from the start, not from the first byte; failover only
  // until the stream is open (see streamChat).
  const body = { ...upstreamBody(model, request, p.maxOutput), stream: true };
  const { value: upstream, channel } = await routedCall(deps, model, charge, (relay) => createResponseStream(relay, body, charge.signal), pinned);
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
      if (event.type === 'error') throw streamedError(event, channel);
      sequence = event.sequence_number;
      output.observe(event);
      if (event.response) {
        response = { ...event.response, model: model.id };
        event.response = response;
        if (event.response.usage) usage = event.response.usage;
      }
      delivery.add(deliveredText(event));
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
        await settle(charge, model, usage, response?.output ?? output.output());
        await remember(deps, ctx, model, channel, request, response?.id, usage);
        await sse.event(event.type, event);
        break;
      }
      await sse.event(event.type, event);
    }
    if (!terminal) throw new UpstreamError(502, 'the upstream stream ended before the response completed', 'upstream_incomplete', 'protocol');
  } catch (err) {
    const charged = counted(model, p.promptTokens, delivery.text);
    await settle(charge, model, charged, output.output(), { interrupted: isAbort(err) ? 'client_disconnected' : 'upstream_failed' });
    // The provider made the Response (and keeps it, failed or cut) once it announced it.
    await remember(deps, ctx, model, channel, request, response?.id, charged);
    if (!isAbort(err)) {
      const code = err instanceof UpstreamError ? (err.code ?? 'upstream_error') : 'upstream_error';
      const message = err instanceof UpstreamError ? `upstream: ${err.message}` : 'the upstream stream broke off';
      ctx.state.logger.warn({ err }, 'responses stream interrupted');
      await sse.event('error', { type: 'error', code, message, param: null, sequence_number: ++sequence });
      if (response) {
        await sse.event('response.failed', {
          type: 'response.failed',
          sequence_number: ++sequence,
          response: { ...response, status: 'failed', error: failedResponseError(code, message), output: output.output(), usage: charged },
        });
      }
    }
  } finally {
    sse.end();
  }
}
