import { expect } from 'chai';
import { EMPTY_SHARDED_RECORD, shardedEntry, shardedValues, withoutShardedEntry, withShardedEntry, type ShardedRecord } from '../../src/domain/sharded-record';
import { seededRandom as generator } from '../support/seeded-random';

function sortedValues(record: ShardedRecord<number>): number[] {
  return shardedValues(record).sort((a, b) => a - b);
}

describe('sharded records of a state', () => {
  it('answers like a map through a long run of sets and removals, every version left as it was', () => {
    const next = generator(20261126);
    // Ids as the gateway makes them, plus keys that name Object.prototype's members.
    const keys = [...Array.from({ length: 300 }, (_, i) => `rsv_019ac1f2d3e4${i.toString(16).padStart(8, '0')}`), '__proto__', 'constructor', 'toString', ''];
    let record: ShardedRecord<number> = EMPTY_SHARDED_RECORD;
    const model = new Map<string, number>();
    const versions: { record: ShardedRecord<number>; model: Map<string, number> }[] = [];
    for (let step = 0; step < 5000; step++) {
      const key = keys[Math.floor(next() * keys.length)]!;
      if (next() < 0.55) {
        record = withShardedEntry(record, key, step);
        model.set(key, step);
      } else {
        record = withoutShardedEntry(record, key);
        model.delete(key);
      }
      if (step % 250 === 0) {
        versions.push({ record, model: new Map(model) });
        // Through JSON and back, as a snapshot stores it: it answers the same, and changes the same.
        record = JSON.parse(JSON.stringify(record)) as ShardedRecord<number>;
      }
      expect(shardedEntry(record, key), `step ${step}`).to.equal(model.get(key));
    }
    expect(model.size).to.be.greaterThan(50);
    for (const key of keys) expect(shardedEntry(record, key), key).to.equal(model.get(key));
    expect(sortedValues(record)).to.deep.equal([...model.values()].sort((a, b) => a - b));
    for (const version of versions) {
      expect(sortedValues(version.record)).to.deep.equal([...version.model.values()].sort((a, b) => a - b));
      for (const key of keys) expect(shardedEntry(version.record, key)).to.equal(version.model.get(key));
    }
  });

  it('copies only the shard a key falls in, and gives back the same record when the key is absent', () => {
    let record: ShardedRecord<number> = EMPTY_SHARDED_RECORD;
    for (let i = 0; i < 100; i++) record = withShardedEntry(record, `key-${i}`, i);
    const changed = withShardedEntry(record, 'key-100', 100);
    const shared = changed.filter((shard, i) => shard === record[i]).length;
    expect(shared, 'shards shared with the previous version').to.equal(record.length - 1);
    // Spread over the shards: the one copied holds a few of the 101 entries, not all of them.
    const largest = Math.max(...changed.map((shard) => (shard ? Object.keys(shard).length : 0)));
    expect(largest, 'entries in the fullest shard').to.be.below(15);
    expect(withoutShardedEntry(record, 'absent')).to.equal(record);
    expect(shardedEntry(record, 'constructor')).to.equal(undefined);
    expect(shardedEntry(record, 'toString')).to.equal(undefined);
  });

  it('refuses a record of another number of shards rather than miss its entries', () => {
    const other: ShardedRecord<number> = [{ a: 1 }, null];
    expect(() => shardedEntry(other, 'a')).to.throw(/32 shards, not 2/);
    expect(() => withShardedEntry(other, 'b', 2)).to.throw(/32 shards, not 2/);
    expect(() => withoutShardedEntry(other, 'a')).to.throw(/32 shards, not 2/);
  });

  it('leaves an emptied shard null, as the empty record has it', () => {
    const one = withShardedEntry(EMPTY_SHARDED_RECORD, 'only', 1);
    expect(withoutShardedEntry(one, 'only')).to.deep.equal(EMPTY_SHARDED_RECORD);
    expect(JSON.stringify(withoutShardedEntry(one, 'only'))).to.equal(JSON.stringify(EMPTY_SHARDED_RECORD));
    expect(EMPTY_SHARDED_RECORD.every((shard) => shard === null)).to.equal(true);
  });
});
