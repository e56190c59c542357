/**
 * The simulated Responses API: `POST /v1/responses`, streamed and not, with function calls,
 * built-in tool calls (web search, image generation), structured text, reasoning items and
 * stored responses (`GET`/`DELETE /v1/responses/{id}`, `GET …/input_items`,
 * `previous_response_id`). Steered by `[sim:...]` directives in the last user input item, as chat.
 */
import type { ServerResponse } from 'node:http';
import { parseDirectives, stripDirectives, type SimDirectives } from './directives';
import { HttpError, SseWriter, eventFrame, sendJson, sendNotFound, startEventStream } from './http';
import type { ExtraRoute, SimContext } from './route';
import { ResponseStore, type StoredResponse } from './response-store';
import {
  REFUSAL_TEXT,
  SIM_PART_TOKENS,
  STALL_AFTER_TOKENS,
  TEXT_FORMAT,
  argumentFragments,
  cachedTokens,
  contentText,
  cutAnswer,
  isRecord,
  nowSeconds,
  outputFormatOf,
  planAnswer,
  planToolCalls,
  preamble,
  reasoningTokens,
  requireModel,
  requireObject,
  streamEnd,
  streamErrorMessage,
  structuredText,
  tokenLimit,
  toolCallTokens,
  toolResultAnswer,
  type Answer,
  type OutputFormat,
  type PlannedCall,
  type StreamEnd,
  type ToolChoice,
  type ToolSpec,
} from './answer';
import { countResponsesInputTokens, responsesUsageObject, type ResponsesUsageObject } from '../src/billing/tokens';

/** A 1×1 transparent PNG: the image an `image_generation_call` returns. */
const TINY_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** The Responses routes; ids come from the chat routes' counter, so they are predictable per simulator. */
export function responsesRoutes(nextId: () => number): ExtraRoute[] {
  const store = new ResponseStore();
  return [
    { method: 'POST', path: '/v1/responses', handler: (ctx) => handleResponses(ctx, nextId(), store) },
    { method: 'GET', path: '/v1/responses/:id', handler: (ctx) => sendJson(ctx.res, 200, storedOrThrow(store, ctx.params['id']!).response) },
    { method: 'DELETE', path: '/v1/responses/:id', handler: (ctx) => deleteStored(ctx, store) },
    { method: 'GET', path: '/v1/responses/:id/input_items', handler: (ctx) => listInputItems(ctx, store) },
  ];
}

type BuiltinTool = 'web_search' | 'image_generation';

interface ResponsesRequest {
  readonly model: string;
  /** The input as sent: a string or input items. */
  readonly input: string | readonly unknown[];
  readonly prompt: string;
  /** The output of the last input item when it is a `function_call_output`. */
  readonly toolResult: string | undefined;
  readonly stream: boolean;
  readonly maxOutputTokens: number | undefined;
  readonly tools: readonly ToolSpec[];
  readonly builtins: ReadonlySet<BuiltinTool>;
  readonly toolChoice: ToolChoice;
  readonly parallelToolCalls: boolean;
  readonly format: OutputFormat;
  readonly reasoningRequested: boolean;
  readonly store: boolean;
  readonly previousResponseId: string | undefined;
  /** Request fields the response object echoes back, as the real API does. */
  readonly echo: {
    readonly instructions: string | null;
    readonly max_output_tokens: number | null;
    readonly metadata: Record<string, unknown>;
    readonly temperature: number;
    readonly top_p: number;
    readonly previous_response_id: string | null;
    readonly tools: readonly unknown[];
    readonly tool_choice: unknown;
    readonly parallel_tool_calls: boolean;
    readonly text: object;
    readonly reasoning: { readonly effort: unknown; readonly summary: unknown };
    readonly store: boolean;
  };
}

/** The status of an output item; a response may also have failed. */
type ItemStatus = 'in_progress' | 'completed' | 'incomplete';
type ResponseStatus = ItemStatus | 'failed';

/** One output item the model produces, before it is written in the protocol's shape. */
type PlannedItem =
  | { readonly kind: 'reasoning'; readonly id: string }
  | { readonly kind: 'web_search'; readonly id: string; readonly query: string }
  | { readonly kind: 'image_generation'; readonly id: string }
  | { readonly kind: 'function_call'; readonly id: string; readonly callId: string; readonly call: PlannedCall }
  | { readonly kind: 'message'; readonly id: string; readonly answer: Answer; readonly refusal: boolean };

