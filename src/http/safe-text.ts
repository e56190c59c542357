import { ApiError } from './errors';

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

/**
 * The first field of a parsed JSON value (or a query object) holding text that breaks the rule,
 * named as the validators name fields (`messages[0].content`; `body` for the value itself), or
 * null when all is safe. Iterative: JSON.parse accepts nesting deeper than the call stack.
 */
export function unsafeTextField(value: unknown): string | null {
  const pending: { value: unknown; field: string }[] = [{ value, field: '' }];
  while (pending.length > 0) {
    const { value: current, field } = pending.pop()!;
    if (typeof current === 'string') {
      if (!isSafeText(current)) return printable(field || 'body');
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push({ value: current[i], field: `${field}[${i}]` });
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current).map(([key, member]) => ({ key, value: member, field: field ? `${field}.${key}` : key }));
      const badKey = entries.find((e) => !isSafeText(e.key));
      if (badKey) return printable(badKey.field);
      for (let i = entries.length - 1; i >= 0; i--) pending.push(entries[i]!);
    }
  }
  return null;
}

/** A field name fit for an error message and a log line (the offending characters replaced). */
function printable(name: string): string {
  return name.replace(UNSAFE_ALL, '\uFFFD');
}

/** Refuses a JSON body or a query whose text breaks the rule: 400 naming the first such field. */
export function assertSafeText(value: unknown): void {
  const field = unsafeTextField(value);
  if (field) throw new ApiError(400, 'invalid_request', `${field} must not contain NUL characters or unpaired surrogates`, { param: field });
}
