import { expect } from 'chai';
import type { Pool } from 'pg';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { createPool } from '../../src/db/database';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy, type ChannelEntry } from '../../src/upstreams/registry';
import { verifyWebhook } from '../../src/webhooks/signing';
import { ConsumerSampler, everyConsumerRunOnce, expectEachTaskFinishedAndBilledOnce, expectNothingFrozenAndAuditClean, FLEET_SETTINGS, fundedAccountAcross } from '../support/fleet-checks';
import { callJson, type GatewayProcess } from '../support/gateway-process';
import { Fleet, FLEET_HOSTS, GATEWAY_HOSTS, type FleetHostName } from '../support/netns/fleet';
import { catalogWithStandbys, channelsOnTwoProviders, HELD, providerHostCutLeg, SHORT_CIRCUITS, settingsWithObjectStore, type LegKey } from '../support/netns/legs';
import { chat, traffic } from '../support/netns/traffic';
import { recordingServer, type RecordingServer } from '../support/recording-server';
import { testTempDir } from '../support/temp-dirs';
import { waitFor } from '../support/wait';

const ADMIN_TOKEN = 'fleet-hosts-admin-token';
/** Generous for a loaded 2-core machine: a safety net, never a measure. */
const DEADLINE_MS = 90_000;

/**
 * Issue 43, part 5: the scale-out proof (test/integration/scale-out.test.ts) across hosts instead of
 * processes. Each gateway, the database and the simulated providers run in network namespaces of
 * their own (test/support/netns), so that a gateway host can be cut off the network while it keeps
 * running: its clients, its database and its providers all lose it at once, and it comes back
 * later believing what it believed before. Needs root; fails (never skips) without it.
 *
 * The gateways share no disk: each has a DATA_DIR of its own and keeps every file on the
 * object-store host (FILE_STORE=s3 on s3rver), and all are given one CHANNEL_SECRETS_KEY.
 *
 * Every model has two channels (issue 43, part 1, routing): its channel on provider1's host first,
 * a standby copy on provider2's second. After the gateway host's cut and restore, provider1's host
 * is cut off under load (providerHostCutLeg in test/support/netns/legs.ts): every request on every
 * gateway succeeds, settled once by its model's standby channel; video tasks that provider1 accepted
 * before the cut, whose polls may go to no other channel, fail their polls and wait; after the
 * restore they finish, and traffic returns to provider1 once the circuits have closed again.
 */
