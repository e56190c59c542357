import type * as Encoding from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Token counts. A model whose catalog entry names its tokenizer encoding (`tokenizer`, e.g.
 * `o200k_base`) is counted with that BPE encoding (gpt-tokenizer, which bundles its encodings and
 * works offline): the gateway's prompt estimate and its own count of a reply, charged when the
 * upstream reports no usage, then match what the upstream bills.
 *
 * Without an encoding the count is the simple deterministic one, shared with the simulator (which
 * reports usage by it): every CJK character is one token, and every other maximal run of
 * non-whitespace characters is one token. "Whitespace" is exactly what JavaScript's `\s` matches,
 * so `text.split(/\s+/)` agrees with it on non-CJK text. Scanning char codes without regular
 * expressions or allocations keeps it cheap: the simulator counts every answer.
 */

/** The BPE encodings a catalog model may name (see ModelEntry.tokenizer). */
export const TOKENIZER_ENCODINGS = ['o200k_base', 'cl100k_base'] as const;
export type TokenizerEncoding = (typeof TOKENIZER_ENCODINGS)[number];

type BpeCount = (text: string) => number;
const bpeCounts = new Map<TokenizerEncoding, BpeCount>();

/**
 * The encoding's counter, loaded on first use: each encoding is megabytes of merge ranks, so only
 * the encodings a model names are ever loaded, and start-up loads none.
 */
function bpeCount(encoding: TokenizerEncoding): BpeCount {
  let count = bpeCounts.get(encoding);
  if (!count) {
    const module = (encoding === 'o200k_base' ? require('gpt-tokenizer/encoding/o200k_base') : require('gpt-tokenizer/encoding/cl100k_base')) as typeof Encoding;
    // A user's text may contain "<|endoftext|>" and the like: it is text, not a control token.
    const plainText = { disallowedSpecial: new Set<string>() };
    const countWhole: BpeCount = (text) => module.countTokens(text, plainText);
    count = (text) => countInSlices(text, countWhole);
    bpeCounts.set(encoding, count);
  }
  return count;
}

/**
 * The longest run of whitespace, or of other characters, that a BPE count is given whole. The
 * encoder's merges take time quadratic in the length of one piece of its split (gpt-tokenizer
 * 4.0.0), and a piece can be as long as such a run (the pieces are runs of letters, of
 * punctuation or of whitespace, with a character or two of another kind at most): one request
 * holding 100,000 Han characters without a break kept the event loop for 17 s; sliced, 0.4 s.
 * Text without a longer run is not cut, so it is counted exactly as before.
 */
export const MAX_BPE_RUN = 1_000;

/**
 * `countWhole` summed over the slices of `text` cut inside its runs of more than MAX_BPE_RUN
 * whitespace or other characters (every MAX_BPE_RUN characters of such a run, never inside a
 * surrogate pair); `text` itself when it has none. Within a cut run the count can differ by about
 * a token a slice from the whole count: an estimate's error, nowhere near a run's cost.
 */
export function countInSlices(text: string, countWhole: (text: string) => number): number {
  let total = 0;
  let sliceStart = 0;
  let runStart = 0;
  let runIsSpace = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const space = isWhitespace(code);
    if (i === 0 || space !== runIsSpace) {
      runStart = i;
      runIsSpace = space;
    } else if (i - runStart >= MAX_BPE_RUN && !(code >= 0xdc00 && code <= 0xdfff)) {
      total += countWhole(text.slice(sliceStart, i));
      sliceStart = runStart = i;
    }
  }
  return total + countWhole(sliceStart === 0 ? text : text.slice(sliceStart));
}

export interface TokenMessage {
  readonly role: string;
  readonly content: string;
}

/** The kinds of content part a prompt can carry: text is counted, the others reserve an allowance. */
export type ContentPartKind = 'text' | 'image' | 'audio' | 'file';

/** The part types of chat completions and of Responses input, by kind; a type not listed is not counted. */
const PART_KINDS: ReadonlyMap<string, ContentPartKind> = new Map<string, ContentPartKind>([
  ['text', 'text'],
  ['input_text', 'text'],
  ['output_text', 'text'],
  ['refusal', 'text'],
  ['image_url', 'image'],
  ['input_image', 'image'],
  ['input_audio', 'audio'],
  ['file', 'file'],
  ['input_file', 'file'],
]);

