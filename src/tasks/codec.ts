/**
 * How a task kind's own data (its request, result and usage) crosses the event store: events and
 * the `tasks` view keep plain JSON objects; a kind works with its own types. The engine encodes
 * on write (the request at creation, the upstream's result and usage when a poll succeeds) and
 * decodes on read (before any method of the kind sees a task or a row).
 *
 * Decoding is shallow by design: the data was written by the gateway itself through the same
 * codec, so a decode checks that the object is there with the members its type requires (a
 * stream from an older release missing one fails loudly here, not as an `undefined` deep inside
 * a kind) without re-validating every nested value on every read.
 */

/** A kind's data as events and the view store it. */
export type TaskData = Readonly<Record<string, unknown>>;

export interface Codec<T> {
  decode(raw: TaskData): T;
  encode(value: T): Record<string, unknown>;
}

/** Recorded data that does not decode as its kind's type (written by another release, or corrupt). */
export class TaskDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskDataError';
  }
}

function hasMembers<T extends object>(raw: TaskData, required: readonly string[]): raw is TaskData & T {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) && required.every((member) => Object.prototype.hasOwnProperty.call(raw, member));
}

/** The members of T that are not optional. */
export type RequiredMembers<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T] & string;

/**
 * The codec of a JSON object type: decoding requires the type's required members, encoding copies
 * the members into a plain object. `members` names every required member (the compiler checks
 * that none is left out, so a member added to the type is added here too).
 */
export function objectCodec<T extends object>(label: string, members: { readonly [K in RequiredMembers<T>]: true }): Codec<T> {
  const required = Object.keys(members);
  return {
    decode(raw) {
      if (hasMembers<T>(raw, required)) return raw;
      const missing = required.filter((member) => !(raw && Object.prototype.hasOwnProperty.call(raw, member)));
      throw new TaskDataError(`recorded ${label} is not a ${label}: missing ${missing.join(', ')}`);
    },
    encode: (value) => Object.fromEntries(Object.entries(value)),
  };
}

/** The codec of a kind whose result or usage carries nothing (it is recorded as `{}`). */
export type NoData = Readonly<Record<string, never>>;
export const NO_DATA: Codec<NoData> = objectCodec<NoData>('empty record', {});

/** The codec of data a kind keeps as an open record (members merged in from several stages). */
export const OPEN_DATA: Codec<TaskData> = { decode: (raw) => raw, encode: (value) => ({ ...value }) };
