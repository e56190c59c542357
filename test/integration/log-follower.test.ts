import { expect } from 'chai';
import { createPool, type Database } from '../../src/db/database';
import { followLog, type LogFollower } from '../../src/eventstore/follow-log';
import { comparePositions, formatPosition, type RecordedEvent } from '../../src/eventstore/port';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { createLogger } from '../../src/log';
import { createTestDatabase } from '../support/database';
import { startTcpProxy, tcpTargetOf, throughProxy, type TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';

const NAME = 'test follower';

/**
 * The one way a process follows the log for its caches (the key cache, the channel directory,
 * the channel health): a follower whose database is away (a TcpProxy cut between it and its
 * PostgreSQL) retries, its first start included, and says the outage once, not once a retry.
 */
describe('following the log through database outages @integration', function () {
  this.timeout(120_000);
  let database: Database;
  let proxy: TcpProxy;
  let proxiedPool: ReturnType<typeof createPool>;
  let followed: PostgresEventStore;
  let writer: PostgresEventStore;
  let lines: { level: number; msg: string }[];
  let follower: LogFollower | null = null;
  let seen: string[];

  const logger = () =>
    createLogger('debug', {
      write(line: string) {
        lines.push(JSON.parse(line) as { level: number; msg: string });
      },
    });
  const said = (level: number, start: string) => lines.filter((l) => l.level === level && l.msg.startsWith(`${NAME}: ${start}`)).length;
  const WARN = 40;
  const INFO = 30;
  const DEBUG = 20;
  const retried = (times: number) => waitFor(`${times} quiet retries`, async () => said(DEBUG, '') >= times);
  const append = async (id: string) => {
    await writer.append(`follow-test-${id}`, [{ type: 'FollowTestHappened', data: { id } }], { expectedVersion: 'any' });
  };
  /**
   * The readable head has passed what was committed so far: a follower starting now starts after
   * it. Until then a transaction open anywhere in the cluster (another test's) holds the head back,
   * and a follower started from it rightly delivers what it had not passed.
   */
  const headPassedCommitted = async () => {
    const committed = (await writer.committedHead())!;
    await waitFor('the readable head to pass what was committed', async () => {
      const head = await writer.headPosition();
      return head !== null && comparePositions(head, committed) >= 0;
    });
  };
  const onBatch = async (events: RecordedEvent[]) => {
    for (const e of events) seen.push((e.data as { id: string }).id);
  };

  beforeEach(async () => {
    lines = [];
    seen = [];
    database = await createTestDatabase(5, { withSchema: true });
    proxy = await startTcpProxy(tcpTargetOf(database.url));
    proxiedPool = createPool(throughProxy(database.url, proxy), 5);
    followed = new PostgresEventStore({ pool: proxiedPool, pollIntervalMs: 50 });
    writer = new PostgresEventStore({ pool: database.pool });
  });
  afterEach(async () => {
    // The proxy first: a query a cut left unanswered on one of its connections then fails at once
    // instead of holding the follower's close or the pool's end (this hook timed out once in a run
    // of the suite under load, its test passed).
    await proxy.close();
    await follower?.close();
    follower = null;
    await followed.close();
    await writer.close();
    await proxiedPool.end();
    await database.close();
  });

  it('retries a first start that fails until the database answers, warning once', async () => {
    proxy.cut();
    follower = followLog(followed, { name: NAME, meanwhile: 'nothing is followed', logger: logger(), onBatch, retryMs: 20 });
    await retried(3);
    expect(follower.failing).to.equal(true);
    expect(said(WARN, 'could not follow the log'), 'one warning for the outage').to.equal(1);

    proxy.restore();
    await follower.started;
    expect(follower.failing).to.equal(false);
    expect(said(INFO, 'following the log again')).to.equal(1);
    await append('after');
    await waitFor('the event appended after the start', async () => seen.includes('after'));
    expect(said(WARN, ''), 'no other warning').to.equal(1);
  });

  it('resumes a failed subscription from the last position it handed on, warning once an outage', async () => {
    follower = followLog(followed, { name: NAME, meanwhile: 'nothing is followed', logger: logger(), onBatch, retryMs: 20 });
    await follower.started;
    await append('before');
    await waitFor('the first event', async () => seen.includes('before'));

    for (const outage of ['first', 'second']) {
      proxy.cut();
      await waitFor('the outage to be noticed', async () => follower!.failing);
      const quiet = said(DEBUG, '');
      await retried(quiet + 3);
      await append(`during-${outage}`);
      proxy.restore();
      await waitFor('the event appended during the outage', async () => seen.includes(`during-${outage}`));
    }
    expect(said(WARN, 'following the log failed'), 'one warning an outage').to.equal(2);
    expect(said(WARN, ''), 'no other warning').to.equal(2);
    expect(said(INFO, 'following the log again')).to.equal(2);
    expect(seen, 'each event once, in order').to.deep.equal(['before', 'during-first', 'during-second']);
  });

  it('starts again from a new head when its catch-up fails, and is started only once one succeeds', async () => {
    const heads: (string | null)[] = [];
    let failures = 1;
    let caughtUp = false;
    await append('old');
    await headPassedCommitted();
    follower = followLog(followed, {
      name: NAME,
      meanwhile: 'nothing is followed',
      logger: logger(),
      onBatch,
      retryMs: 20,
      catchUp: async (head) => {
        heads.push(head === null ? null : formatPosition(head));
        if (failures-- > 0) {
          throw new Error('the read model is away');
        }
        caughtUp = true;
      },
    });
    await follower.started;
    expect(caughtUp).to.equal(true);
    expect(heads, 'a catch-up for each start').to.have.length(2);
    await append('after');
    await waitFor('the event appended after the start', async () => seen.includes('after'));
    expect(seen).not.to.include('old');
    expect(said(WARN, 'could not follow the log')).to.equal(1);
  });
});
