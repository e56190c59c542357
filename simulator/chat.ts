/**
 * The simulated OpenAI-compatible chat upstream: `POST /v1/chat/completions` here, the Responses
 * routes in responses.ts. Deterministic: the same request gives the same answer text and usage
 * (ids and timestamps aside), and the caller steers it with `[sim:...]` directives in the last
 * user message (see directives.ts): text, a refusal, JSON for a response format, tool calls,
 * `n` choices, logprobs and the usage details OpenAI reports.
 */
import type { ServerResponse } from 'node:http';
import { parseDirectives, type SimDirectives } from './directives';
import { HttpError, SseWriter, dataFrame, errorBody, sendJson, startEventStream } from './http';
import type { ExtraRoute, SimContext } from './route';
import { handleMinutesSummary, isMinutesSummaryRequest } from './minutes-summary';
import { responsesRoutes } from './responses';
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
  type FinishReason,
  type OutputFormat,
  type PlannedCall,
  type StreamEnd,
  type ToolChoice,
  type ToolSpec,
} from './answer';
import { countChatPromptTokens } from '../src/billing/tokens';

/** The chat and Responses routes, with one id counter so ids are predictable per simulator instance. */
export function chatRoutes(): ExtraRoute[] {
  let seq = 0;
  const nextId = (): number => ++seq;
  return [{ method: 'POST', path: '/v1/chat/completions', handler: (ctx) => handleChatCompletions(ctx, nextId()) }, ...responsesRoutes(nextId)];
}

interface ChatRequest {
  readonly model: string;
  readonly messages: readonly Record<string, unknown>[];
  /** `tools` or legacy `functions` as sent, for the prompt count. */
  readonly toolDefinitions: readonly unknown[];
  readonly tools: readonly ToolSpec[];
  readonly toolChoice: ToolChoice;
  readonly parallelToolCalls: boolean;
  /** The request offers legacy `functions`: a call is `message.function_call`. */
  readonly legacyFunctions: boolean;
  readonly format: OutputFormat;
  readonly n: number;
  /** How many top logprobs each token carries; undefined without `logprobs: true`. */
  readonly topLogprobs: number | undefined;
  readonly reasoningRequested: boolean;
  /** The request uses a field beyond the plain chat of the spec: its usage carries OpenAI's details. */
  readonly extended: boolean;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly maxTokens: number | undefined;
}

/** What one choice says. */
type Reply =
  | { readonly kind: 'text'; readonly answer: Answer }
  | { readonly kind: 'refusal'; readonly answer: Answer }
  | { readonly kind: 'tools'; readonly calls: readonly PlannedCall[] };

interface ChatUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly prompt_tokens_details?: { readonly cached_tokens: number; readonly audio_tokens: number };
  readonly completion_tokens_details?: {
    readonly reasoning_tokens: number;
    readonly audio_tokens: number;
    readonly accepted_prediction_tokens: number;
    readonly rejected_prediction_tokens: number;
  };
}

/** The request fields that make a request "extended" (its usage then carries the details objects). */
const EXTENSION_FIELDS = ['tools', 'functions', 'response_format', 'n', 'logprobs', 'reasoning_effort', 'prediction', 'modalities', 'audio'];
/** OpenAI's bound on `n`; it also keeps a hostile request from making the simulator allocate for ages. */
const MAX_N = 128;

async function handleChatCompletions(ctx: SimContext, seq: number): Promise<void> {
  // The minutes summary's structured-output request gets a report built from its transcript.
  if (isMinutesSummaryRequest(ctx.body)) return handleMinutesSummary(ctx, seq);
  const request = parseChatRequest(ctx.body);
  const prompt = lastUserContent(request.messages);
  const directives = parseDirectives(prompt);
  if (!(await preamble(ctx.res, directives, request.stream))) return;
  const replies = planReplies(request, prompt, directives);
  // `[sim:no-usage]`: an upstream that reports no usage at all, plain or streamed.
  const usage = directives.noUsage ? null : chatUsage(request, replies, directives);
  const id = `chatcmpl-sim-${seq}`;
  if (request.stream) await streamChat(ctx.res, request, replies, usage, id, streamEnd(directives), directives.paceMs);
  else sendJson(ctx.res, 200, chatCompletion(request, replies, usage, id));
}