/** Ids and timestamps one response keeps across its stream events. */
interface ResponseIds {
  readonly id: string;
  readonly seq: number;
  readonly createdAt: number;
}

interface Plan {
  readonly items: readonly PlannedItem[];
  /** The items as the finished response lists them. */
  readonly output: readonly object[];
  readonly usage: ResponsesUsageObject | null;
  /** `incomplete` when the message was cut by max_output_tokens. */
  readonly status: 'completed' | 'incomplete';
  /** The conversation before this response (a previous response's), for the stored context. */
  readonly previousContext: readonly unknown[];
  readonly reasoningTokens: number;
}

async function handleResponses(ctx: SimContext, seq: number, store: ResponseStore): Promise<void> {
  const request = parseResponsesRequest(ctx.body);
  const directives = parseDirectives(request.prompt);
  // An upstream without the interface answers 404 at once, whatever else the prompt asks for.
  if (directives.noResponses) {
    sendNotFound(ctx.req, ctx.res);
    return;
  }
  const previous = request.previousResponseId === undefined ? undefined : store.get(request.previousResponseId);
  if (request.previousResponseId !== undefined && !previous) {
    // What OpenAI answers, as clients report it (see docs/simulator.md).
    throw new HttpError(400, `Previous response with id '${request.previousResponseId}' not found.`, 'previous_response_not_found', 'previous_response_id');
  }
  if (!(await preamble(ctx.res, directives, request.stream))) return;
  const ids: ResponseIds = { id: `resp_sim_${seq}`, seq, createdAt: nowSeconds() };
  const plan = planResponse(request, directives, ids, previous?.context ?? []);
  const keep = (response: object): void => {
    if (request.store) store.put(ids.id, storedOf(request, plan, response, seq));
  };
  if (request.stream) {
    await streamResponse(ctx.res, request, plan, ids, streamEnd(directives), directives.paceMs, keep);
    return;
  }
  const response = responseObject(request, ids, plan.status, plan.output, plan.usage);
  keep(response);
  sendJson(ctx.res, 200, response);
}

function parseResponsesRequest(raw: unknown): ResponsesRequest {
  const body = requireObject(raw);
  const model = requireModel(body);
  const input = body['input'];
  if (typeof input !== 'string' && !Array.isArray(input)) {
    throw new HttpError(400, 'input must be a string or an array of input items', 'missing_required_parameter', 'input');
  }
  const last: unknown = Array.isArray(input) ? input[input.length - 1] : undefined;
  const toolResult = isRecord(last) && last['type'] === 'function_call_output' ? outputText(last['output']) : undefined;
  const maxOutputTokens = tokenLimit(body['max_output_tokens']);
  const tools = Array.isArray(body['tools']) ? body['tools'] : [];
  const text = isRecord(body['text']) ? body['text'] : {};
  const reasoning = isRecord(body['reasoning']) ? body['reasoning'] : undefined;
  const store = body['store'] !== false;
  const previousResponseId = typeof body['previous_response_id'] === 'string' ? body['previous_response_id'] : undefined;
  return {
    model,
    input,
    prompt: typeof input === 'string' ? input : lastUserInput(input),
    toolResult,
    stream: body['stream'] === true,
    maxOutputTokens,
    tools: tools.flatMap((tool) => (isRecord(tool) && tool['type'] === 'function' && typeof tool['name'] === 'string' ? [{ name: tool['name'], parameters: tool['parameters'] }] : [])),
    builtins: new Set(tools.flatMap(builtinOf)),
    toolChoice: toolChoiceOf(body['tool_choice']),
    parallelToolCalls: body['parallel_tool_calls'] !== false,
    format: outputFormatOf(text['format']),
    reasoningRequested: reasoning !== undefined && reasoning['effort'] !== 'none',
    store,
    previousResponseId,
    echo: {
      instructions: typeof body['instructions'] === 'string' ? body['instructions'] : null,
      max_output_tokens: maxOutputTokens ?? null,
      metadata: isRecord(body['metadata']) ? body['metadata'] : {},
      temperature: typeof body['temperature'] === 'number' ? body['temperature'] : 1,
      top_p: typeof body['top_p'] === 'number' ? body['top_p'] : 1,
      previous_response_id: previousResponseId ?? null,
      tools: tools.map(echoTool),
      tool_choice: body['tool_choice'] ?? 'auto',
      parallel_tool_calls: body['parallel_tool_calls'] !== false,
      text: { format: { type: 'text' }, ...text },
      reasoning: { effort: reasoning?.['effort'] ?? null, summary: reasoning?.['summary'] ?? null },
      store,
    },
  };
}

