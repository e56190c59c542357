import { ApiError } from './errors';
import { fieldName } from './field-name';

/**
 * The gateway's one rule for text that arrives from a client: no NUL and no lone UTF-16
 * surrogate anywhere, keys included. PostgreSQL refuses both (jsonb and text columns), so text
 * that breaks the rule would fail at the first query or event append, after earlier steps ran.
 */
const UNSAFE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

export function isSafeText(value: string): boolean {
  return !UNSAFE.test(value);
}

interface Visit {
  readonly value: unknown;
  readonly parent: Visit | null;
  /** The member's key or array index within its parent. */
  readonly step: string | number | null;
}

/**
 * The first field of a parsed JSON value (or a query object) holding text that breaks the rule,
 * named as the validators name fields (`messages[0].content`; `body` for the value itself), or
 * null when all is safe. Iterative, and names are built only for the offender: JSON.parse accepts
 * nesting deeper than the call stack.
 */
export function unsafeTextField(value: unknown): string | null {
  const pending: Visit[] = [{ value, parent: null, step: null }];
  while (pending.length > 0) {
    const visit = pending.pop()!;
    const current = visit.value;
    if (typeof current === 'string') {
      if (!isSafeText(current)) return nameOf(visit);
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push({ value: current[i], parent: visit, step: i });
    } else if (current !== null && typeof current === 'object') {
      const keys = Object.keys(current);
      const badKey = keys.find((key) => !isSafeText(key));
      if (badKey !== undefined) return nameOf({ value: null, parent: visit, step: badKey });
      for (let i = keys.length - 1; i >= 0; i--) pending.push({ value: (current as Record<string, unknown>)[keys[i]!], parent: visit, step: keys[i]! });
    }
  }
  return null;
}

function nameOf(visit: Visit): string {
  const steps: (string | number)[] = [];
  for (let v: Visit | null = visit; v && v.step !== null; v = v.parent) steps.push(typeof v.step === 'number' ? v.step : printable(v.step));
  return fieldName(steps.reverse());
}

/** A member name fit for an error message and a log line (the offending characters replaced). */
function printable(name: string): string {
  return name.replace(UNSAFE_ALL, '\uFFFD');
}

/** Refuses a JSON body or a query whose text breaks the rule: 400 naming the first such field. */
export function assertSafeText(value: unknown): void {
  const field = unsafeTextField(value);
  if (field) throw new ApiError(400, 'invalid_request', `${field} must not contain NUL characters or unpaired surrogates`, { param: field });
}
