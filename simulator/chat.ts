/**
 * The simulated OpenAI-compatible chat upstream: `POST /v1/chat/completions` and
 * `POST /v1/responses`, streamed and not. Deterministic: the same request gives the same answer
 * text and usage (ids and timestamps aside), and the caller steers it with `[sim:...]` directives
 * in the last user message (see directives.ts).
 */
import type { ServerResponse } from 'node:http';
import { parseDirectives, stripDirectives, type SimDirectives } from './directives';
import { passGate } from './gates';
import {
  HttpError,
  SseWriter,
  codeForStatus,
  dataFrame,
  eventFrame,
  errorBody,
  sendError,
  sendJson,
  sendNotFound,
  startEventStream,
  waitUnlessGone,
} from './http';
import type { ExtraRoute, SimContext } from './route';
import { handleMinutesSummary, isMinutesSummaryRequest } from './minutes-summary';
import { countMessageTokens, countResponsesInputTokens, responsesUsageObject, splitTokens, type ResponsesUsageObject, type TokenMessage } from '../src/billing/tokens';

/** How many tokens a `[sim:stall]` stream sends before it stops. */
const STALL_AFTER_TOKENS = 2;
/** How many words of the prompt the default answer echoes. */
const ECHO_WORDS = 8;

/** The chat routes, with their own id counter so ids are predictable per simulator instance. */
export function chatRoutes(): ExtraRoute[] {
  let seq = 0;
  const nextId = (): number => ++seq;
  return [
    { method: 'POST', path: '/v1/chat/completions', handler: (ctx) => handleChatCompletions(ctx, nextId()) },
    { method: 'POST', path: '/v1/responses', handler: (ctx) => handleResponses(ctx, nextId()) },
  ];
}

// ---------------------------------------------------------------------------------------------
// The answer, shared by both protocols

type FinishReason = 'stop' | 'length';

interface Answer {
  /** One token per piece; `pieces.join('') === text`. */
  readonly pieces: readonly string[];
  readonly text: string;
  readonly finish: FinishReason;
}

/** The answer to a prompt: N words with `[sim:tokens=N]`, else an echo; cut at `maxTokens`. */
function planAnswer(prompt: string, directives: SimDirectives, maxTokens: number | undefined): Answer {
  const full = directives.tokens !== undefined ? numberedWords(directives.tokens) : echoAnswer(prompt);
  const pieces = splitTokens(full);
  if (maxTokens === undefined || pieces.length <= maxTokens) return { pieces, text: full, finish: 'stop' };
  const kept = pieces.slice(0, maxTokens);
  return { pieces: kept, text: kept.join(''), finish: 'length' };
}

function numberedWords(n: number): string {
  const words = new Array<string>(n);
  for (let i = 0; i < n; i++) words[i] = `word${i + 1}`;
  return words.join(' ');
}

function echoAnswer(prompt: string): string {
  const words = stripDirectives(prompt).split(/\s+/).filter(Boolean).slice(0, ECHO_WORDS);
  return words.length > 0 ? `Simulated answer to: ${words.join(' ')}` : 'Simulated answer.';
}

/**
 * Applies the directives that precede any answer: a gate, the delay, then a forced error, then a
 * non-stream stall (which never answers). Returns false when the handler must not answer.
 */
async function preamble(res: ServerResponse, directives: SimDirectives, stream: boolean): Promise<boolean> {
  if (!(await passGate(directives.raw['gate'], res))) return false;
  if (directives.delayMs !== undefined && !(await waitUnlessGone(res, directives.delayMs))) return false;
  const status = directives.status ?? (directives.fail ? 500 : undefined);
  if (status !== undefined) {
    const headers: Record<string, string> = directives.retryAfter === undefined ? {} : { 'retry-after': directives.retryAfter };
    sendError(res, status, `Simulated upstream error (HTTP ${status})`, codeForStatus(status), null, headers);
    return false;
  }
  // A non-stream stall sends nothing at all: the client sees a request that never completes.
  return !(directives.stall && !stream);
}