function outputText(output: unknown): string {
  return typeof output === 'string' ? output : contentText(output);
}

function lastUserInput(input: readonly unknown[]): string {
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (isRecord(item) && item['role'] === 'user') return contentText(item['content']);
  }
  return '';
}

function builtinOf(tool: unknown): BuiltinTool[] {
  const type = isRecord(tool) ? tool['type'] : undefined;
  if (typeof type === 'string' && type.startsWith('web_search')) return ['web_search'];
  return type === 'image_generation' ? ['image_generation'] : [];
}

/** A function tool as the Response object lists it (its optional members filled in); others as sent. */
function echoTool(tool: unknown): unknown {
  if (!isRecord(tool) || tool['type'] !== 'function') return tool;
  return { ...tool, description: tool['description'] ?? null, parameters: tool['parameters'] ?? null, strict: tool['strict'] ?? true };
}

/** Responses' `tool_choice`: `none`, `auto`, `required`, or `{type: "function", name}`. */
function toolChoiceOf(choice: unknown): ToolChoice {
  if (choice === 'none' || choice === 'required') return { kind: choice };
  if (isRecord(choice) && choice['type'] === 'function' && typeof choice['name'] === 'string') return { kind: 'named', name: choice['name'] };
  return { kind: 'auto' };
}

/**
 * The output: a reasoning item when there are reasoning tokens; `[sim:web-search=N]` and
 * `[sim:image-generation=N]` calls when the request lists those tools; then, after a function
 * result, text that echoes it; else a refusal, function calls, or the message (JSON for a
 * `text.format`). Usage: the input counted with the previous response's conversation before it.
 */
function planResponse(request: ResponsesRequest, directives: SimDirectives, ids: ResponseIds, previousContext: readonly unknown[]): Plan {
  const items: PlannedItem[] = [];
  const reasoning = reasoningTokens(directives, request.reasoningRequested);
  if (reasoning > 0) items.push({ kind: 'reasoning', id: `rs_sim_${ids.seq}` });
  const query = stripDirectives(request.prompt).trim() || 'search';
  if (request.builtins.has('web_search')) {
    for (let i = 0; i < (directives.webSearch ?? 0); i++) items.push({ kind: 'web_search', id: `ws_sim_${ids.seq}_${i}`, query });
  }
  if (request.builtins.has('image_generation')) {
    for (let i = 0; i < (directives.imageGeneration ?? 0); i++) items.push({ kind: 'image_generation', id: `ig_sim_${ids.seq}_${i}` });
  }
  const calls = request.toolResult === undefined ? planToolCalls(request.tools, request.toolChoice, directives, request.parallelToolCalls) : [];
  const message = (answer: Answer, refusal = false): PlannedItem => ({ kind: 'message', id: `msg_sim_${ids.seq}`, answer, refusal });
  if (request.toolResult !== undefined) items.push(message(toolResultAnswer(request.toolResult, directives, request.maxOutputTokens)));
  else if (directives.refusal) items.push(message(cutAnswer(REFUSAL_TEXT, request.maxOutputTokens), true));
  else if (calls.length > 0) calls.forEach((call, i) => items.push({ kind: 'function_call', id: `fc_sim_${ids.seq}_${i}`, callId: `call_sim_${ids.seq}_${i}`, call }));
  else if (request.format !== TEXT_FORMAT) items.push(message(cutAnswer(structuredText(request.format, request.prompt), request.maxOutputTokens)));
  else items.push(message(planAnswer(request.prompt, directives, request.maxOutputTokens)));

  const cut = items.some((item) => item.kind === 'message' && item.answer.finish === 'length');
  // `[sim:no-usage]`: the response objects carry `usage: null`, the terminal one included.
  const usage = directives.noUsage ? null : responsesUsage(request, directives, items, reasoning, previousContext);
  return { items, output: items.map((item) => itemObject(item, 'completed')), usage, status: cut ? 'incomplete' : 'completed', previousContext, reasoningTokens: reasoning };
}

/**
 * input_tokens by the shared rule of billing/tokens (parts at the simulator's fixed counts),
 * a previous response's conversation included as OpenAI bills it; output_tokens the message's
 * or the calls' tokens plus the reasoning tokens; or the counts of `[sim:usage=P,C]`.
 */
