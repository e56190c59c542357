/**
 * Simulator directives: `[sim:key=value]` or `[sim:flag]` markers a caller writes anywhere in a
 * prompt to steer the fake upstream (answer length, errors, latency, stalls). Shared by every
 * simulator (chat now; video and images later), so the parser knows nothing about protocols:
 * it exposes the well-known directives as typed fields and everything it saw in `raw`.
 */

export interface SimDirectives {
  /** `[sim:tokens=N]`: the answer has exactly N completion tokens (N words). */
  readonly tokens?: number;
  /** `[sim:fail]`: answer HTTP 500 with an OpenAI error body. */
  readonly fail: boolean;
  /** `[sim:status=NNN]` (400..599): answer HTTP NNN with an OpenAI error body. */
  readonly status?: number;
  /** `[sim:retry-after=V]`: the error answer of `status` (or `fail`) carries `Retry-After: V`, as given. */
  readonly retryAfter?: string;
  /**
   * `[sim:stream-error=CODE]`: a stream sends its first tokens, then the provider's error with
   * code CODE in the protocol's shape, and ends.
   */
  readonly streamError?: string;
  /** `[sim:delay=MS]`: wait MS milliseconds before the first byte of the answer. */
  readonly delayMs?: number;
  /**
   * `[sim:pace=MS]`: a stream sends each token (or argument fragment) after its first MS after
   * the one before, each in a write of its own: a stream that lasts as long as a real one.
   */
  readonly paceMs?: number;
  /** `[sim:stall]`: a stream sends its first chunk(s) then nothing more, without ending. */
  readonly stall: boolean;
  /** `[sim:no-responses]`: the Responses path answers 404, as an upstream without it would. */
  readonly noResponses: boolean;
  /** `[sim:no-usage]`: the answer, plain or streamed, carries no usage, as some upstreams do. */
  readonly noUsage: boolean;
  /**
   * `[sim:usage=P,C]`: the usage reports P prompt (input) and C completion (output) tokens,
   * whatever the text: proves that a caller bills the reported usage, not its own count.
   */
  readonly usage?: { readonly prompt: number; readonly completion: number };
  /** `[sim:tool=NAME]` or `[sim:tool=A,B]`: the model calls these tools (of those the request lists), in this order. */
  readonly tools?: readonly string[];
  /** `[sim:tool-args={…}]`: the arguments of every tool call, a JSON object (spaces and brackets inside allowed). */
  readonly toolArgs?: Readonly<Record<string, unknown>>;
  /** `[sim:refusal]`: the model refuses (chat `message.refusal`, Responses a `refusal` part). */
  readonly refusal: boolean;
  /** `[sim:cached=N]`: N of the prompt tokens were read from the cache (at most the prompt's tokens). */
  readonly cached?: number;
  /** `[sim:reasoning=N]`: the model spent N reasoning tokens, counted inside the completion tokens. */
  readonly reasoning?: number;
  /** `[sim:web-search=N]`: N web search calls before the message (Responses, when the request lists the tool). */
  readonly webSearch?: number;
  /** `[sim:image-generation=N]`: N image generation calls before the message (Responses, likewise). */
  readonly imageGeneration?: number;
  /** Every directive seen, last one wins: `key=value` → string, bare `flag` → true. */
  readonly raw: Readonly<Record<string, string | true>>;
}

/** Caps keep a typo (or a hostile prompt) from making the simulator allocate or sleep for ages. */
const MAX_TOKENS = 1_000_000;
const MAX_DELAY_MS = 10 * 60 * 1000;
/** Built-in tool calls of one response: enough for any test, too few to cost memory. */
const MAX_TOOL_CALLS = 16;

const EMPTY: SimDirectives = Object.freeze({
  fail: false,
  stall: false,
  noResponses: false,
  noUsage: false,
  refusal: false,
  raw: Object.freeze(Object.create(null) as Record<string, string | true>),
});

