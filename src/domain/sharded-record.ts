import { entryOf, hasEntry, withEntry, withoutEntry } from './records';

/**
 * A keyed record of an immutable state that holds many entries and changes one at a time (the
 * open reservations of a busy account). As one plain record, every change copied every entry:
 * a reservation and its close copied the whole record twice, about 13 µs a request with 64
 * requests in flight on the account and 50 µs with 256 (a loop), a cost per request that grows
 * with the concurrency, so a total that grows with its square. Here
 * the entries are spread over SHARDS records by a hash of the key, and a change copies the shard
 * array and the one shard the key falls in, whatever the number of entries.
 *
 * In JSON (a snapshot) it is an array of SHARDS records, null for an empty one. A record parsed
 * from JSON has a prototype, so shards are read with entryOf and hasEntry, like every record of
 * a state (records.ts). SHARDS and shardOf are part of that stored form: a snapshot sharded
 * otherwise would miss its entries (a reservation that cannot close), so changing either needs
 * the deciders' snapshotVersion bumped, and a record of another length is refused.
 */
export type ShardedRecord<V> = readonly (Readonly<Record<string, V>> | null)[];

const SHARDS = 32;

export const EMPTY_SHARDED_RECORD: ShardedRecord<never> = Object.freeze(Array.from({ length: SHARDS }, () => null));

/** The shard of `key`: FNV-1a over its UTF-16 code units, reduced. */
function shardOf(record: ShardedRecord<unknown>, key: string): number {
  if (record.length !== SHARDS) throw new Error(`a sharded record has ${SHARDS} shards, not ${record.length}: a snapshot of another shape was read as this one`);
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % SHARDS;
}

/** The entry at `key`, if there is one. */
export function shardedEntry<V>(record: ShardedRecord<V>, key: string): V | undefined {
  const shard = record[shardOf(record, key)];
  return shard ? entryOf(shard, key) : undefined;
}

/** The record with `key` set to `value`. */
export function withShardedEntry<V>(record: ShardedRecord<V>, key: string, value: V): ShardedRecord<V> {
  const i = shardOf(record, key);
  const copy = record.slice();
  copy[i] = withEntry(record[i] ?? {}, key, value);
  return copy;
}

/** The record without `key` (the same record when it has no such entry). */
export function withoutShardedEntry<V>(record: ShardedRecord<V>, key: string): ShardedRecord<V> {
  const i = shardOf(record, key);
  const shard = record[i];
  if (!shard || !hasEntry(shard, key)) return record;
  const copy = record.slice();
  const rest = withoutEntry(shard, key);
  copy[i] = isEmpty(rest) ? null : rest;
  return copy;
}

/** Every entry's value, in no particular order. */
export function shardedValues<V>(record: ShardedRecord<V>): V[] {
  const values: V[] = [];
  for (const shard of record) if (shard) for (const key of Object.keys(shard)) values.push(shard[key]!);
  return values;
}

function isEmpty(record: Readonly<Record<string, unknown>>): boolean {
  for (const _ in record) return false;
  return true;
}
