import { expect } from 'chai';
import { createPool, type Database } from '../../src/db/database';
import { createLogger } from '../../src/log';
import { LeaseHolder } from '../../src/projections-runtime/leases';
import { createTestDatabase } from '../support/database';
import { startTcpProxy, tcpTargetOf, throughProxy, type TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';

/**
 * A process cut off from its database by a network that drops every packet hears nothing: no
 * error, no closed socket. Its consumer leases must still count as lost, or it would report
 * itself the holder of locks the database gave to another process (test/integration/fleet-hosts
 * found it; this is the same in one process, the partition played by a relay that goes silent).
 */
describe('consumer leases over a connection that goes silent @integration', () => {
  const logger = createLogger('silent');
  let db: Database;
  let proxy: TcpProxy;

  before(async () => {
    db = await createTestDatabase(4);
    proxy = await startTcpProxy(tcpTargetOf(db.url));
  });

  after(async () => {
    await proxy.close();
    await db.close();
  });

  it('counts its leases lost when the connection stops answering, and leaves them to the process that won them', async () => {
    const cutOffPool = createPool(throughProxy(db.url, proxy), 2, 1000);
    const cutOff = new LeaseHolder(cutOffPool, logger, 100, 500);
    const other = new LeaseHolder(db.pool, logger, 100, 500);
    const name = `silence-${process.pid}`;
    const seen: boolean[] = [];
    let otherHolds = false;
    try {
      cutOff.want(name, (held) => seen.push(held));
      await waitFor('the first process holding the lease', async () => seen.at(-1) === true);
      other.want(name, (held) => (otherHolds = held));

      proxy.blackhole();
      await waitFor('the lease counted lost', async () => seen.at(-1) === false);
      expect(cutOff.problem).to.match(/did not answer within 500 ms|lease connection/);
      // The database gives the silent session up by its keep-alive (tcp_keepalives_*), here at once.
      await db.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks
          WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND pid <> pg_backend_pid()`,
      );
      await waitFor('the other process holding the lease', async () => otherHolds);

      proxy.restore();
      await waitFor('the first process reconnected', async () => cutOff.problem === null);
      expect(seen, 'never won back while the other holds it').to.deep.equal([true, false]);

      await other.close();
      await waitFor('the lease back with the first process once the other lets it go', async () => seen.at(-1) === true);
    } finally {
      await other.close();
      await cutOff.close();
      await cutOffPool.end();
    }
  });
});
