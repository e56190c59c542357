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
    // A copy has no prototype (see records.ts), and the key did not give it one.
    expect(Object.getPrototypeOf(copy)).to.equal(null);
    expect(Object.keys(copy)).to.deep.equal(['a', 'b', '__proto__']);
    expect(JSON.parse(JSON.stringify(copy))).to.deep.equal(JSON.parse('{"a":1,"b":2,"__proto__":7}'));
    expect(Object.keys(withoutEntry(copy, 'a'))).to.deep.equal(['b', '__proto__']);
    // The same on a record that has a prototype, as one parsed from a snapshot does.
    const parsed = JSON.parse('{"a":1}') as Record<string, number>;
    const fromParsed = withEntry(parsed, '__proto__', 7);
    expect(Object.keys(fromParsed)).to.deep.equal(['a', '__proto__']);
    expect(Object.getPrototypeOf(parsed)).to.equal(Object.prototype);
  });

  it('copies into records without a prototype, where no key reaches Object.prototype', () => {
    const copy = withEntry(record, 'c', 3);
    expect(Object.getPrototypeOf(copy)).to.equal(null);
    expect(Object.getPrototypeOf(withoutEntry(record, 'a'))).to.equal(null);
    expect('constructor' in copy).to.equal(false);
    expect('constructor' in record).to.equal(true);
    expect(JSON.stringify(copy)).to.equal('{"a":1,"b":2,"c":3}');
  });
});
