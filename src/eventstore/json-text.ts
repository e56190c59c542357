/**
 * The JSON text an object was parsed from, so that writing it again does not encode it again.
 * Events are read from the log as text and parsed once (jsonText's callers need the values);
 * a read model that stores an event's data as it is (the ledger's `details`) writes that text.
 * Keyed by the parsed object itself: a copy, as an upcast makes with its changes, is another
 * object and is encoded afresh, so a text never stands for a value it was not parsed into. An
 * event's values are never changed once read (RecordedEvent), which keeps the text true. The text
 * lives as long as its object: an event kept in memory (the log tail's, a page being folded)
 * holds its data twice, as values and as text.
 */
const texts = new WeakMap<object, string>();

/** `JSON.parse(text)`, remembering `text` for the object or array it gives. */
export function parseRemembered(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (typeof value === 'object' && value !== null) texts.set(value, text);
  return value;
}

/**
 * `value` as JSON text: the text it was parsed from (by parseRemembered), else JSON.stringify's;
 * `null` for what JSON has no text for (undefined, a function), as inside an array. The two texts
 * of one object may differ in spacing, key order and the spelling of numbers (PostgreSQL's jsonb
 * output against JSON.stringify), not in the value, except for a number no double holds exactly
 * (written by something else than the gateway), which the log's text keeps as it is.
 */
export function jsonText(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  return (typeof value === 'object' ? texts.get(value) : undefined) ?? (JSON.stringify(value) as string | undefined) ?? 'null';
}