function responsesUsage(request: ResponsesRequest, directives: SimDirectives, items: readonly PlannedItem[], reasoning: number, previousContext: readonly unknown[]): ResponsesUsageObject {
  const input = previousContext.length === 0 ? request.input : [...previousContext, ...asItems(request.input)];
  const inputTokens = directives.usage?.prompt ?? countResponsesInputTokens(input, undefined, SIM_PART_TOKENS);
  const outputTokens = directives.usage?.completion ?? items.reduce((sum, item) => sum + itemTokens(item), reasoning);
  return responsesUsageObject(inputTokens, outputTokens, { cached: cachedTokens(directives, inputTokens), reasoning: Math.min(reasoning, outputTokens) });
}

/** The output tokens of an item: a message's, or a call's name and arguments; of its first `delivered` pieces when given. */
function itemTokens(item: PlannedItem, delivered?: number): number {
  if (item.kind === 'message') return delivered ?? item.answer.pieces.length;
  if (item.kind !== 'function_call') return 0;
  if (delivered === undefined) return toolCallTokens([item.call]);
  return toolCallTokens([{ name: item.call.name, arguments: argumentFragments(item.call.arguments).slice(0, delivered).join('') }]);
}

function asItems(input: string | readonly unknown[]): readonly unknown[] {
  return typeof input === 'string' ? [{ role: 'user', content: input }] : input;
}

// ---------------------------------------------------------------------------------------------
// Objects

function outputTextPart(text: string): object {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

function messageContent(item: Extract<PlannedItem, { kind: 'message' }>, text: string): object {
  return item.refusal ? { type: 'refusal', refusal: text } : outputTextPart(text);
}

/**
 * An output item in the protocol's shape. `in_progress` is the item as `output_item.added`
 * announces it (no text or arguments yet); `delivered`, for a failed stream, how many of its
 * tokens or argument fragments went out.
 */
function itemObject(item: PlannedItem, status: ItemStatus, delivered?: number): object {
  switch (item.kind) {
    case 'reasoning':
      return { type: 'reasoning', id: item.id, summary: [] };
    case 'web_search':
      return { type: 'web_search_call', id: item.id, status, action: { type: 'search', query: item.query } };
    case 'image_generation':
      return { type: 'image_generation_call', id: item.id, status, result: status === 'completed' ? TINY_PNG_BASE64 : null };
    case 'function_call': {
      const args = status === 'completed' ? item.call.arguments : argumentFragments(item.call.arguments).slice(0, delivered ?? 0).join('');
      return { type: 'function_call', id: item.id, call_id: item.callId, name: item.call.name, arguments: args, status };
    }
    case 'message': {
      const finalStatus = status === 'completed' && item.answer.finish === 'length' ? 'incomplete' : status;
      const content = status === 'in_progress' ? [] : [messageContent(item, delivered === undefined ? item.answer.text : item.answer.pieces.slice(0, delivered).join(''))];
      return { type: 'message', id: item.id, status: finalStatus, role: 'assistant', content };
    }
  }
}

/**
 * A `response` object with the fields the OpenAI SDK's `Response` type requires (`output_text`
 * excepted: the SDK computes it) and the usual optional ones, echoing the request's settings.
 */
function responseObject(
  request: ResponsesRequest,
  ids: ResponseIds,
  status: ResponseStatus,
  output: readonly object[],
  usage: ResponsesUsageObject | null,
  error: { readonly code: string; readonly message: string } | null = null,
): object {
  return {
    id: ids.id,
    object: 'response',
    created_at: ids.createdAt,
    status,
    background: false,
    completed_at: status === 'completed' ? nowSeconds() : null,
    error,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: request.echo.instructions,
    max_output_tokens: request.echo.max_output_tokens,
    metadata: request.echo.metadata,
    model: request.model,
    output,
    parallel_tool_calls: request.echo.parallel_tool_calls,
    previous_response_id: request.echo.previous_response_id,
    reasoning: request.echo.reasoning,
    service_tier: 'default',
    store: request.echo.store,
    temperature: request.echo.temperature,
    text: request.echo.text,
    tool_choice: request.echo.tool_choice,
    tools: request.echo.tools,
    top_p: request.echo.top_p,
    truncation: 'disabled',
    usage,
  };
}

// ---------------------------------------------------------------------------------------------
// Stored responses

function storedOf(request: ResponsesRequest, plan: Plan, response: object, seq: number): StoredResponse {
  return {
    response,
    inputItems: asItems(request.input).map((item, i) => inputItemResource(item, `item_sim_${seq}_${i}`)),
    context: [...plan.previousContext, ...asItems(request.input), ...plan.output],
  };
}

/** An item of `input_items`: its id, and the rest of the item as listed. */
interface ListedItem {
  readonly id: string;
  readonly [member: string]: unknown;
}

/** An input item as `input_items` lists it: with an id and status, a message's string content as a text part. */
function inputItemResource(item: unknown, id: string): ListedItem {
  if (!isRecord(item)) return { id, type: 'message', role: 'user', status: 'completed', content: [] };
  const isMessage = typeof item['role'] === 'string' && (item['type'] === undefined || item['type'] === 'message');
  if (!isMessage) return { ...item, id: typeof item['id'] === 'string' ? item['id'] : id, status: item['status'] ?? 'completed' };
  const assistant = item['role'] === 'assistant';
  const content = typeof item['content'] === 'string' ? [assistant ? outputTextPart(item['content']) : { type: 'input_text', text: item['content'] }] : item['content'];
  return { id: typeof item['id'] === 'string' ? item['id'] : id, type: 'message', role: item['role'], status: 'completed', content };
}

function storedOrThrow(store: ResponseStore, id: string): StoredResponse {
  const stored = store.get(id);
  // Not checked against the provider: the message OpenAI words for an unknown id.
  if (!stored) throw new HttpError(404, `Response with id '${id}' not found.`, null);
  return stored;
}

function deleteStored(ctx: SimContext, store: ResponseStore): void {
  const id = ctx.params['id']!;
  storedOrThrow(store, id);
  store.delete(id);
  sendJson(ctx.res, 200, { id, object: 'response.deleted', deleted: true });
}

/** `GET …/input_items`: `order` (default `desc`, as OpenAI's), `limit` (1..100, default 20), `after`. */
function listInputItems(ctx: SimContext, store: ResponseStore): void {
  const items = [...storedOrThrow(store, ctx.params['id']!).inputItems];
  if (ctx.query.get('order') !== 'asc') items.reverse();
  const after = ctx.query.get('after');
  const start = after === null ? 0 : items.findIndex((item) => item.id === after) + 1;
  const limit = Math.min(Math.max(Number(ctx.query.get('limit') ?? 20) || 20, 1), 100);
  const data = items.slice(start, start + limit);
    sendJson(ctx.res, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < items.length });
}