/** The kind of a content part's `type` (chat: `image_url`, `input_audio`, `file`; Responses: `input_image`, `input_file`, …). */
export function contentPartKind(type: unknown): ContentPartKind | undefined {
  return typeof type === 'string' ? PART_KINDS.get(type) : undefined;
}

/** The tokens one part of each non-text kind stands for (a model's `part_allowances`); a kind left out counts 0. */
export type PartTokens = { readonly [kind in Exclude<ContentPartKind, 'text'>]?: number };

/** A content part as counted: its text (or refusal), or its kind's allowance. */
export interface TokenContentPart {
  readonly type: string;
  readonly text?: unknown;
  readonly refusal?: unknown;
}

/** A call an assistant turn made: its name and arguments are prompt text. */
export interface TokenToolCall {
  readonly function?: { readonly name?: unknown; readonly arguments?: unknown };
  readonly custom?: { readonly name?: unknown; readonly input?: unknown };
}

/**
 * A chat message of any role as counted: content as a string (TokenMessage), as parts, or none
 * (an assistant turn that only called tools), with the calls it made.
 */
export interface CountedMessage {
  readonly role: string;
  readonly content?: string | readonly TokenContentPart[] | null;
  readonly refusal?: unknown;
  readonly tool_calls?: readonly TokenToolCall[];
  readonly function_call?: { readonly name?: unknown; readonly arguments?: unknown };
}

/** Overheads of the documented chat approximation: per message, and to prime the reply. */
export const TOKENS_PER_MESSAGE = 4;
export const TOKENS_REPLY_PRIMING = 2;

/** The tokens of `text` by `encoding`, or by the simple count when there is none. */
export function countTokens(text: string, encoding?: TokenizerEncoding): number {
  return encoding ? bpeCount(encoding)(text) : countSimpleTokens(text);
}

function countSimpleTokens(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const cjk = cjkLength(text, i, code);
    if (cjk > 0) {
      count++;
      inWord = false;
      i += cjk - 1;
    } else if (isWhitespace(code)) {
      inWord = false;
    } else if (!inWord) {
      count++;
      inWord = true;
    }
  }
  return count;
}

/** The tokens of one text, by whatever encoding and memory the caller counts with (PromptTokenMemo). */
export type TextTokenCounter = (text: string) => number;

/** A counter of texts: `by` itself, or countTokens by that encoding (the simple count when none). */
function counterOf(by: TokenizerEncoding | TextTokenCounter | undefined): TextTokenCounter {
  return typeof by === 'function' ? by : (text) => countTokens(text, by);
}

/**
 * Sum over messages of (tokens of the content + 4), plus 2; each content counted by `by` (an
 * encoding or a counter). A string content is counted whole, as always; content parts count their
 * texts and each non-text part its kind's tokens in `parts`; an assistant turn's refusal and the
 * names and arguments of the calls it made count as text.
 */
export function countMessageTokens(messages: readonly CountedMessage[], by?: TokenizerEncoding | TextTokenCounter, parts: PartTokens = {}): number {
  const count = counterOf(by);
  let total = TOKENS_REPLY_PRIMING;
  for (const message of messages) {
    const content = message.content;
    total += (typeof content === 'string' ? count(content) : content ? countParts(content, count, parts) : 0) + TOKENS_PER_MESSAGE;
    if (message.tool_calls !== undefined || message.function_call !== undefined || typeof message.refusal === 'string') total += countCalls(message, count);
  }
  return total;
}

function countParts(content: readonly TokenContentPart[], count: TextTokenCounter, parts: PartTokens): number {
  let total = 0;
  for (const part of content) {
    const kind = contentPartKind(part.type);
    if (kind === 'text') total += countText(part.text, count) + countText(part.refusal, count);
    else if (kind !== undefined) total += parts[kind] ?? 0;
  }
  return total;
}

