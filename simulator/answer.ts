/**
 * What the simulated chat model says, shared by the chat-completions and Responses protocols
 * (chat.ts, responses.ts): the answer text, a refusal, structured JSON, or tool calls, all steered
 * by `[sim:...]` directives; and the request-level steps both protocols take before answering.
 */
import type { ServerResponse } from 'node:http';
import { stripDirectives, type SimDirectives } from './directives';
import { passGate } from './gates';
import { HttpError, codeForStatus, sendError, waitUnlessGone } from './http';
import { sampleJson } from './json-sample';
import { countTokens, splitTokens, type PartTokens } from '../src/billing/tokens';

/** How many tokens (or argument fragments) a `[sim:stall]` or `[sim:stream-error]` stream sends before it stops. */
export const STALL_AFTER_TOKENS = 2;
/** How many words of the prompt the default answer echoes. */
const ECHO_WORDS = 8;
/** The characters of a tool call's arguments per streamed fragment. */
const ARGUMENT_FRAGMENT_CHARS = 8;
/** Reasoning tokens a request that asks for reasoning spends without `[sim:reasoning=N]`. */
export const DEFAULT_REASONING_TOKENS = 16;

/**
 * The prompt tokens the simulated model counts per image, audio and file part, whatever its
 * size: at or below the catalog's part allowances (image 1000, audio 2000, file 4000), so the
 * gateway's reservation covers them. 765 is what OpenAI bills a 1024×1024 high-detail image.
 */
export const SIM_PART_TOKENS: Required<PartTokens> = { image: 765, audio: 1500, file: 3000 };

export const REFUSAL_TEXT = "I'm sorry, but I can't help with that request.";

export type FinishReason = 'stop' | 'length';

export interface Answer {
  /** One token per piece; `pieces.join('') === text`. */
  readonly pieces: readonly string[];
  readonly text: string;
  readonly finish: FinishReason;
}

/** The answer to a prompt: N words with `[sim:tokens=N]`, else an echo; cut at `maxTokens`. */
export function planAnswer(prompt: string, directives: SimDirectives, maxTokens: number | undefined): Answer {
  return cutAnswer(directives.tokens !== undefined ? numberedWords(directives.tokens) : echoAnswer(prompt), maxTokens);
}