function parseChatRequest(raw: unknown): ChatRequest {
  const body = requireObject(raw);
  const model = requireModel(body);
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new HttpError(400, 'messages must be a non-empty array', 'missing_required_parameter', 'messages');
  }
  const streamOptions = body['stream_options'];
  const legacyFunctions = !Array.isArray(body['tools']) && Array.isArray(body['functions']);
  const toolDefinitions = arrayOf(legacyFunctions ? body['functions'] : body['tools']);
  const logprobs = body['logprobs'] === true;
  return {
    model,
    messages: messages.map(requireMessage),
    toolDefinitions,
    tools: toolDefinitions.flatMap((tool) => toolSpec(legacyFunctions ? tool : functionOf(tool))),
    toolChoice: legacyFunctions ? functionChoice(body['function_call']) : toolChoiceOf(body['tool_choice']),
    parallelToolCalls: body['parallel_tool_calls'] !== false && !legacyFunctions,
    legacyFunctions,
    format: outputFormatOf(body['response_format']),
    n: choiceCount(body['n']),
    topLogprobs: logprobs ? (typeof body['top_logprobs'] === 'number' ? Math.min(Math.max(Math.floor(body['top_logprobs']), 0), 20) : 0) : undefined,
    reasoningRequested: typeof body['reasoning_effort'] === 'string' && body['reasoning_effort'] !== 'none',
    extended: EXTENSION_FIELDS.some((field) => body[field] !== undefined && body[field] !== null) || messages.some(hasParts),
    stream: body['stream'] === true,
    includeUsage: isRecord(streamOptions) && streamOptions['include_usage'] === true,
    // `max_completion_tokens` superseded `max_tokens`; honour either, the newer first.
    maxTokens: tokenLimit(body['max_completion_tokens']) ?? tokenLimit(body['max_tokens']),
  };
}

function requireMessage(message: unknown, index: number): Record<string, unknown> {
  if (!isRecord(message) || typeof message['role'] !== 'string') {
    throw new HttpError(400, `messages[${index}] must be an object with a role`, 'invalid_value', `messages[${index}]`);
  }
  return message;
}

function hasParts(message: unknown): boolean {
  return isRecord(message) && Array.isArray(message['content']);
}

function arrayOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function choiceCount(n: unknown): number {
  const count = tokenLimit(n) ?? 1;
  if (count > MAX_N) throw new HttpError(400, `Invalid 'n': integer above maximum value. Expected a value <= ${MAX_N}, but got ${count} instead.`, 'integer_above_max_value', 'n');
  return count;
}

/** The function of a `{type: "function", function}` tool; undefined for other tools. */
function functionOf(tool: unknown): unknown {
  return isRecord(tool) && tool['type'] === 'function' ? tool['function'] : undefined;
}

/** A function definition (`{name, parameters}`) as a tool the model may call; nothing when malformed. */
function toolSpec(fn: unknown): ToolSpec[] {
  return isRecord(fn) && typeof fn['name'] === 'string' ? [{ name: fn['name'], parameters: fn['parameters'] }] : [];
}

/** Chat's `tool_choice`: `none`, `auto`, `required`, or `{type: "function", function: {name}}`. */
function toolChoiceOf(choice: unknown): ToolChoice {
  if (choice === 'none' || choice === 'required') return { kind: choice };
  if (isRecord(choice) && isRecord(choice['function']) && typeof choice['function']['name'] === 'string') return { kind: 'named', name: choice['function']['name'] };
  return { kind: 'auto' };
}

/** Legacy `function_call`: `none`, `auto`, or `{name}`. */
function functionChoice(choice: unknown): ToolChoice {
  if (choice === 'none') return { kind: 'none' };
  if (isRecord(choice) && typeof choice['name'] === 'string') return { kind: 'named', name: choice['name'] };
  return { kind: 'auto' };
}

function lastUserContent(messages: readonly Record<string, unknown>[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!['role'] === 'user') return contentText(messages[i]!['content']);
  }
  return '';
}

