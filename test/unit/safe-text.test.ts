import { expect } from 'chai';
import { isSafeText, unsafeTextField } from '../../src/http/safe-text';

describe('the text rule (no NUL, no lone surrogate)', () => {
  it('accepts paired surrogates and refuses NUL and lone halves anywhere in a string', () => {
    expect(['', 'plain', '青峦', '😀', 'a😀b'].map(isSafeText)).to.deep.equal([true, true, true, true, true]);
    expect(['\u0000', 'a\u0000', '\ud83d', 'x\ude00', '\ude00\ud83d', '😀\ud83d'].map(isSafeText)).to.deep.equal([false, false, false, false, false, false]);
  });

  it('names the first offending field, keys included, as validators name fields', () => {
    expect(unsafeTextField({ a: 'ok', b: [1, { c: 'x\u0000' }] })).to.equal('b[1].c');
    expect(unsafeTextField({ a: { 'k\ud800': 1 } })).to.equal('a.k\uFFFD');
    expect(unsafeTextField({ m: { 'a.b': '\u0000' } }), 'a name holding a dot reads as one name').to.equal('m["a.b"]');
    expect(unsafeTextField({ first: '\u0000', second: '\u0000' })).to.equal('first');
    expect(unsafeTextField('\u0000')).to.equal('body');
    expect(unsafeTextField({ a: [1, true, null, 'fine'] })).to.equal(null);
  });

  it('walks nesting deeper than the call stack', () => {
    const depth = 200_000;
    const deep = JSON.parse('['.repeat(depth) + '"\\u0000"' + ']'.repeat(depth)) as unknown;
    expect(unsafeTextField(deep)).to.equal(`${'[0]'.repeat(depth)}`);
  });
});
