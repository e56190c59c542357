import { expect } from 'chai';
import { isDatabaseUnavailable } from '../../src/db/unavailable';

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it('recognises a database that cannot be reached or dropped the connection', () => {
    const cases: [string, unknown][] = [
      ['refused', coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
      ['reset', coded('read ECONNRESET', 'ECONNRESET')],
      ['dual-stack refusal', Object.assign(new AggregateError([coded('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'), coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')]), { code: 'ECONNREFUSED' })],
      ['dropped mid-query', new Error('Connection terminated unexpectedly')],
      ['connect deadline', new Error('timeout exceeded when trying to connect')],
      ['admin shutdown', coded('terminating connection due to administrator command', '57P01')],
      ['starting up', coded('the database system is starting up', '57P03')],
      ['connection exception', coded('connection failure', '08006')],
      ['too many connections', coded('sorry, too many clients already', '53300')],
      ['wrapped as a cause', new Error('append failed', { cause: coded('read ECONNRESET', 'ECONNRESET') })],
    ];
    for (const [what, err] of cases) expect(isDatabaseUnavailable(err), what).to.equal(true);
  });

  it('leaves alone the errors of a database that answered', () => {
    const cases: [string, unknown][] = [
      ['unique violation', coded('duplicate key value violates unique constraint', '23505')],
      ['syntax error', coded('syntax error at or near "SELEC"', '42601')],
      ['serialization failure', coded('could not serialize access', '40001')],
      ['a plain error', new Error('something else')],
      ['not an error', 'ECONNREFUSED'],
      ['an aggregate of other errors', new AggregateError([new Error('a'), coded('read ECONNRESET', 'ECONNRESET')])],
    ];
    for (const [what, err] of cases) expect(isDatabaseUnavailable(err), what).to.equal(false);
  });
});
