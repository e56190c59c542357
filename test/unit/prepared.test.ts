import { expect } from 'chai';
import { statementNamed } from '../../src/db/prepared';

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
});