/** `full` as an answer, its first `maxTokens` tokens when longer (finish `length`). */
export function cutAnswer(full: string, maxTokens: number | undefined): Answer {
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

/** The answer after a tool result: an echo of the result, so a client's tool loop ends. */
export function toolResultAnswer(result: string, directives: SimDirectives, maxTokens: number | undefined): Answer {
  if (directives.tokens !== undefined) return planAnswer('', directives, maxTokens);
  const words = result.split(/\s+/).filter(Boolean).slice(0, ECHO_WORDS);
  return cutAnswer(`Simulated answer from the tool result: ${words.length > 0 ? words.join(' ') : '(empty)'}`, maxTokens);
}

// ---------------------------------------------------------------------------------------------
// Structured output

/** The output format a request asks for: text, some JSON object, or JSON satisfying a schema. */
export type OutputFormat = { readonly kind: 'text' } | { readonly kind: 'json_object' } | { readonly kind: 'json_schema'; readonly schema: unknown };

export const TEXT_FORMAT: OutputFormat = { kind: 'text' };

/** Chat's `response_format` or Responses' `text.format` (the same members, json_schema nested on chat). */
export function outputFormatOf(format: unknown): OutputFormat {
  if (!isRecord(format)) return TEXT_FORMAT;
  if (format['type'] === 'json_object') return { kind: 'json_object' };
  if (format['type'] !== 'json_schema') return TEXT_FORMAT;
  const nested = format['json_schema'];
  return { kind: 'json_schema', schema: isRecord(nested) ? nested['schema'] : format['schema'] };
}

/**
 * The JSON text of a structured answer, spaced (`{ "a": 1 }`) so that it splits into several
 * tokens and streams in several deltas; `[sim:tokens=N]` does not apply (the JSON must parse).
 */
export function structuredText(format: OutputFormat, prompt: string): string {
  const value = format.kind === 'json_schema' ? sampleJson(format.schema) : { answer: echoAnswer(prompt) };
  // JSON.stringify escapes line breaks inside strings, so every line break here is layout.
  return JSON.stringify(value, null, 1).replace(/\n */g, ' ');
}

// ---------------------------------------------------------------------------------------------
// Tool calls

/** A function the request offers the model. */
export interface ToolSpec {
  readonly name: string;
  readonly parameters: unknown;
}

/** Which tool the request lets (or makes) the model call. */
export type ToolChoice = { readonly kind: 'auto' | 'none' | 'required' } | { readonly kind: 'named'; readonly name: string };

export interface PlannedCall {
  readonly name: string;
  /** The arguments' JSON text. */
  readonly arguments: string;
}

/**
 * The calls the model makes: none when no tool is offered or `tool_choice` is `none`; the named
 * function when `tool_choice` names one; else the offered tools `[sim:tool=A,B]` names (one
 * unless parallel calls are allowed), or the first tool when `tool_choice` is `required`.
 * Arguments: `[sim:tool-args={…}]`, else a value of the tool's parameters schema.
 */
export function planToolCalls(tools: readonly ToolSpec[], choice: ToolChoice, directives: SimDirectives, parallel: boolean): PlannedCall[] {
  if (tools.length === 0 || choice.kind === 'none') return [];
  let chosen: ToolSpec[];
  if (choice.kind === 'named') {
    chosen = tools.filter((tool) => tool.name === choice.name).slice(0, 1);
  } else {
    chosen = (directives.tools ?? []).flatMap((name) => tools.filter((tool) => tool.name === name).slice(0, 1));
    if (chosen.length === 0 && choice.kind === 'required') chosen = [tools[0]!];
  }
  if (!parallel) chosen = chosen.slice(0, 1);
  return chosen.map((tool) => ({ name: tool.name, arguments: JSON.stringify(directives.toolArgs ?? sampleJson(tool.parameters)) }));
}

/** The completion tokens of tool calls: each call's name and arguments by the shared text rule. */
export function toolCallTokens(calls: readonly PlannedCall[]): number {
  let total = 0;
  for (const call of calls) total += countTokens(call.name) + countTokens(call.arguments);
  return total;
}

/** A call's arguments in the fragments a stream sends them in. */
export function argumentFragments(args: string): string[] {
  const fragments: string[] = [];
  for (let i = 0; i < args.length; i += ARGUMENT_FRAGMENT_CHARS) fragments.push(args.slice(i, i + ARGUMENT_FRAGMENT_CHARS));
  return fragments;
}

/** The cached prompt tokens `[sim:cached=N]` asks for, at most the prompt's. */
export function cachedTokens(directives: SimDirectives, promptTokens: number): number {
  return Math.min(directives.cached ?? 0, promptTokens);
}

/** Reasoning tokens: `[sim:reasoning=N]`, else the default when the request asks for reasoning, else 0. */
export function reasoningTokens(directives: SimDirectives, requested: boolean): number {
  return directives.reasoning ?? (requested ? DEFAULT_REASONING_TOKENS : 0);
}

// ---------------------------------------------------------------------------------------------
// Request steps both protocols share

/**
 * Applies the directives that precede any answer: a gate, the delay, then a forced error, then a
 * non-stream stall (which never answers). Returns false when the handler must not answer.
 */
export async function preamble(res: ServerResponse, directives: SimDirectives, stream: boolean): Promise<boolean> {
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
export type StreamEnd = { readonly kind: 'whole' } | { readonly kind: 'stall' } | { readonly kind: 'error'; readonly code: string };

export function streamEnd(directives: SimDirectives): StreamEnd {
  if (directives.stall) return { kind: 'stall' };
  return directives.streamError === undefined ? { kind: 'whole' } : { kind: 'error', code: directives.streamError };
}

/** The message of a `[sim:stream-error=CODE]` error. */
export function streamErrorMessage(code: string): string {
  return `Simulated provider error in the stream (${code})`;
}

/** A positive integer limit, or undefined when absent or not usable. */
export function tokenLimit(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function requireModel(body: Record<string, unknown>): string {
  const model = body['model'];
  if (typeof model !== 'string' || model === '') {
    throw new HttpError(400, 'you must provide a model parameter', 'missing_required_parameter', 'model');
  }
  return model;
}

export function requireObject(body: unknown): Record<string, unknown> {
  if (!isRecord(body)) throw new HttpError(400, 'The request body must be a JSON object.', 'invalid_request');
  return body;
}

/**
 * The text of a message's content: a string, or the `text` of each part of an array (chat
 * `text`, Responses `input_text`/`output_text`) joined by newlines, so the token count of the
 * join equals the sum of the parts' counts.
 */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (isRecord(part) && typeof part['text'] === 'string') texts.push(part['text']);
  }
  return texts.join('\n');
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
