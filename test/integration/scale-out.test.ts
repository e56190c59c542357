import fs from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import OpenAI from 'openai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { tempDir, type Database } from '../../src/db/database';
import { channelsServedBy } from '../../src/upstreams/registry';
import { allSimulatorRoutes } from '../../simulator/all-routes';
import { createSimulator, type Simulator } from '../../simulator/server';
import { verifyWebhook } from '../../src/webhooks/signing';
import { createTestDatabase } from '../support/database';
import { ConsumerSampler, everyConsumerRunOnce, expectEachTaskFinishedAndBilledOnce, expectNothingFrozenAndAuditClean, FLEET_SETTINGS, fundedAccountAcross } from '../support/fleet-checks';
import { callJson, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { waitFor } from '../support/wait';
import { ALL_MODEL_TYPES } from '../../src/model-types';

const ADMIN_TOKEN = 'scale-out-admin-token';

interface Delivery {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** Collects webhook deliveries; always answers 200. */
async function startReceiver(): Promise<{ url: string; deliveries: Delivery[]; server: Server }> {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, deliveries, server };
}


/**
 * The docker-compose topology without containers: several gateway processes on one PostgreSQL,
 * one of them killed with SIGKILL in the middle of a mixed workload.
 */
describe('scale-out: three gateway processes on one database, one killed mid-load @integration', function () {
  this.timeout(240_000);

  let database: Database;
  let simulator: Simulator;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let dataDir: string;
  let gateways: GatewayProcess[] = [];

  before(async () => {
    database = await createTestDatabase(20, { withSchema: true });
    simulator = createSimulator({ routes: allSimulatorRoutes() });
    const simulatorUrl = await simulator.listen(0, '127.0.0.1');
    receiver = await startReceiver();
    dataDir = tempDir('gateway-scale-out-');
    const channels = channelsServedBy(simulatorUrl, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 64 });
    const env = {
      ...FLEET_SETTINGS,
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      CHANNELS: JSON.stringify(channels),
      // The reservations of requests the kill cut off are released when they expire.
      REQUEST_RESERVATION_TTL_MS: '15000',
    };
    gateways = await Promise.all(['g1', 'g2', 'g3'].map((name) => startGatewayProcess(name, env)));
  });

  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    receiver?.server.closeAllConnections();
    await new Promise((resolve) => receiver?.server.close(resolve));
    await simulator?.close();
    await database?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the ledger exact, finishes every task once, delivers every webhook, and runs each consumer in one process at a time', async () => {
    const [g1, g2, g3] = gateways as [GatewayProcess, GatewayProcess, GatewayProcess];
    const { key, secret } = await fundedAccountAcross(gateways, ADMIN_TOKEN, 'scale-out');

    // No consumer may run in two of the live gateways at once.
    const live = new Set(gateways);
    const sampler = new ConsumerSampler(() => [...live], ADMIN_TOKEN);

    // Video tasks with webhooks, two per gateway; they are still rendering when g1 dies.
    const videos = await Promise.all(
      gateways.flatMap((gateway) =>
        [1, 2].map(async (i) => {
          const res = await callJson(`${gateway.url}/v1/videos/generations`, key, 'POST', {
            model: 'video-ref-2.0',
            content: [{ type: 'text', text: `scale-out ${gateway.name} ${i} [sim:delay=1500]` }],
            duration: 4,
            callback_url: receiver.url,
          });
          expect(res.status, JSON.stringify(res.body)).to.equal(200);
          return res.body.id as string;
        }),
      ),
    );

    // Chat (plain and streamed) and sync images spread over the three gateways.
    let completed = 0;
    const outcomes: { gateway: string; ok: boolean; error?: string }[] = [];
    const work = gateways.flatMap((gateway) => {
      const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      const chats = Array.from({ length: 12 }, async (_, i) => {
        const messages = [{ role: 'user' as const, content: `hello ${i} [sim:tokens=20] [sim:delay=${50 * (i % 4)}]` }];
        if (i % 2 === 0) {
          const answer = await client.chat.completions.create({ model: 'chat-fast', messages, max_tokens: 64 });
          expect(answer.usage?.completion_tokens).to.equal(20);
        } else {
          const stream = await client.chat.completions.create({ model: 'chat-fast', messages, max_tokens: 64, stream: true });
          let text = '';
          for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
          expect(text).to.not.equal('');
        }
      });
      const images = [1, 2].map(async () => {
        const res = await callJson(`${gateway.url}/v1/images/generations`, key, 'POST', { model: 'image-5.0', prompt: 'a lighthouse' });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body.data).to.have.length(1);
      });
      return [...chats, ...images].map((p) =>
        p.then(
          () => outcomes.push({ gateway: gateway.name, ok: true }),
          (err: unknown) => outcomes.push({ gateway: gateway.name, ok: false, error: String(err) }),
        ).finally(() => completed++),
      );
    });

    // A stream on g1 that has delivered tokens and never ends by itself: the kill cuts it off
    // for certain, with its reservation open.
    let streaming = false;
    const cutOff = (async () => {
      const client = new OpenAI({ apiKey: key, baseURL: `${g1.url}/v1`, maxRetries: 0 });
      const stream = await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'cut off [sim:tokens=50] [sim:stall]' }], stream: true });
      for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) streaming = true;
    })().then(
      () => 'ended',
      () => 'cut off',
    );

    await waitFor('some of the load to complete and the stream on g1 to deliver', async () => completed >= 6 && streaming, 60_000);
    sampler.pause();
    await g1.kill();
    live.delete(g1);
    sampler.resume();
    await Promise.all(work);
    expect(await cutOff).to.equal('cut off');

    const failedElsewhere = outcomes.filter((o) => !o.ok && o.gateway !== 'g1');
    expect(failedElsewhere, 'requests to the surviving gateways all succeed').to.deep.equal([]);
    expect(outcomes.filter((o) => o.ok && o.gateway !== 'g1')).to.have.length(28);

    // Every video task finishes and is billed, whichever process was working on it.
    for (const id of videos) {
      await waitFor(`video ${id} billed`, async () => {
        const task = (await callJson(`${g2.url}/v1/videos/generations/${id}`, key)).body;
        return task.status === 'succeeded' && task.billing.status === 'settled' ? task : null;
      }, 60_000, 100);
    }

    // Every webhook delivered, signed with the account's secret.
    await waitFor('a webhook for every task', async () => videos.every((id) => receiver.deliveries.some((d) => JSON.parse(d.body).task_id === id)), 60_000, 100);
    for (const delivery of receiver.deliveries) {
      const payload = JSON.parse(delivery.body);
      expect(videos).to.include(payload.task_id);
      expect(payload.status).to.equal('succeeded');
      expect(verifyWebhook(secret, delivery.headers['x-service-timestamp'] as string, delivery.body, delivery.headers['x-service-signature'] as string, Math.floor(Date.now() / 1000))).to.equal(true);
    }

    // Each task finished and was billed exactly once.
    await expectEachTaskFinishedAndBilledOnce(database.pool, 'video-', videos.length);

    // The survivors took over every consumer g1 held: each runs in exactly one of them.
    await waitFor('every consumer run by exactly one survivor', () => everyConsumerRunOnce([g2, g3], ADMIN_TOKEN), 30_000, 200);
    await sampler.stop();
    expect(sampler.doubleRuns, 'a consumer ran in two processes at once').to.deep.equal([]);

    // The reservations of the requests the kill cut off are released; nothing stays frozen.
    await expectNothingFrozenAndAuditClean(database.pool, g3, key, ADMIN_TOKEN, 60_000);
  });
});
