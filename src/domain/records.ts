/**
 * Copies of a state's keyed records (open reservations, remembered outcomes, keys) with one entry
 * set or removed. Evolve runs for every event, and these records hold dozens of entries on a busy
 * account: copied by a for-in loop they cost about a quarter of an object spread or a rest
 * destructuring, which V8 takes through its slow generic path once a record has many keys.
 */

/** The record with `key` set to `value`. */
export function withEntry<V>(record: Readonly<Record<string, V>>, key: string, value: V): Record<string, V> {
  const copy = withoutEntry(record, key);
  put(copy, key, value);
  return copy;
}

/** The record without `key`. */
export function withoutEntry<V>(record: Readonly<Record<string, V>>, key: string): Record<string, V> {
  const copy: Record<string, V> = {};
  for (const k in record) if (k !== key) put(copy, k, record[k]!);
  return copy;
}

function put<V>(record: Record<string, V>, key: string, value: V): void {
  // An assignment to `__proto__` would set the prototype: that key is defined as an own entry.
  if (key === '__proto__') Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}