/**
 * What each of the `n` choices says. After a tool (or function) result, text that echoes it, so
 * a client's tool loop ends; else a refusal, tool calls, JSON for a response format, or the text
 * answer, which from the second choice on starts with a marker (`[2]`) glued to its first word,
 * so choices differ without changing their token counts.
 */
function planReplies(request: ChatRequest, prompt: string, directives: SimDirectives): Reply[] {
  const last = request.messages[request.messages.length - 1]!;
  const afterToolResult = last['role'] === 'tool' || last['role'] === 'function';
  const calls = afterToolResult ? [] : planToolCalls(request.tools, request.toolChoice, directives, request.parallelToolCalls);
  let single: Reply;
  if (afterToolResult) single = { kind: 'text', answer: toolResultAnswer(contentText(last['content']), directives, request.maxTokens) };
  else if (directives.refusal) single = { kind: 'refusal', answer: cutAnswer(REFUSAL_TEXT, request.maxTokens) };
  else if (calls.length > 0) single = { kind: 'tools', calls };
  else if (request.format !== TEXT_FORMAT) single = { kind: 'text', answer: cutAnswer(structuredText(request.format, prompt), request.maxTokens) };
  else return Array.from({ length: request.n }, (_, i) => ({ kind: 'text', answer: marked(planAnswer(prompt, directives, request.maxTokens), i) }));
  return new Array<Reply>(request.n).fill(single);
}

function marked(answer: Answer, choice: number): Answer {
  if (choice === 0 || answer.pieces.length === 0) return answer;
  const pieces = [`[${choice + 1}]${answer.pieces[0]!}`, ...answer.pieces.slice(1)];
  return { ...answer, pieces, text: pieces.join('') };
}

function replyTokens(reply: Reply): number {
  return reply.kind === 'tools' ? toolCallTokens(reply.calls) : reply.answer.pieces.length;
}

function finishReason(request: ChatRequest, reply: Reply): FinishReason | 'tool_calls' | 'function_call' {
  if (reply.kind !== 'tools') return reply.answer.finish;
  return request.legacyFunctions ? 'function_call' : 'tool_calls';
}

/**
 * The usage the upstream reports: the real counts (every choice's completion tokens, plus the
 * reasoning tokens, which OpenAI counts inside completion_tokens), or those of `[sim:usage=P,C]`.
 * OpenAI's details objects are there when the request is extended or asks for cached or reasoning tokens.
 */
