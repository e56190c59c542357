import { expect } from 'chai';
import { prepared, statementNamed } from '../../src/db/prepared';

describe('prepared statements', () => {
  it('names a text the same way every time, and two texts differently', () => {
    const a = statementNamed('SELECT 1 WHERE $1::int > 0');
    expect(statementNamed('SELECT 1 WHERE $1::int > 0')).to.equal(a);
    expect(a.text).to.equal('SELECT 1 WHERE $1::int > 0');
    const b = statementNamed('SELECT 2 WHERE $1::int > 0');
    expect(b.name).to.not.equal(a.name);
    // PostgreSQL keeps 63 bytes of an identifier: a longer name would be cut, and two could meet.
    expect(a.name).to.match(/^s_[0-9a-f]{24}$/);
  });

  it('gives each query config of a statement its own values, under one name', () => {
    const [a, b] = [prepared('SELECT $1::int AS n', [198]), prepared('SELECT $1::int AS n', [199])];
    expect([a.name, a.text, a.values, b.values]).to.deep.equal([b.name, 'SELECT $1::int AS n', [198], [199]]);
  });
});
