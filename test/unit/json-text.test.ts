import { expect } from 'chai';
import { jsonText, parseRemembered } from '../../src/eventstore/json-text';
import { withChanges } from '../../src/domain/with-changes';
import { rowsFrom } from '../../src/projections-runtime/bulk';

/**
 * An event's data is parsed once from the log's text; a read model that stores it as it is writes
 * that text again instead of encoding the value anew (json-text.ts), and only for the very object
 * the text was parsed into.
 */
describe('JSON text remembered for the values parsed from it', () => {
  // jsonb's output spells numbers and spaces its own way: JSON.stringify would not give this text.
  const TEXT = '{"n": 1.50, "list": [1, "two", null], "nested": {"q": "\\"quoted\\""}}';

  it('gives the text an object or array was parsed from, and encodes anything else', () => {
    const parsed = parseRemembered(TEXT) as { n: number };
    expect(parsed).to.deep.equal({ n: 1.5, list: [1, 'two', null], nested: { q: '"quoted"' } });
    expect(jsonText(parsed)).to.equal(TEXT);
    const list = parseRemembered('[1, 2]');
    expect(jsonText(list)).to.equal('[1, 2]');
    // A copy (an upcast's, with or without changes) is another value as far as the text knows.
    expect(jsonText(withChanges(parsed, { n: 2 }))).to.equal('{"n":2,"list":[1,"two",null],"nested":{"q":"\\"quoted\\""}}');
    expect(jsonText(withChanges(parsed, {}))).to.equal(JSON.stringify(parsed));
    // A sub-object was not parsed on its own.
    expect(jsonText((parsed as unknown as { nested: object }).nested)).to.equal('{"q":"\\"quoted\\""}');
    expect(jsonText(parseRemembered('"text"'))).to.equal('"text"');
    expect(jsonText(parseRemembered('7'))).to.equal('7');
    expect(jsonText({ a: 1 })).to.equal('{"a":1}');
    expect(jsonText(undefined)).to.equal('null');
    expect(jsonText(null)).to.equal('null');
  });

  it('is what a bulk write sends for a jsonb column: the remembered text, JSON for the rest, null for none', () => {
    const parsed = parseRemembered(TEXT);
    const { params } = rowsFrom(
      [
        ['id', 'int'],
        ['details', 'jsonb'],
      ],
      [{ id: 1, details: parsed }, { id: 2, details: { a: [1] } }, { id: 3, details: null }, { id: 4 }],
    );
    expect(params).to.deep.equal(['{1,2,3,4}', `[${TEXT},{"a":[1]},null,null]`]);
  });
});
