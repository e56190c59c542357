import { expect } from 'chai';
import { withEntry, withoutEntry } from '../../src/domain/records';

describe('keyed records of a state', () => {
  const record: Readonly<Record<string, number>> = Object.freeze({ a: 1, b: 2 });

  it('sets or replaces one entry in a copy, leaving the record as it was', () => {
    expect(withEntry(record, 'c', 3)).to.deep.equal({ a: 1, b: 2, c: 3 });
    expect(withEntry(record, 'a', 9)).to.deep.equal({ a: 9, b: 2 });
    expect(record).to.deep.equal({ a: 1, b: 2 });
  });

  it('removes one entry in a copy; an absent key copies the record', () => {
    expect(withoutEntry(record, 'a')).to.deep.equal({ b: 2 });
    expect(withoutEntry(record, 'z')).to.deep.equal({ a: 1, b: 2 });
    expect(record).to.deep.equal({ a: 1, b: 2 });
  });

  it('keeps a key named __proto__ as an entry, never as the prototype', () => {
    const copy = withEntry(record, '__proto__', 7);
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype);
    expect(Object.keys(copy)).to.deep.equal(['a', 'b', '__proto__']);
    expect(JSON.parse(JSON.stringify(copy))).to.deep.equal(JSON.parse('{"a":1,"b":2,"__proto__":7}'));
    expect(Object.keys(withoutEntry(copy, 'a'))).to.deep.equal(['b', '__proto__']);
  });
});