function chatUsage(request: ChatRequest, replies: readonly Reply[], directives: SimDirectives): ChatUsage {
  const reasoning = reasoningTokens(directives, request.reasoningRequested);
  const counted = countChatPromptTokens(request.messages, request.toolDefinitions, SIM_PART_TOKENS);
  const prompt = directives.usage?.prompt ?? counted;
  const completion = directives.usage?.completion ?? replies.reduce((sum, reply) => sum + replyTokens(reply), reasoning);
  const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (!request.extended && directives.cached === undefined && directives.reasoning === undefined) return usage;
  return {
    ...usage,
    prompt_tokens_details: { cached_tokens: cachedTokens(directives, prompt), audio_tokens: Math.min(audioPartTokens(request.messages), prompt) },
    completion_tokens_details: { reasoning_tokens: Math.min(reasoning, completion), audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function audioPartTokens(messages: readonly Record<string, unknown>[]): number {
  let total = 0;
  for (const message of messages) {
    for (const part of arrayOf(message['content'])) if (isRecord(part) && part['type'] === 'input_audio') total += SIM_PART_TOKENS.audio;
  }
  return total;
}

function callId(id: string, choice: number, call: number): string {
  return `call_${id.replace(/^chatcmpl-/, '').replace(/-/g, '_')}_${choice}_${call}`;
}

// ---------------------------------------------------------------------------------------------
// Logprobs

interface TokenLogprob {
  readonly token: string;
  readonly logprob: number;
  readonly bytes: number[];
  readonly top_logprobs: readonly { readonly token: string; readonly logprob: number; readonly bytes: number[] }[];
}

/** Deterministic logprobs of the piece at `position`: the piece itself first among `top` candidates. */
function tokenLogprob(piece: string, position: number, top: number): TokenLogprob {
  const logprob = -0.0625 * ((position % 7) + 1);
  const alternatives = Array.from({ length: top }, (_, i) => {
    const token = i === 0 ? piece : `alt${i}`;
    return { token, logprob: logprob - i, bytes: [...Buffer.from(token, 'utf8')] };
  });
  return { token: piece, logprob, bytes: [...Buffer.from(piece, 'utf8')], top_logprobs: alternatives };
}

/** A choice's `logprobs`: the text's (or the refusal's) tokens, or null when not asked for or for tool calls. */
function choiceLogprobs(request: ChatRequest, reply: Reply): object | null {
  if (request.topLogprobs === undefined || reply.kind === 'tools') return null;
  const entries = reply.answer.pieces.map((piece, i) => tokenLogprob(piece, i, request.topLogprobs!));
  return reply.kind === 'text' ? { content: entries, refusal: null } : { content: null, refusal: entries };
}

// ---------------------------------------------------------------------------------------------
// The answer, whole

function chatCompletion(request: ChatRequest, replies: readonly Reply[], usage: ChatUsage | null, id: string): object {
  return {
    id,
    object: 'chat.completion',
    created: nowSeconds(),
    model: request.model,
    choices: replies.map((reply, index) => ({
      index,
      message: message(request, reply, id, index),
      logprobs: choiceLogprobs(request, reply),
      finish_reason: finishReason(request, reply),
    })),
    ...(usage ? { usage } : {}),
  };
}

function message(request: ChatRequest, reply: Reply, id: string, choice: number): object {
  if (reply.kind === 'text') return { role: 'assistant', content: reply.answer.text, refusal: null };
  if (reply.kind === 'refusal') return { role: 'assistant', content: null, refusal: reply.answer.text };
  if (request.legacyFunctions) return { role: 'assistant', content: null, refusal: null, function_call: { name: reply.calls[0]!.name, arguments: reply.calls[0]!.arguments } };
  const toolCalls = reply.calls.map((call, i) => ({ id: callId(id, choice, i), type: 'function', function: { name: call.name, arguments: call.arguments } }));
  return { role: 'assistant', content: null, refusal: null, tool_calls: toolCalls };
}

// ---------------------------------------------------------------------------------------------
// The answer, streamed

/** One chunk of a stream: the opening of a choice, a piece of its body, or its finish. */
interface Frame {
  readonly kind: 'head' | 'body' | 'finish';
  readonly data: string;
}

/**
 * Streams the answer as `chat.completion.chunk`s, choice after choice: the role (with the first
 * tool call's header, as OpenAI sends it), one chunk per token (or argument fragment), the finish
 * reason; then the usage (if asked and reported) and `[DONE]`. A stall stops after the first
 * two body chunks and leaves the response open; the socket's close (client abort or server close)
 * releases it. A stream error sends, after them, the item OpenAI sends when a stream fails,
 * `data: {"error": {…}}`, and ends without `[DONE]`.
 * Without usage (`[sim:no-usage]`) it behaves as an upstream that ignores `include_usage`.
 * With `paceMs` (`[sim:pace=MS]`), each body chunk after the first goes out MS after the one before.
 */
async function streamChat(
  res: ServerResponse,
  request: ChatRequest,
  replies: readonly Reply[],
  usage: ChatUsage | null,
  id: string,
  end: StreamEnd,
  paceMs: number | undefined,
): Promise<void> {
  const base = { id, object: 'chat.completion.chunk', created: nowSeconds(), model: request.model };
  const includeUsage = request.includeUsage && usage !== null;

  startEventStream(res);
  const out = new SseWriter(res);
  let first = true;
  let bodySent = 0;
  for (const frame of chatFrames(request, replies, base, includeUsage)) {
    const cut = end.kind !== 'whole' && (frame.kind === 'finish' || (frame.kind === 'body' && bodySent === STALL_AFTER_TOKENS));
    if (cut) break;
    if (frame.kind === 'body') {
      if (paceMs !== undefined && bodySent > 0 && !(await out.pause(paceMs))) return;
      bodySent++;
    }
    if (!(await out.push(frame.data))) return;
    // The first chunk goes out at once: time-to-first-token is what callers measure.
    if (first && !(await out.flush())) return;
    first = false;
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
  if (includeUsage) await out.push(dataFrame({ ...base, choices: [], usage }));
  await out.push('data: [DONE]\n\n');
  out.end();
}

function* chatFrames(request: ChatRequest, replies: readonly Reply[], base: { readonly id: string }, includeUsage: boolean): Generator<Frame> {
  // Real OpenAI streams carry `usage: null` on every chunk once include_usage is on.
  const usageField = includeUsage ? { usage: null } : {};
  for (const [index, reply] of replies.entries()) {
    const chunk = (kind: Frame['kind'], delta: object, finish: string | null, logprobs: object | null = null): Frame => ({
      kind,
      data: dataFrame({ ...base, choices: [{ index, delta, logprobs, finish_reason: finish }], ...usageField }),
    });
    if (reply.kind === 'tools') {
      yield* toolCallFrames(request, reply.calls, (delta, kind) => chunk(kind, delta, null), base.id, index);
    } else if (reply.kind === 'refusal' || request.topLogprobs !== undefined) {
      const field = reply.kind === 'refusal' ? 'refusal' : 'content';
      yield chunk('head', reply.kind === 'refusal' ? { role: 'assistant', content: null, refusal: '' } : { role: 'assistant', content: '' }, null);
      for (const [i, piece] of reply.answer.pieces.entries()) {
        const logprob = request.topLogprobs === undefined ? null : [tokenLogprob(piece, i, request.topLogprobs)];
        yield chunk('body', { [field]: piece }, null, logprob === null ? null : { content: field === 'content' ? logprob : null, refusal: field === 'refusal' ? logprob : null });
      }
    } else {
      yield chunk('head', { role: 'assistant', content: '' }, null);
      const tokenFrame = tokenChunkTemplate(base, index, includeUsage);
      for (const piece of reply.answer.pieces) yield { kind: 'body', data: tokenFrame(piece) };
    }
    yield chunk('finish', {}, finishReason(request, reply));
  }
}

/**
 * A choice's tool calls as OpenAI streams them: each call's header (index, id, type, name and
 * empty arguments; the first carries the role), then its argument fragments. Legacy functions
 * stream `function_call` instead, without index or id.
 */
function* toolCallFrames(request: ChatRequest, calls: readonly PlannedCall[], chunk: (delta: object, kind: Frame['kind']) => Frame, id: string, choice: number): Generator<Frame> {
  const role = { role: 'assistant', content: null, refusal: null };
  if (request.legacyFunctions) {
    const call = calls[0]!;
    yield chunk({ ...role, function_call: { name: call.name, arguments: '' } }, 'head');
    for (const fragment of argumentFragments(call.arguments)) yield chunk({ function_call: { arguments: fragment } }, 'body');
    return;
  }
  for (const [i, call] of calls.entries()) {
    const header = { index: i, id: callId(id, choice, i), type: 'function', function: { name: call.name, arguments: '' } };
    yield chunk({ ...(i === 0 ? role : {}), tool_calls: [header] }, i === 0 ? 'head' : 'body');
    for (const fragment of argumentFragments(call.arguments)) yield chunk({ tool_calls: [{ index: i, function: { arguments: fragment } }] }, 'body');
  }
}

/**
 * Per-token chunks are the hot path of a long stream: build them by concatenating a constant
 * prefix and suffix around the JSON-encoded token instead of serialising the whole chunk.
 */
function tokenChunkTemplate(base: { readonly id: string }, index: number, includeUsage: boolean): (piece: string) => string {
  const head = JSON.stringify(base).slice(0, -1); // the base object without its closing brace
  const prefix = `data: ${head},"choices":[{"index":${index},"delta":{"content":`;
  const suffix = `},"logprobs":null,"finish_reason":null}]${includeUsage ? ',"usage":null' : ''}}\n\n`;
  return (piece) => prefix + JSON.stringify(piece) + suffix;
}