function countCalls(message: CountedMessage, count: TextTokenCounter): number {
  let total = countText(message.refusal, count);
  for (const call of message.tool_calls ?? []) {
    total += countText(call.function?.name, count) + countText(call.function?.arguments, count) + countText(call.custom?.name, count) + countText(call.custom?.input, count);
  }
  return total + countText(message.function_call?.name, count) + countText(message.function_call?.arguments, count);
}

function countText(text: unknown, count: TextTokenCounter): number {
  return typeof text === 'string' && text !== '' ? count(text) : 0;
}

/** What a chat request's prompt carries besides its messages: tool and function definitions, a structured output's schema. */
export interface ChatPromptExtras {
  readonly tools?: unknown;
  readonly functions?: unknown;
  readonly response_format?: { readonly json_schema?: unknown };
}

/**
 * A chat request's whole prompt: its messages (countMessageTokens) and, counted as their JSON
 * text, its tool and function definitions and its structured output's schema, which the provider
 * reads as prompt too. A request without them is counted exactly as its messages.
 */
export function countChatPromptTokens(request: ChatPromptExtras & { readonly messages: readonly CountedMessage[] }, by?: TokenizerEncoding | TextTokenCounter, parts: PartTokens = {}): number {
  const count = counterOf(by);
  let total = countMessageTokens(request.messages, count, parts);
  if (request.tools !== undefined) total += count(JSON.stringify(request.tools));
  if (request.functions !== undefined) total += count(JSON.stringify(request.functions));
  if (request.response_format?.json_schema !== undefined) total += count(JSON.stringify(request.response_format.json_schema));
  return total;
}

/**
 * The tokens of one message's content: a string by the text rule (exactly countTokens); an array
 * of parts: each part's `text` (or a refusal part's `refusal`) by the text rule, and each image,
 * audio or file part `parts[kind]` tokens, whatever its size.
 */
export function countContentTokens(content: unknown, parts: PartTokens, by?: TokenizerEncoding | TextTokenCounter): number {
  const count = counterOf(by);
  if (typeof content === 'string') return count(content);
  if (!Array.isArray(content)) return 0;
  let total = partTokens(content, parts);
  for (const part of content) {
    const { text, refusal } = (typeof part === 'object' && part !== null ? part : {}) as { text?: unknown; refusal?: unknown };
    if (typeof text === 'string') total += count(text);
    else if (typeof refusal === 'string') total += count(refusal);
  }
  return total;
}

/** Σ of `parts[kind]` over the image, audio and file parts of `content` (0 for a string). */
function partTokens(content: unknown, parts: PartTokens): number {
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content) {
    const kind = contentPartKind(typeof part === 'object' && part !== null ? (part as { type?: unknown }).type : undefined);
    if (kind !== undefined && kind !== 'text') total += parts[kind] ?? 0;
  }
  return total;
}

/** No tokens for parts: the counts of text alone. */
const NO_PART_TOKENS: PartTokens = {};

/** The text-rule tokens of a function's `name`, `description`, `arguments` and JSON `parameters`, whichever it has. */
function functionTokens(fn: unknown, count: TextTokenCounter): number {
  if (typeof fn !== 'object' || fn === null) return 0;
  const { name, description, arguments: args, parameters } = fn as { name?: unknown; description?: unknown; arguments?: unknown; parameters?: unknown };
  let total = 0;
  for (const text of [name, description, args]) if (typeof text === 'string') total += count(text);
  if (parameters !== undefined) total += count(JSON.stringify(parameters) ?? '');
  return total;
}

/**
 * Splits `text` into pieces that each carry exactly one token, whitespace attached to the token
 * that follows it (leading and trailing whitespace of `text` to the first and last piece), so
 * that `pieces.length === countTokens(text)` (the simple count) and, unless `text` is only whitespace,
 * `pieces.join('') === text`. Streams send one piece per chunk; truncating to N tokens is taking
 * the first N pieces.
 */