// ---------------------------------------------------------------------------------------------
// Streaming

/** One stream event, numbered when sent: the opening of an item, a piece of its body, or its closing. */
interface Frame {
  readonly kind: 'open' | 'body' | 'close';
  readonly build: (sequence: number) => string;
  /** The `output_item.done` of its item. */
  readonly completesItem?: true;
}

/**
 * Streams the response as typed events, in the order the OpenAI SDK's accumulator expects:
 * created, in_progress, then for each output item its `output_item.added`, its own events (text
 * or refusal deltas, function-call argument deltas, a built-in call's progress) and
 * `output_item.done`, then completed (or incomplete when cut by max_output_tokens). A stall stops
 * after two deltas; a stream error sends, after them, an `error` event with its code, then
 * `response.failed` with the output delivered (its error code `server_error`, ResponseErrorCode's
 * one for a failure of the provider), and ends. With `paceMs` (`[sim:pace=MS]`), each delta after
 * the first goes out MS after the one before.
 */
async function streamResponse(
  res: ServerResponse,
  request: ResponsesRequest,
  plan: Plan,
  ids: ResponseIds,
  end: StreamEnd,
  paceMs: number | undefined,
  keep: (response: object) => void,
): Promise<void> {
  let sequence = 0;
  const event = (type: string, fields: object): string => eventFrame(type, { type, sequence_number: sequence++, ...fields });
  const started = responseObject(request, ids, 'in_progress', [], null);

  startEventStream(res);
  const out = new SseWriter(res);
  await out.push(event('response.created', { response: started }));
  await out.push(event('response.in_progress', { response: started }));
  let completed = 0;
  let bodySent = 0;
  let bodyInItem = 0;
  let first = true;
  for (const frame of responseFrames(plan.items)) {
    if (end.kind !== 'whole' && ((frame.kind === 'body' && bodySent === STALL_AFTER_TOKENS) || (frame.kind === 'close' && bodySent > 0))) break;
    // Everything before the first delta goes out at once: time-to-first-token is what callers measure.
    if (first && frame.kind === 'body' && !(await out.flush())) return;
    first = first && frame.kind !== 'body';
    if (paceMs !== undefined && frame.kind === 'body' && bodySent > 0 && !(await out.pause(paceMs))) return;
    if (!(await out.push(frame.build(sequence++)))) return;
    if (frame.kind === 'body') {
      bodySent++;
      bodyInItem++;
    }
    if (frame.completesItem) {
      completed++;
      bodyInItem = 0;
    }
  }
  if (end.kind === 'stall') {
    await out.flush(); // and never end: the stalled stream hangs until the socket closes
    return;
  }
  if (end.kind === 'error') {
    const message = streamErrorMessage(end.code);
    const done = plan.items.slice(0, completed);
    const delivered = done.map((item) => itemObject(item, 'completed'));
    let outputTokens = done.reduce((sum, item) => sum + itemTokens(item), plan.reasoningTokens);
    if (completed < plan.items.length) {
      delivered.push(itemObject(plan.items[completed]!, 'incomplete', bodyInItem));
      outputTokens += itemTokens(plan.items[completed]!, bodyInItem);
    }
    // OpenAI's document requires a usage object; what the live API reports here is not checked.
    const usage = plan.usage && responsesUsageObject(plan.usage.input_tokens, outputTokens, { cached: plan.usage.input_tokens_details.cached_tokens, reasoning: plan.reasoningTokens });
    await out.push(event('error', { code: end.code, message, param: null }));
    await out.push(event('response.failed', { response: responseObject(request, ids, 'failed', delivered, usage, { code: 'server_error', message }) }));
    out.end();
    return;
  }
  const final = responseObject(request, ids, plan.status, plan.output, plan.usage);
  keep(final);
  await out.push(event(plan.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final }));
  out.end();
}