/** How a stream ends: in full, stalled after its first tokens, or with a provider error after them. */
type StreamEnd = { readonly kind: 'whole' } | { readonly kind: 'stall' } | { readonly kind: 'error'; readonly code: string };

function streamEnd(directives: SimDirectives): StreamEnd {
  if (directives.stall) return { kind: 'stall' };
  return directives.streamError === undefined ? { kind: 'whole' } : { kind: 'error', code: directives.streamError };
}

/** How many token chunks a stream sends: all of them, or only the first few when it will not end whole. */
function tokensToSend(answer: Answer, end: StreamEnd): number {
  return end.kind === 'whole' ? answer.pieces.length : Math.min(STALL_AFTER_TOKENS, answer.pieces.length);
}

/** The message of a `[sim:stream-error=CODE]` error. */
function streamErrorMessage(code: string): string {
  return `Simulated provider error in the stream (${code})`;
}

/** A positive integer limit, or undefined when absent or not usable. */
function tokenLimit(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requireModel(body: Record<string, unknown>): string {
  const model = body['model'];
  if (typeof model !== 'string' || model === '') {
    throw new HttpError(400, 'you must provide a model parameter', 'missing_required_parameter', 'model');
  }
  return model;
}

function requireObject(body: unknown): Record<string, unknown> {
  if (!isRecord(body)) throw new HttpError(400, 'The request body must be a JSON object.', 'invalid_request');
  return body;
}

/**
 * The text of a message's content: a string, or the `text` of each part of an array (chat
 * `text`, Responses `input_text`/`output_text`) joined by newlines, so the token count of the
 * join equals the sum of the parts' counts.
 */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (isRecord(part) && typeof part['text'] === 'string') texts.push(part['text']);
  }
  return texts.join('\n');
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

// ---------------------------------------------------------------------------------------------
// Chat Completions

interface ChatRequest {
  readonly model: string;
  readonly messages: readonly TokenMessage[];
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly maxTokens: number | undefined;
}

interface ChatUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

async function handleChatCompletions(ctx: SimContext, seq: number): Promise<void> {
  // The minutes summary's structured-output request gets a report built from its transcript.
  if (isMinutesSummaryRequest(ctx.body)) return handleMinutesSummary(ctx, seq);
  const request = parseChatRequest(ctx.body);
  const prompt = lastUserContent(request.messages);
  const directives = parseDirectives(prompt);
  if (!(await preamble(ctx.res, directives, request.stream))) return;
  const answer = planAnswer(prompt, directives, request.maxTokens);
  const promptTokens = countMessageTokens(request.messages);
  // `[sim:no-usage]`: an upstream that reports no usage at all, plain or streamed.
  const usage = directives.noUsage ? null : chatUsage(promptTokens, answer, directives);
  const id = `chatcmpl-sim-${seq}`;
  if (request.stream) await streamChat(ctx.res, request, answer, usage, id, streamEnd(directives));
  else sendJson(ctx.res, 200, chatCompletion(request, answer, usage, id));
}

function parseChatRequest(raw: unknown): ChatRequest {
  const body = requireObject(raw);
  const model = requireModel(body);
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new HttpError(400, 'messages must be a non-empty array', 'missing_required_parameter', 'messages');
  }
  const streamOptions = body['stream_options'];
  return {
    model,
    messages: messages.map(toTokenMessage),
    stream: body['stream'] === true,
    includeUsage: isRecord(streamOptions) && streamOptions['include_usage'] === true,
    // `max_completion_tokens` superseded `max_tokens`; honour either, the newer first.
    maxTokens: tokenLimit(body['max_completion_tokens']) ?? tokenLimit(body['max_tokens']),
  };
}

function toTokenMessage(message: unknown, index: number): TokenMessage {
  if (!isRecord(message) || typeof message['role'] !== 'string') {
    throw new HttpError(400, `messages[${index}] must be an object with a role`, 'invalid_value', `messages[${index}]`);
  }
  return { role: message['role'], content: contentText(message['content']) };
}

function lastUserContent(messages: readonly TokenMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user') return messages[i]!.content;
  }
  return '';
}

