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
  /** Every directive seen, last one wins: `key=value` → string, bare `flag` → true. */
  readonly raw: Readonly<Record<string, string | true>>;
}

/** Caps keep a typo (or a hostile prompt) from making the simulator allocate or sleep for ages. */
const MAX_TOKENS = 1_000_000;
const MAX_DELAY_MS = 10 * 60 * 1000;

const EMPTY: SimDirectives = Object.freeze({
  fail: false,
  stall: false,
  noResponses: false,
  noUsage: false,
  raw: Object.freeze(Object.create(null) as Record<string, string | true>),
});

// Keys are simple identifiers; values run to the closing bracket (no nesting, no whitespace).
const DIRECTIVE = /\[sim:([A-Za-z0-9_.-]+)(?:=([^\]\s]*))?\]/g;

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
    stall: raw['stall'] !== undefined,
    noResponses: raw['no-responses'] !== undefined,
    noUsage: raw['no-usage'] !== undefined,
    usage: tokenPair(raw['usage']),
    raw,
  };
}

/** Removes directive markers, so echoing a prompt back does not echo the directives. */
export function stripDirectives(text: string): string {
  return text.includes('[sim:') ? text.replace(DIRECTIVE, ' ') : text;
}

function collectRaw(text: string): Record<string, string | true> {
  // A null-prototype object so a key such as `__proto__` or `constructor` is just data.
  const raw: Record<string, string | true> = Object.create(null) as Record<string, string | true>;
  for (const match of text.matchAll(DIRECTIVE)) {
    const key = match[1]!.toLowerCase();
    raw[key] = match[2] ?? true;
  }
  return raw;
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
