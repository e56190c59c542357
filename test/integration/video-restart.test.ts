import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { channelsServedBy } from '../../src/upstreams/registry';
import type { Database } from '../../src/db/database';
import { createSimulator, type Simulator } from '../../simulator/server';
import { arkProvider } from '../../simulator/providers/ark';
import { mounted } from '../../simulator/providers/provider';
import { JOB } from '../../src/tasks/process-manager';
import { createTestDatabase } from '../support/database';
import { testTempDir } from '../support/temp-dirs';
import { waitFor as waitWithin } from '../support/wait';
import { expectReservationClosedOnceAndAuditClean, RestartableGateway } from '../support/gateway-process';
import { ALL_MODEL_TYPES } from '../../src/model-types';

const ADMIN = 'restart-admin-token';

/** Restarts take their time: this suite waits up to 30 s, reading every 50 ms. */
const waitFor = <T>(what: string, probe: () => Promise<T | null | undefined | false>) => waitWithin(what, probe, 30_000, 50);

describe('video tasks survive the gateway being killed @integration', function () {
  this.timeout(120_000);
  let db: Database;
  let simulator: Simulator;
  let simPort = 0;
  let gateway: RestartableGateway;
  let receiver: Server;
  const received: { body: string; at: number }[] = [];
  let script: number[] = [200];
  let hookUrl = '';
  let key = '';

  before(async () => {
    db = await createTestDatabase(20, { withSchema: true });
    simulator = createSimulator({ routes: mounted(arkProvider) });
    const simUrl = await simulator.listen(0);
    simPort = Number(new URL(simUrl).port);
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ body, at: Date.now() });
        res.writeHead(script[Math.min(received.length - 1, script.length - 1)]!).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    gateway = new RestartableGateway('first', {
      DATABASE_URL: db.url,
      DATA_DIR: testTempDir('gateway-restart-'),
      ADMIN_TOKEN: ADMIN,
      // Every channel the catalog names, all served by the simulator this test owns.
      CHANNELS: JSON.stringify(channelsServedBy(simUrl, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 5000, maxConcurrency: 16 })),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_DELAYS_MS: '2000,2000,2000',
      WEBHOOK_TIMEOUT_MS: '1000',
      TASK_POLL_MS: '50',
      // A killed worker's claim expires quickly, so the restarted process takes its jobs over.
      JOB_LEASE_MS: '1500',
      TASK_INLINE_SUBMIT_GRACE_MS: '500',
      SUBSCRIPTION_POLL_MS: '100',
    });
    await gateway.start();
    const account = await gateway.call(ADMIN, 'POST', '/admin/v1/accounts', { name: 'restart' });
    await gateway.call(ADMIN, 'POST', `/admin/v1/accounts/${account.body.id}/credits`, { amount: 100_000_000, reference: 'restart-credit' });
    key = (await gateway.call(ADMIN, 'POST', `/admin/v1/accounts/${account.body.id}/keys`, {})).body.key;
  });

  // The gateway runs in a process of its own: a failure there shows only in its log.
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.error(`the gateway's last lines:\n${gateway.lastLines(40).join('\n')}`);
  });

  after(async () => {
    await gateway.stop();
    await simulator.close();
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
    await db.close();
  });

  async function expectBilledOnceAndAuditClean(taskId: string): Promise<void> {
    const task = await waitFor('billing', async () => {
      const t = (await gateway.call(key, 'GET', `/v1/videos/generations/${taskId}`)).body;
      return t.billing.status !== 'reserved' ? t : null;
    });
    await expectReservationClosedOnceAndAuditClean(db, `video-${taskId}`, task.status === 'succeeded' ? 'settled' : 'released');
  }

  it('finishes, bills once and calls back after a kill in the middle of a task', async () => {
    const created = await gateway.call(key, 'POST', '/v1/videos/generations', {
      model: 'video-ref-2.0',
      content: [{ type: 'text', text: 'survive [sim:delay=2500]' }],
      callback_url: hookUrl,
    });
    expect(created.status).to.equal(200);
    await waitFor('the upstream to accept it', async () => (await gateway.call(key, 'GET', `/v1/videos/generations/${created.body.id}`)).body.upstream_id);
    await gateway.kill();
    await gateway.start();
    await waitFor('the callback', async () => received.some((r) => JSON.parse(r.body).task_id === created.body.id));
    const task = (await gateway.call(key, 'GET', `/v1/videos/generations/${created.body.id}`)).body;
    expect(task.status).to.equal('succeeded');
    await expectBilledOnceAndAuditClean(created.body.id);
  });

  it('resumes the webhook schedule after a kill between attempts', async () => {
    received.length = 0;
    script = [500, 200];
    const created = await gateway.call(key, 'POST', '/v1/videos/generations', {
      model: 'video-ref-2.0',
      content: [{ type: 'text', text: 'retry after restart' }],
      callback_url: hookUrl,
    });
    // Killed once the failed first attempt is recorded, while the second waits for its due time.
    await waitFor('the first attempt on record', async () => (await gateway.call(key, 'GET', `/v1/videos/generations/${created.body.id}`)).body.webhook.deliveries[0]?.attempts.length === 1);
    await gateway.kill();
    await gateway.start();
    const task = await waitFor('the delivery', async () => {
      const t = (await gateway.call(key, 'GET', `/v1/videos/generations/${created.body.id}`)).body;
      return t.webhook.deliveries[0]?.status === 'delivered' ? t : null;
    });
    expect(task.webhook.deliveries[0].attempts.map((a: { status_code: number }) => a.status_code)).to.deep.equal([500, 200]);
    expect(received.filter((r) => JSON.parse(r.body).task_id === created.body.id)).to.have.length(2);
    expect(received[1]!.at - received[0]!.at).to.be.at.least(2000);
    await expectBilledOnceAndAuditClean(created.body.id);
  });

  it('never delivers an attempt twice when two gateway processes share the work', async () => {
    received.length = 0;
    script = [200];
    const second = new RestartableGateway('second', gateway.env);
    await second.start();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const via = i % 2 ? second : gateway;
        ids.push((await via.call(key, 'POST', '/v1/videos/generations', { model: 'video-pro-1.5', content: [{ type: 'text', text: `pair ${i}` }], callback_url: hookUrl })).body.id);
      }
      await waitFor('all callbacks', async () => received.length >= ids.length);
      // No webhook job left in either process: no further callback can come.
      await waitFor('the webhook jobs done', async () => (await db.pool.query('SELECT 1 FROM jobs WHERE kind = $1', [JOB.webhook])).rowCount === 0);
      const taskIds = received.map((r) => JSON.parse(r.body).task_id as string);
      expect([...taskIds].sort()).to.deep.equal([...ids].sort());
      for (const id of ids) await expectBilledOnceAndAuditClean(id);
    } finally {
      await second.stop();
    }
  });

  it('takes a task whose provider was out of reach at creation, and submits it once the provider is back', async () => {
    await simulator.close();
    const created = await gateway.call(key, 'POST', '/v1/videos/generations', { model: 'video-pro-1.5', content: [{ type: 'text', text: 'provider down' }] });
    expect(created.status).to.equal(200);
    expect(created.body).to.deep.include({ status: 'queued', upstream_id: null });
    simulator = createSimulator({ routes: mounted(arkProvider) });
    await simulator.listen(simPort);
    const task = await waitFor('the task to finish', async () => {
      const t = (await gateway.call(key, 'GET', `/v1/videos/generations/${created.body.id}`)).body;
      return t.billing.status !== 'reserved' ? t : null;
    });
    expect(task.status).to.equal('succeeded');
    expect(task.upstream_id).to.match(/^cgt-sim-/);
    await expectBilledOnceAndAuditClean(created.body.id);
  });
});