function* responseFrames(items: readonly PlannedItem[]): Generator<Frame> {
  for (const [outputIndex, item] of items.entries()) {
    const frame = (kind: Frame['kind'], type: string, fields: object): Frame => ({
      kind,
      build: (sequence) => eventFrame(type, { type, sequence_number: sequence, ...fields }),
    });
    const where = { item_id: item.id, output_index: outputIndex };
    yield frame('open', 'response.output_item.added', { output_index: outputIndex, item: itemObject(item, 'in_progress', 0) });
    switch (item.kind) {
      case 'web_search':
        for (const step of ['in_progress', 'searching', 'completed']) yield frame('open', `response.web_search_call.${step}`, where);
        break;
      case 'image_generation':
        for (const step of ['in_progress', 'generating', 'completed']) yield frame('open', `response.image_generation_call.${step}`, where);
        break;
      case 'function_call':
        for (const delta of argumentFragments(item.call.arguments)) yield frame('body', 'response.function_call_arguments.delta', { ...where, delta });
        yield frame('close', 'response.function_call_arguments.done', { ...where, name: item.call.name, arguments: item.call.arguments });
        break;
      case 'message':
        yield* messageFrames(item, outputIndex, frame);
        break;
      case 'reasoning':
        break;
    }
    yield { ...frame('close', 'response.output_item.done', { output_index: outputIndex, item: itemObject(item, 'completed') }), completesItem: true };
  }
}

function* messageFrames(
  item: Extract<PlannedItem, { kind: 'message' }>,
  outputIndex: number,
  frame: (kind: Frame['kind'], type: string, fields: object) => Frame,
): Generator<Frame> {
  const location = { item_id: item.id, output_index: outputIndex, content_index: 0 };
  yield frame('open', 'response.content_part.added', { ...location, part: messageContent(item, '') });
  if (item.refusal) {
    for (const delta of item.answer.pieces) yield frame('body', 'response.refusal.delta', { ...location, delta });
    yield frame('close', 'response.refusal.done', { ...location, refusal: item.answer.text });
  } else {
    const deltaFrame = deltaEventTemplate(item.id, outputIndex);
    for (const piece of item.answer.pieces) yield { kind: 'body', build: (sequence) => deltaFrame(sequence, piece) };
    yield frame('close', 'response.output_text.done', { ...location, text: item.answer.text, logprobs: [] });
  }
  yield frame('close', 'response.content_part.done', { ...location, part: messageContent(item, item.answer.text) });
}

/** Text deltas are the hot path of a long stream: built by concatenation, not serialisation. */
function deltaEventTemplate(itemId: string, outputIndex: number): (sequence: number, piece: string) => string {
  const type = 'response.output_text.delta';
  const head = `event: ${type}\ndata: {"type":"${type}","sequence_number":`;
  const middle = `,"item_id":${JSON.stringify(itemId)},"output_index":${outputIndex},"content_index":0,"delta":`;
  return (sequence, piece) => `${head}${sequence}${middle}${JSON.stringify(piece)},"logprobs":[]}\n\n`;
}