// Keys are simple identifiers; values run to the closing bracket (no nesting, no whitespace),
// except a value that opens with `{`: that one is a JSON object, read to its balanced closing brace
// (strings respected), so arguments such as `{"cities": ["Paris", "Rome"]}` survive as written.
const DIRECTIVE = /\[sim:([A-Za-z0-9_.-]+)(?:=([^\]\s]*))?\]/g;
const JSON_DIRECTIVE_HEAD = /\[sim:([A-Za-z0-9_.-]+)=\{/g;

/** Parses every `[sim:...]` directive in `text`. Unknown keys land only in `raw`. */
export function parseDirectives(text: string): SimDirectives {
  // Fast path: almost every benchmark prompt has no directive at all.
  if (!text.includes('[sim:')) return EMPTY;
  const raw = collectRaw(text);
  return {
    tokens: intInRange(raw['tokens'], 0, MAX_TOKENS),
    fail: raw['fail'] !== undefined,
    status: intInRange(raw['status'], 400, 599),
    retryAfter: nonEmptyValue(raw['retry-after']),
    streamError: nonEmptyValue(raw['stream-error']),
    delayMs: intInRange(raw['delay'], 0, MAX_DELAY_MS),
    paceMs: intInRange(raw['pace'], 0, MAX_DELAY_MS),
    stall: raw['stall'] !== undefined,
    noResponses: raw['no-responses'] !== undefined,
    noUsage: raw['no-usage'] !== undefined,
    usage: tokenPair(raw['usage']),
    tools: nameList(raw['tool']),
    toolArgs: jsonObject(raw['tool-args']),
    refusal: raw['refusal'] !== undefined,
    cached: intInRange(raw['cached'], 0, MAX_TOKENS),
    reasoning: intInRange(raw['reasoning'], 0, MAX_TOKENS),
    webSearch: intInRange(raw['web-search'], 0, MAX_TOOL_CALLS),
    imageGeneration: intInRange(raw['image-generation'], 0, MAX_TOOL_CALLS),
    raw,
  };
}

/** Removes directive markers, so echoing a prompt back does not echo the directives. */
export function stripDirectives(text: string): string {
  if (!text.includes('[sim:')) return text;
  let plain = '';
  let from = 0;
  for (const found of jsonDirectives(text)) {
    plain += text.slice(from, found.start) + ' ';
    from = found.end;
  }
  return (plain + text.slice(from)).replace(DIRECTIVE, ' ');
}

function collectRaw(text: string): Record<string, string | true> {
  // A null-prototype object so a key such as `__proto__` or `constructor` is just data.
  const raw: Record<string, string | true> = Object.create(null) as Record<string, string | true>;
  for (const match of text.matchAll(DIRECTIVE)) {
    const key = match[1]!.toLowerCase();
    raw[key] = match[2] ?? true;
  }
  // JSON values win over what the plain pattern made of them (it stops at the first space or `]`).
  for (const found of jsonDirectives(text)) raw[found.key] = found.value;
  return raw;
}

interface JsonDirective {
  readonly key: string;
  readonly value: string;
  /** Where the directive starts and just after its closing `]`. */
  readonly start: number;
  readonly end: number;
}

/** Every `[sim:key={…}]` whose braces balance and whose closing brace is followed by `]`. */
function* jsonDirectives(text: string): Generator<JsonDirective> {
  if (!text.includes('={')) return;
  for (const match of text.matchAll(JSON_DIRECTIVE_HEAD)) {
    const open = match.index + match[0].length - 1;
    const close = balancedBraceEnd(text, open);
    if (close === -1 || text[close + 1] !== ']') continue;
    yield { key: match[1]!.toLowerCase(), value: text.slice(open, close + 1), start: match.index, end: close + 2 };
  }
}

/** The index of the `}` closing the `{` at `open`, skipping braces inside JSON strings; -1 when none. */
function balancedBraceEnd(text: string, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === '{') {
      depth++;
    } else if (c === '}' && --depth === 0) {
      return i;
    }
  }
  return -1;
}

/** `A,B`: tool names, or undefined when none. */
function nameList(value: string | true | undefined): string[] | undefined {
  if (typeof value !== 'string') return undefined;
  const names = value.split(',').filter(Boolean);
  return names.length > 0 ? names : undefined;
}

/** A JSON object as written, or undefined when the value is not one. */
function jsonObject(value: string | true | undefined): Record<string, unknown> | undefined {
  if (typeof value !== 'string' || !value.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(value) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `P,C`: two token counts, or undefined when malformed. */
function tokenPair(value: string | true | undefined): { prompt: number; completion: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const [p, c, ...more] = value.split(',');
  if (more.length > 0) return undefined;
  const prompt = intInRange(p, 0, MAX_TOKENS);
  const completion = intInRange(c, 0, MAX_TOKENS);
  return prompt !== undefined && completion !== undefined ? { prompt, completion } : undefined;
}

/** A directive's value as written, or undefined for a bare flag or an empty value. */
function nonEmptyValue(value: string | true | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A decimal integer within [min, max], or undefined (a malformed directive is ignored). */
function intInRange(value: string | true | undefined, min: number, max: number): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) return undefined;
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
}

/** `sim` query values of a URL as prompt directives: `fail,delay=5` → `[sim:fail] [sim:delay=5]`. */
export function directivesOfUrl(url: string): SimDirectives {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return parseDirectives('');
  }
  const markers = parsed.searchParams
    .getAll('sim')
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean)
    .map((v) => `[sim:${v}]`);
  return parseDirectives(markers.join(' '));
}