/** The usage the upstream reports: the real counts, or those of `[sim:usage=P,C]`. */
function chatUsage(promptTokens: number, answer: Answer, directives: SimDirectives): ChatUsage {
  const prompt = directives.usage?.prompt ?? promptTokens;
  const completion = directives.usage?.completion ?? answer.pieces.length;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function chatCompletion(request: ChatRequest, answer: Answer, usage: ChatUsage | null, id: string): object {
  return {
    id,
    object: 'chat.completion',
    created: nowSeconds(),
    model: request.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: answer.text, refusal: null },
        logprobs: null,
        finish_reason: answer.finish,
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

/**
 * Streams the answer as `chat.completion.chunk`s: the role, one chunk per token, the finish
 * reason, the usage (if asked and reported), `[DONE]`. A stall stops after the first tokens
 * and leaves the response open; the socket's close (client abort or server close) releases it.
 * A stream error sends, after the first tokens, the item OpenAI sends when a stream fails,
 * `data: {"error": {…}}`, and ends without `[DONE]`.
 * Without usage (`[sim:no-usage]`) it behaves as an upstream that ignores `include_usage`.
 */
async function streamChat(res: ServerResponse, request: ChatRequest, answer: Answer, usage: ChatUsage | null, id: string, end: StreamEnd): Promise<void> {
  const created = nowSeconds();
  const base = { id, object: 'chat.completion.chunk', created, model: request.model };
  const includeUsage = request.includeUsage && usage !== null;
  // Real OpenAI streams carry `usage: null` on every chunk once include_usage is on.
  const usageField = includeUsage ? { usage: null } : {};
  const chunk = (delta: object, finish: FinishReason | null): string =>
    dataFrame({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...usageField });

  startEventStream(res);
  const out = new SseWriter(res);
  await out.push(chunk({ role: 'assistant', content: '' }, null));
  // The first chunk goes out at once: time-to-first-token is what callers measure.
  if (!(await out.flush())) return;

  const tokenFrame = tokenChunkTemplate(base, includeUsage);
  for (let i = 0; i < tokensToSend(answer, end); i++) {
    if (!(await out.push(tokenFrame(answer.pieces[i]!)))) return;
  }
  if (end.kind === 'stall') {
    await out.flush(); // and never end: the stalled stream hangs until the socket closes
    return;
  }
  if (end.kind === 'error') {
    await out.push(dataFrame(errorBody(500, streamErrorMessage(end.code), end.code)));
    out.end();
    return;
  }
  await out.push(chunk({}, answer.finish));
  if (includeUsage) await out.push(dataFrame({ ...base, choices: [], usage }));
  await out.push('data: [DONE]\n\n');
  out.end();
}

/**
 * Per-token chunks are the hot path of a long stream: build them by concatenating a constant
 * prefix and suffix around the JSON-encoded token instead of serialising the whole chunk.
 */
function tokenChunkTemplate(base: object, includeUsage: boolean): (piece: string) => string {
  const head = JSON.stringify(base).slice(0, -1); // the base object without its closing brace
  const prefix = `data: ${head},"choices":[{"index":0,"delta":{"content":`;
  const suffix = `},"logprobs":null,"finish_reason":null}]${includeUsage ? ',"usage":null' : ''}}\n\n`;
  return (piece) => prefix + JSON.stringify(piece) + suffix;
}

// ---------------------------------------------------------------------------------------------
// Responses

interface ResponsesRequest {
  readonly model: string;
  /** The input as sent: a string or input items, for the usage count. */
  readonly input: string | readonly unknown[];
  readonly prompt: string;
  readonly stream: boolean;
  readonly maxOutputTokens: number | undefined;
  /** Request fields the response object echoes back, as the real API does. */
  readonly echo: {
    readonly instructions: string | null;
    readonly max_output_tokens: number | null;
    readonly metadata: Record<string, unknown>;
    readonly temperature: number;
    readonly top_p: number;
    readonly previous_response_id: string | null;
  };
}

type ResponsesUsage = ResponsesUsageObject;

/** The status of an output item; a response may also have failed. */
type ItemStatus = 'in_progress' | 'completed' | 'incomplete';
type ResponseStatus = ItemStatus | 'failed';

interface OutputText {
  readonly type: 'output_text';
  readonly text: string;
  readonly annotations: readonly never[];
  readonly logprobs: readonly never[];
}

interface OutputMessage {
  readonly type: 'message';
  readonly id: string;
  readonly status: ItemStatus;
  readonly role: 'assistant';
  readonly content: readonly OutputText[];
}

/** Ids and timestamps one response keeps across its stream events. */
interface ResponseIds {
  readonly id: string;
  readonly itemId: string;
  readonly createdAt: number;
}

async function handleResponses(ctx: SimContext, seq: number): Promise<void> {
  const request = parseResponsesRequest(ctx.body);
  const directives = parseDirectives(request.prompt);
  // An upstream without the interface answers 404 at once, whatever else the prompt asks for.
  if (directives.noResponses) {
    sendNotFound(ctx.req, ctx.res);
    return;
  }
  if (!(await preamble(ctx.res, directives, request.stream))) return;
  const answer = planAnswer(request.prompt, directives, request.maxOutputTokens);
  // `[sim:no-usage]`: the response objects carry `usage: null`, the terminal one included.
  const usage = directives.noUsage ? null : responsesUsage(request, answer, directives);
  const ids = { id: `resp_sim_${seq}`, itemId: `msg_sim_${seq}`, createdAt: nowSeconds() };
  if (request.stream) await streamResponse(ctx.res, request, answer, usage, ids, streamEnd(directives));
  else sendJson(ctx.res, 200, finalResponse(request, answer, usage, ids));
}

function parseResponsesRequest(raw: unknown): ResponsesRequest {
  const body = requireObject(raw);
  const model = requireModel(body);
  const input = body['input'];
  let prompt: string;
  if (typeof input === 'string') {
    prompt = input;
  } else if (Array.isArray(input)) {
    prompt = lastUserInput(input);
  } else {
    throw new HttpError(400, 'input must be a string or an array of input items', 'missing_required_parameter', 'input');
  }
  const maxOutputTokens = tokenLimit(body['max_output_tokens']);
  return {
    model,
    input,
    prompt,
    stream: body['stream'] === true,
    maxOutputTokens,
    echo: {
      instructions: typeof body['instructions'] === 'string' ? body['instructions'] : null,
      max_output_tokens: maxOutputTokens ?? null,
      metadata: isRecord(body['metadata']) ? body['metadata'] : {},
      temperature: typeof body['temperature'] === 'number' ? body['temperature'] : 1,
      top_p: typeof body['top_p'] === 'number' ? body['top_p'] : 1,
      previous_response_id: typeof body['previous_response_id'] === 'string' ? body['previous_response_id'] : null,
    },
  };
}

function lastUserInput(input: readonly unknown[]): string {
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (isRecord(item) && item['role'] === 'user') return contentText(item['content']);
  }
  return '';
}

/**
 * input_tokens by the shared rule of billing/tokens, so that the gateway's estimate agrees (or
 * the counts of `[sim:usage=P,C]`).
 */
function responsesUsage(request: ResponsesRequest, answer: Answer, directives: SimDirectives): ResponsesUsage {
  return responsesUsageObject(directives.usage?.prompt ?? countResponsesInputTokens(request.input), directives.usage?.completion ?? answer.pieces.length);
}

function outputText(text: string): OutputText {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

function outputMessage(ids: ResponseIds, status: ItemStatus, content: readonly OutputText[]): OutputMessage {
  return { type: 'message', id: ids.itemId, status, role: 'assistant', content };
}

/** The terminal status of an answer: truncated answers are `incomplete`, as with OpenAI. */
function terminalStatus(answer: Answer): ItemStatus {
  return answer.finish === 'length' ? 'incomplete' : 'completed';
}

/**
 * A `response` object with the fields the OpenAI SDK's `Response` type requires (`output_text`
 * excepted: the SDK computes it) and the usual optional ones.
 */
function responseObject(
  request: ResponsesRequest,
  ids: ResponseIds,
  status: ResponseStatus,
  output: readonly OutputMessage[],
  usage: ResponsesUsage | null,
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
    parallel_tool_calls: true,
    previous_response_id: request.echo.previous_response_id,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: false,
    temperature: request.echo.temperature,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: request.echo.top_p,
    truncation: 'disabled',
    usage,
  };
}

function finalResponse(request: ResponsesRequest, answer: Answer, usage: ResponsesUsage | null, ids: ResponseIds): object {
  const status = terminalStatus(answer);
  return responseObject(request, ids, status, [outputMessage(ids, status, [outputText(answer.text)])], usage);
}

/**
 * Streams the answer as typed Responses events, in the order the OpenAI SDK's accumulator
 * expects: created, in_progress, item added, part added, one text delta per token, text done,
 * part done, item done, then completed (or incomplete when cut by max_output_tokens). A stream
 * error sends, after the first tokens, an `error` event with its code, then `response.failed`
 * with the text delivered (its error code `server_error`, ResponseErrorCode's one for a failure
 * of the provider), and ends.
 */
async function streamResponse(
  res: ServerResponse,
  request: ResponsesRequest,
  answer: Answer,
  usage: ResponsesUsage | null,
  ids: ResponseIds,
  end: StreamEnd,
): Promise<void> {
  let sequence = 0;
  const event = (type: string, fields: object): string => eventFrame(type, { type, sequence_number: sequence++, ...fields });
  const location = { item_id: ids.itemId, output_index: 0, content_index: 0 };
  const started = responseObject(request, ids, 'in_progress', [], null);

  startEventStream(res);
  const out = new SseWriter(res);
  await out.push(event('response.created', { response: started }));
  await out.push(event('response.in_progress', { response: started }));
  await out.push(event('response.output_item.added', { output_index: 0, item: outputMessage(ids, 'in_progress', []) }));
  await out.push(event('response.content_part.added', { ...location, part: outputText('') }));
  if (!(await out.flush())) return;

  const deltaFrame = deltaEventTemplate(ids.itemId);
  const sent = tokensToSend(answer, end);
  for (let i = 0; i < sent; i++) {
    if (!(await out.push(deltaFrame(sequence++, answer.pieces[i]!)))) return;
  }
  if (end.kind === 'stall') {
    await out.flush(); // and never end: the stalled stream hangs until the socket closes
    return;
  }
  if (end.kind === 'error') {
    const message = streamErrorMessage(end.code);
    const delivered = outputMessage(ids, 'incomplete', [outputText(answer.pieces.slice(0, sent).join(''))]);
    await out.push(event('error', { code: end.code, message, param: null }));
    await out.push(event('response.failed', { response: responseObject(request, ids, 'failed', [delivered], null, { code: 'server_error', message }) }));
    out.end();
    return;
  }
  const status = terminalStatus(answer);
  const text = outputText(answer.text);
  await out.push(event('response.output_text.done', { ...location, text: answer.text, logprobs: [] }));
  await out.push(event('response.content_part.done', { ...location, part: text }));
  await out.push(event('response.output_item.done', { output_index: 0, item: outputMessage(ids, status, [text]) }));
  const terminal = status === 'incomplete' ? 'response.incomplete' : 'response.completed';
  await out.push(event(terminal, { response: finalResponse(request, answer, usage, ids) }));
  out.end();
}

/** Like tokenChunkTemplate: text deltas are built by concatenation on the hot path. */
function deltaEventTemplate(itemId: string): (sequence: number, piece: string) => string {
  const type = 'response.output_text.delta';
  const head = `event: ${type}\ndata: {"type":"${type}","sequence_number":`;
  const middle = `,"item_id":${JSON.stringify(itemId)},"output_index":0,"content_index":0,"delta":`;
  return (sequence, piece) => `${head}${sequence}${middle}${JSON.stringify(piece)},"logprobs":[]}\n\n`;
}
