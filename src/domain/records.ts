/**
 * Copies of a state's keyed records (remembered outcomes, keys, the shards of the open
 * reservations: sharded-record.ts) with one entry set or removed. Evolve runs for every event, and
 * these records hold dozens of entries on a busy account: copied by a for-in loop they cost about
 * a quarter of an object spread or a rest destructuring, which V8 takes through its slow generic
 * path once a record has many keys.
 *
 * A copy has no prototype. V8 keeps such an object as a hash table from the start, where an
 * ordinary object, filled key by key with ids never seen before, walks a new hidden class for
 * each key: that made the copies most of a settlement's decision (14 µs of it in a loop, 4 µs
 * now). A record that has a prototype still comes in (a state's first records, and every record
 * parsed from a snapshot), so entries are read with entryOf and hasEntry, never by indexing: the
 * same state then answers the same whatever its records' origin, and a key such as `constructor`
 * never finds something of Object.prototype's.
 */

/** The record's own entry at `key`, if it has one. */
export function entryOf<V>(record: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Whether the record has an entry of its own at `key`. */
export function hasEntry(record: Readonly<Record<string, unknown>>, key: string): boolean {
  return Object.hasOwn(record, key);
}

/** The record with `key` set to `value`. */
export function withEntry<V>(record: Readonly<Record<string, V>>, key: string, value: V): Record<string, V> {
  const copy = withoutEntry(record, key);
  copy[key] = value;
  return copy;
}

/** The record without `key`. */
export function withoutEntry<V>(record: Readonly<Record<string, V>>, key: string): Record<string, V> {
  // Without a prototype there is no `__proto__` setter either: that key is an entry like any other.
  const copy = Object.create(null) as Record<string, V>;
  for (const k in record) if (k !== key) copy[k] = record[k]!;
  return copy;
}