describe('fleet across hosts: gateways, database and providers in network namespaces, one gateway host and then one provider host cut off mid-load @integration', function () {
  this.timeout(300_000);

  let fleet: Fleet;
  let receiver: RecordingServer;
  let databaseUrl: string;
  /** The test's own connections to the database host: the audit and the leg's reads of the log. */
  let pool: Pool;
  let channelOf: (model: string) => string;
  const gateways: GatewayProcess[] = [];

  before(async () => {
    fleet = await Fleet.build();
    databaseUrl = await fleet.startDatabase();
    pool = createPool(databaseUrl, 2);
    const providers = await Promise.all([fleet.startProvider('provider1'), fleet.startProvider('provider2')]);
    receiver = await recordingServer((_, res) => res.writeHead(200).end('ok'), fleet.network.runnerAddress);
    // Every channel on provider1, with a standby copy on provider2 that each model falls over to.
    const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
    const [onProvider1, onProvider2] = providers.map((url) => channelsServedBy(url, catalog, { timeoutMs: 30_000, maxConcurrency: 64 })) as [ChannelEntry[], ChannelEntry[]];
    const standbys = catalogWithStandbys(testTempDir('gateway-fleet-catalog-'));
    channelOf = standbys.channelOf;
    const env = {
      ...FLEET_SETTINGS,
      ...SHORT_CIRCUITS,
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN,
      CHANNELS: JSON.stringify(channelsOnTwoProviders(onProvider1, onProvider2)),
      CATALOG_FILE: standbys.file,
      // No shared DATA_DIR: the key that seals the channels' credentials in the log is given to
      // every gateway, so that each opens what another sealed (without it, each would generate its
      // own and serve the channels another seeded from its own CHANNELS copy only).
      CHANNEL_SECRETS_KEY: 'fleet-hosts-channel-secrets-key-0123456789',
      // Longer than the cut lasts, so the held requests of the cut-off gateway settle once it is back.
      REQUEST_RESERVATION_TTL_MS: '120000',
    };
    // No disk shared: each gateway its own DATA_DIR, every file on the object-store host.
    const own = await settingsWithObjectStore(fleet, GATEWAY_HOSTS, () => testTempDir('gateway-fleet-data-'));
    gateways.push(...(await Promise.all(GATEWAY_HOSTS.map((name) => fleet.startGateway(name, { ...env, ...own.get(name) })))));
  });

  after(async () => {
    await receiver?.close();
    await pool?.end();
    await fleet?.destroy();
  });

  it('gives no host a route off the machine', async () => {
    for (const name of Object.keys(FLEET_HOSTS) as FleetHostName[]) {
      const { routes, outside, forwarding } = await fleet.network.exits(name);
      expect(routes, `${name}'s routes`).to.deep.equal([`${fleet.network.subnet}.0/24 dev eth0 proto kernel scope link src ${fleet.host(name).address}`]);
      expect(outside, `${name} reaching 1.1.1.1`).to.match(/Network is unreachable/);
      expect(forwarding, `${name} forwarding`).to.equal('0');
    }
  });

  it('keeps the ledger exact, finishes every task once, delivers every webhook and serves every file from every gateway, and hands the cut-off host\'s leases over', async () => {
    const [gw1, gw2, gw3] = gateways as [GatewayProcess, GatewayProcess, GatewayProcess];
    const provider1 = fleet.providerUrl('provider1');
    const { accountId, key, secret } = await fundedAccountAcross(gateways, ADMIN_TOKEN, 'fleet-hosts');

    // Which gateways the runner can reach; a consumer run by two of them at once is recorded.
    const reachable = new Set(gateways);
    const sampler = new ConsumerSampler(() => [...reachable], ADMIN_TOKEN);
    const videos: string[] = [];
    const files: string[] = [];
    try {
      videos.push(...await Promise.all(gateways.flatMap((gateway) => [1, 2].map(async (i) => (await createVideo(gateway, key, `fleet ${gateway.name} ${i} [sim:delay=1500]`, receiver.url)).id))));

      // Requests that gw1 has reserved and sent upstream when its host is cut off: held at a gate of
      // the simulator, so that they are in flight for certain, with no guessing of delays.
      const gate = `fleet-hosts-${process.pid}`;
      const gw1Client = new AbortController();
      const held = [false, true, false].map((stream, i) => chat(gw1, key, `held ${i} [sim:gate=${gate}] [sim:tokens=10]`, stream, gw1Client.signal, HELD.model).then(() => 'answered', (err: unknown) => String(err)));

      const firstWave = traffic([gw1, gw2, gw3], key, files, { gw1: gw1Client.signal });
      await waitFor('the held requests at the gate and some load done', async () => (await gateWaiting(provider1, gate)) === 3 && firstWave.completed() >= 6, DEADLINE_MS, 100);

      // gw1's host drops off the network: its clients give up on it, as a load balancer would.
      sampler.pause();
      await fleet.network.cut('gw1');
      reachable.delete(gw1);
      sampler.resume();
      gw1Client.abort();
      const first = await firstWave.done;
      expect(first.filter((o) => !o.ok && o.gateway !== 'gw1'), 'requests to the other gateways').to.deep.equal([]);
      expect(await Promise.all(held), 'requests in flight on the cut-off host fail').to.satisfy((outcomes: string[]) => outcomes.every((o) => o !== 'answered'));

      // Traffic moves to the others, and all of it succeeds.
      const second = await traffic([gw2, gw3], key, files).done;
      expect(second.filter((o) => !o.ok), 'requests after the cut').to.deep.equal([]);

      // gw1's consumer leases go to the others once the database has given its sessions up.
      await waitFor('every consumer run by exactly one of gw2 and gw3', () => everyConsumerRunOnce([gw2, gw3], ADMIN_TOKEN), DEADLINE_MS, 200);
      // Its video jobs too, once their leases run out: every task finishes and is billed.
      for (const id of videos) {
        await waitFor(`video ${id} billed`, async () => {
          const task = (await callJson(`${gw2.url}/v1/videos/generations/${id}`, key)).body;
          return task.status === 'succeeded' && task.billing.status === 'settled' ? task : null;
        }, DEADLINE_MS, 200);
      }

      // gw1 comes back, believing what it believed when it was cut off; the held requests get their answers.
      sampler.pause();
      await fleet.network.restore('gw1');
      reachable.add(gw1);
      sampler.resume();
      await openGate(provider1, gate);
      await waitFor('gw1 ready again', async () => (await fetch(`${gw1.url}/readyz`).catch(() => null))?.status === 200, DEADLINE_MS, 200);
      await waitFor('every consumer run by exactly one gateway of three', () => everyConsumerRunOnce(gateways, ADMIN_TOKEN), DEADLINE_MS, 200);

      // provider1's host cut off under load: the standby channels on provider2 serve.
      let issued = 0;
      const newKey = async (): Promise<LegKey> => {
        const gateway = gateways[issued++ % gateways.length]!;
        const res = await callJson(`${gateway.url}/admin/v1/accounts/${accountId}/keys`, ADMIN_TOKEN, 'POST', {});
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        return { id: res.body.id as string, key: res.body.key as string };
      };
      const heldVideo = async (gateway: GatewayProcess, videoKey: string) => {
        const task = await createVideo(gateway, videoKey, `fleet ${gateway.name} held [sim:hold]`, receiver.url);
        return { id: task.id, upstreamId: task.upstream_id };
      };
      videos.push(...(await providerHostCutLeg({ fleet, gateways, adminToken: ADMIN_TOKEN, pool, files, newKey, channelOf, heldVideo, deadlineMs: DEADLINE_MS })));
    } finally {
      await sampler.stop();
    }
    expect(sampler.doubleRuns, 'a consumer ran in two processes at once').to.deep.equal([]);

    // A webhook for every task (delivery is at least once), each signed with the account's secret.
    await waitFor('a webhook for every task', async () => videos.every((id) => receiver.seen.some((d) => JSON.parse(d.body.toString()).task_id === id)), DEADLINE_MS, 100);
    for (const delivery of receiver.seen) {
      const body = delivery.body.toString();
      const payload = JSON.parse(body);
      expect(videos).to.include(payload.task_id);
      expect(payload.status).to.equal('succeeded');
      expect(verifyWebhook(secret, delivery.headers['x-service-timestamp'] as string, body, delivery.headers['x-service-signature'] as string, Math.floor(Date.now() / 1000))).to.equal(true);
      files.push(payload.video_url);
    }

    // Every file, whichever gateway made its link, is served by every gateway.
    expect(files.length).to.be.greaterThan(videos.length);
    for (const link of files) {
      const bodies = await Promise.all(gateways.map(async (gateway) => {
        const res = await fetch(onGateway(link, gateway));
        expect(res.status, `${link} from ${gateway.name}`).to.equal(200);
        return Buffer.from(await res.arrayBuffer()).toString('base64');
      }));
      expect(new Set(bodies).size, `${link}: the same bytes from every gateway`).to.equal(1);
    }

    await expectNothingFrozenAndAuditClean(pool, gw2, key, ADMIN_TOKEN, DEADLINE_MS);
    await expectEachTaskFinishedAndBilledOnce(pool, 'video-', videos.length);
  });
});

/** A video task with a webhook and an archived video: its id and the provider's. */
async function createVideo(gateway: GatewayProcess, key: string, text: string, callbackUrl: string): Promise<{ id: string; upstream_id: string }> {
  const res = await callJson(`${gateway.url}/v1/videos/generations`, key, 'POST', { model: 'video-ref-2.0', content: [{ type: 'text', text }], duration: 4, callback_url: callbackUrl, video_url_mode: 'tos' });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body;
}

async function gateWaiting(simulatorUrl: string, gate: string): Promise<number> {
  return ((await callJson(`${simulatorUrl}/sim/gates/${gate}`, '')).body?.waiting as number | undefined) ?? 0;
}

async function openGate(simulatorUrl: string, gate: string): Promise<void> {
  expect((await callJson(`${simulatorUrl}/sim/gates/${gate}/open`, '', 'POST')).status).to.be.lessThan(300);
}

/** The same signed link on another gateway: the signature covers the path and the expiry, not the host. */
function onGateway(link: string, gateway: GatewayProcess): string {
  const url = new URL(link);
  return new URL(url.pathname + url.search, gateway.url).toString();
}