export function splitTokens(text: string): string[] {
  const pieces: string[] = [];
  let start = 0; // where the pending piece begins
  let tokenEnd = 0; // just after the last non-whitespace character seen
  let pendingHasToken = false;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const cjk = cjkLength(text, i, code);
    const whitespace = cjk === 0 && isWhitespace(code);
    if (cjk > 0 || (!inWord && !whitespace)) {
      // A token starts: the pending one ends with its last character, so the whitespace in
      // between leads the new piece (" word", like the leading spaces of real tokenizers).
      if (pendingHasToken) {
        pieces.push(text.slice(start, tokenEnd));
        start = tokenEnd;
      }
      pendingHasToken = true;
    }
    inWord = cjk === 0 && !whitespace;
    if (!whitespace) tokenEnd = i + Math.max(cjk, 1);
    if (cjk > 1) i += cjk - 1;
  }
  if (pendingHasToken) pieces.push(text.slice(start));
  return pieces;
}

/**
 * 1 or 2 (a surrogate pair) if a CJK character starts at `i`, else 0. Covers Han (BMP, extension A,
 * compatibility ideographs, and the supplementary planes 2 and 3), kana and Hangul syllables.
 */
function cjkLength(text: string, i: number, code: number): number {
  if (code < 0x3040) return 0; // everything below (ASCII, Latin, Cyrillic...) is not CJK
  if (
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x3040 && code <= 0x30ff) ||
    (code >= 0xac00 && code <= 0xd7af) ||
    (code >= 0xf900 && code <= 0xfaff)
  ) {
    return 1;
  }
  // High surrogates 0xD840..0xD8BF encode planes 2 and 3 (U+20000..U+3FFFF): CJK extensions B+.
  if (code >= 0xd840 && code <= 0xd8bf) {
    const low = text.charCodeAt(i + 1);
    if (low >= 0xdc00 && low <= 0xdfff) return 2;
  }
  return 0;
}

/** Exactly the characters JavaScript's `\s` matches. */
function isWhitespace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** The texts of a Responses input item: its content (a string or text parts), or a tool output string. */
export function responsesItemTexts(item: unknown): string[] {
  if (typeof item !== 'object' || item === null) return [];
  const { content, output } = item as { content?: unknown; output?: unknown };
  if (typeof content === 'string') return [content];
  if (Array.isArray(content)) {
    return content.flatMap((part: unknown) => {
      const text = typeof part === 'object' && part !== null ? (part as { text?: unknown }).text : undefined;
      return typeof text === 'string' ? [text] : [];
    });
  }
  return typeof output === 'string' ? [output] : [];
}

/**
 * Responses input: a string is one item; Σ over items of (tokens of its texts + each image, audio
 * or file part's `parts` tokens + a function call's name and arguments + 4), plus 2; `by` as in
 * countMessageTokens. Without `parts`, parts count nothing (the count before parts were taken).
 */
export function countResponsesInputTokens(input: string | readonly unknown[], by?: TokenizerEncoding | TextTokenCounter, parts: PartTokens = NO_PART_TOKENS): number {
  const count = counterOf(by);
  if (typeof input === 'string') return TOKENS_REPLY_PRIMING + TOKENS_PER_MESSAGE + count(input);
  let total = TOKENS_REPLY_PRIMING;
  for (const item of input) {
    total += TOKENS_PER_MESSAGE;
    for (const text of responsesItemTexts(item)) total += count(text);
    const { type, content } = (typeof item === 'object' && item !== null ? item : {}) as { type?: unknown; content?: unknown };
    total += partTokens(content, parts);
    if (type === 'function_call') total += functionTokens(item, count);
  }
  return total;
}

/** The Responses API's usage object in full (the official SDK's type requires the details). */
export interface ResponsesUsageObject {
  readonly input_tokens: number;
  readonly input_tokens_details: { readonly cached_tokens: number; readonly cache_write_tokens: number };
  readonly output_tokens: number;
  readonly output_tokens_details: { readonly reasoning_tokens: number };
  readonly total_tokens: number;
}

/** `cached` of the input and `reasoning` of the output tokens, 0 unless given. */
export function responsesUsageObject(inputTokens: number, outputTokens: number, details: { readonly cached?: number; readonly reasoning?: number } = {}): ResponsesUsageObject {
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: details.cached ?? 0, cache_write_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: details.reasoning ?? 0 },
    total_tokens: inputTokens + outputTokens,
  };
}
