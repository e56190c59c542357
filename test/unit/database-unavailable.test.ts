import { expect } from 'chai';
import { createPool } from '../../src/db/database';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../../src/db/unavailable';
import { startTcpProxy } from '../support/tcp-proxy';

/** A socket's system error, as Node raises it under node-postgres. */
const system = (code: string, syscall = 'connect') => Object.assign(new Error(`${syscall} ${code} 127.0.0.1:5432`), { code, syscall, errno: -111 });
/** The server's refusal, as node-postgres' DatabaseError carries it. */
const server = (message: string, code: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });

describe('isDatabaseUnavailable', () => {
  it('recognises a database that cannot be reached or dropped the connection', () => {
    const cases: [string, unknown][] = [
      ['refused', system('ECONNREFUSED')],
      ['reset', system('ECONNRESET', 'read')],
      ['dual-stack refusal', Object.assign(new AggregateError([system('ECONNREFUSED'), system('ECONNREFUSED')]), { code: 'ECONNREFUSED' })],
      ['dropped mid-query', new Error('Connection terminated unexpectedly')],
      ['connect deadline', new Error('timeout exceeded when trying to connect')],
      ['admin shutdown', server('terminating connection due to administrator command', '57P01')],
      ['starting up', server('the database system is starting up', '57P03')],
      ['connection exception', server('connection failure', '08006')],
      ['too many connections', server('sorry, too many clients already', '53300')],
      ['an event store adapter', new DatabaseUnavailableError('the event store is unavailable', { cause: new Error('14 UNAVAILABLE') })],
    ];
    for (const [what, err] of cases) expect(isDatabaseUnavailable(err), what).to.equal(true);
  });

  it('leaves alone the errors of a database that answered, and those of anything else', () => {
    const cases: [string, unknown][] = [
      ['unique violation', server('duplicate key value violates unique constraint', '23505')],
      ['syntax error', server('syntax error at or near "SELEC"', '42601')],
      ['serialization failure', server('could not serialize access', '40001')],
      ['a plain error', new Error('something else')],
      ['not an error', 'ECONNREFUSED'],
      ['an aggregate of other errors', new AggregateError([new Error('a'), system('ECONNRESET', 'read')])],
      // A provider's connection reset, as undici reports it: not the database's.
      ['undici socket error', Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET', cause: system('ECONNRESET', 'read') })],
      ['fetch failed', new TypeError('fetch failed', { cause: system('ECONNREFUSED') })],
      ['an errno code without a socket call', Object.assign(new Error('reset'), { code: 'ECONNRESET' })],
      ['an SQLSTATE-like code of something else', Object.assign(new Error('x'), { code: '08006' })],
    ];
    for (const [what, err] of cases) expect(isDatabaseUnavailable(err), what).to.equal(false);
  });
});

describe('a pool whose database does not answer at all', () => {
  it('fails a query after its connect timeout, as database unavailable, instead of waiting on the silence', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: 9 });
    proxy.blackhole();
    const pool = createPool(`postgres://gateway@127.0.0.1:${proxy.port}/gateway`, 1, 300);
    try {
      const err = await pool.query('SELECT 1').then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, 'the query failed').to.be.instanceOf(Error);
      expect(isDatabaseUnavailable(err), String(err)).to.equal(true);
    } finally {
      await pool.end();
      await proxy.close();
    }
  });
});
