import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE, type CatalogFileEntry } from '../../src/billing/catalog';
import { accountStream } from '../../src/domain/account/events';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { scriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream';
import { removeTestTempDir, testTempDir } from '../support/temp-dirs';
import { consentOnPage } from '../support/verification-page';
import { waitFor } from '../support/wait';

const IMAGE = 'https://images.example.com/people/alice.png';

/**
 * Tasks tied to provider state on models of two channels (docs/operations.md, Routing): an image
 * goes to the channel holding its asset group and a draft's final to the channel that made the
 * draft, never failed over to a provider account that does not know them; and a channel is not
 * deleted under the unfinished tasks it holds.
 */
describe('routing tasks tied to provider state @integration', function () {
  this.timeout(120_000);

  let simulator: RunningSimulator;
  let dir: string;
  let catalogFile: string;
  let original: { models: CatalogFileEntry[] };
  let gw: TestGateway;
  let assetsA: ScriptedUpstream;
  let assetsB: ScriptedUpstream;
  let videoA: ScriptedUpstream;
  let videoB: ScriptedUpstream;
  let key: string;
  let accountId: string;

  /** The original catalog with asset verification and video-2.5 on two channels each (`videoChannels` to move video-2.5). */
  function catalog(videoChannels: { name: string; priority?: number }[]): string {
    const models = original.models.map((m) => {
      const { channel: _channel, ...rest } = m;
      if (m.id === 'asset-verification') return { ...rest, channels: [{ name: 'assets-a', priority: 1 }, { name: 'assets-b' }] };
      if (m.id === 'video-2.5') return { ...rest, channels: videoChannels };
      return m;
    });
    return JSON.stringify({ models });
  }

  before(async () => {
    simulator = await startSimulator();
    dir = testTempDir('routing-pinned-tasks-');
    [assetsA, assetsB, videoA, videoB] = await Promise.all([1, 2, 3, 4].map(() => scriptedUpstream(simulator.url)));
    original = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: CatalogFileEntry[] };
    catalogFile = path.join(dir, 'catalog.json');
    fs.writeFileSync(catalogFile, catalog([{ name: 'ark-a', priority: 1 }, { name: 'ark-b' }]));
    const served = channelsServedBy(simulator.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 16 });
    const front = (like: string, name: string, upstream: ScriptedUpstream) => {
      const entry = served.find((c) => c.name === like)!;
      return { ...entry, name, base_url: `${upstream.url}${new URL(entry.base_url).pathname.replace(/\/$/, '')}` };
    };
    const fronts = [front('ark-assets', 'assets-a', assetsA), front('ark-assets', 'assets-b', assetsB), front('ark', 'ark-a', videoA), front('ark', 'ark-b', videoB)];
    gw = await startTestGateway({ CHANNELS: JSON.stringify([...served, ...fronts]), CATALOG_FILE: catalogFile, TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000' });
    ({ key, accountId } = await gw.fundedAccount(1_000_000_000));
  });

  beforeEach(() => {
    for (const upstream of [assetsA, assetsB, videoA, videoB]) upstream.act = 'forward';
  });

  afterEach(async () => {
    await gw.expectAuditClean();
  });

  after(async () => {
    await gw?.close();
    await Promise.all([assetsA, assetsB, videoA, videoB].map((u) => u?.close()));
    await simulator?.close();
    if (dir) removeTestTempDir(dir);
  });

  async function acceptedOn(stream: string): Promise<string | undefined> {
    const accepted = await waitFor(`${stream} accepted`, async () => (await gw.store.readStream(stream)).find((e) => e.type === 'TaskUpstreamAccepted') ?? null);
    return (accepted.data as { channel?: string }).channel;
  }

  /** Opens a session (for `groupId`'s re-verification when given), has the person consent, and waits for `verified`. */
  async function verifiedGroup(): Promise<{ groupId: string; sessionId: string }> {
    const opened = await gw.api(key, 'POST', '/v1/asset-groups/validate-session', { name: 'Alice' });
    expect(opened.status, JSON.stringify(opened.body)).to.equal(200);
    await consentOnPage(opened.body.verification_url);
    await waitFor('verified', async () => (await gw.api(key, 'GET', `/v1/asset-groups/validate-session/${opened.body.id}`)).body.status === 'verified');
    return { groupId: opened.body.group_id, sessionId: opened.body.id };
  }

  async function activeAsset(groupId: string): Promise<string> {
    const added = await gw.api(key, 'POST', `/v1/asset-groups/${groupId}/assets`, { url: IMAGE });
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    await waitFor('asset active', async () => (await gw.api(key, 'GET', `/v1/asset-groups/${groupId}/assets/${added.body.id}`)).body.status === 'active');
    return added.body.id as string;
  }

  it('adds an image to a group only through the channel holding the group, waiting out its failures there', async () => {
    const { groupId, sessionId } = await verifiedGroup();
    expect(await acceptedOn(`asset_session-${sessionId}`)).to.equal('assets-a');

    const seenB = assetsB.seen;
    const seenA = assetsA.seen;
    // Two 503s, then answers: counted by request, so the submission's retry budget is never at stake.
    assetsA.act = (n) => (n < seenA + 2 ? { status: 503 } : 'forward');
    const added = await gw.api(key, 'POST', `/v1/asset-groups/${groupId}/assets`, { url: IMAGE });
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    await waitFor('the submission tried twice on assets-a', async () => assetsA.seen >= seenA + 2);
    expect(assetsB.seen, 'nothing sent to the channel that does not hold the group').to.equal(seenB);

    await waitFor('asset active', async () => (await gw.api(key, 'GET', `/v1/asset-groups/${groupId}/assets/${added.body.id}`)).body.status === 'active');
    expect(await acceptedOn(`asset-${added.body.id}`)).to.equal('assets-a');
    expect(assetsB.seen).to.equal(seenB);
  });

  it('refuses a video that uses assets of two channels with 400, reserving nothing', async () => {
    const onA = await verifiedGroup();
    // The next group's session fails over to assets-b (a new group is tied to nothing yet): a 503
    // with Volcengine's error envelope, which says the provider did not take the request (a bare
    // one would leave the outcome unknown, and a submission is never failed over then).
    assetsA.act = { status: 503, body: { ResponseMetadata: { RequestId: 'req-busy', Action: 'CreateAssetGroup', Version: '2024-01-01', Error: { Code: 'ServiceUnavailable', Message: 'service busy' } } } };
    const onB = await verifiedGroup();
    assetsA.act = 'forward';
    expect(await acceptedOn(`asset_session-${onB.sessionId}`)).to.equal('assets-b');
    const [assetA, assetB] = [await activeAsset(onA.groupId), await activeAsset(onB.groupId)];

    // Sessions and assets settle in the background (an asset's reservation is of 0): count once every reservation closed.
    const before = await waitFor('every reservation closed', async () => {
      const events = await gw.store.readStream(accountStream(accountId));
      const count = (type: string) => events.filter((e) => e.type === type).length;
      return count('FundsReserved') === count('ReservationSettled') + count('ReservationReleased') ? events.length : null;
    });
    const video = await gw.api(key, 'POST', '/v1/videos/generations', {
      model: 'video-ref-2.0',
      content: [
        { type: 'text', text: 'two people wave' },
        { type: 'image_url', image_url: { url: `asset://${assetA}` }, role: 'reference_image' },
        { type: 'image_url', image_url: { url: `asset://${assetB}` }, role: 'reference_image' },
      ],
    });
    expect(video.status, JSON.stringify(video.body)).to.equal(400);
    expect(video.body.error).to.include({ code: 'assets_of_different_accounts', param: 'content[2].image_url' });
    expect(video.body.error.message).not.to.match(/assets-[ab]/);
    expect((await gw.store.readStream(accountStream(accountId))).length, 'nothing reserved').to.equal(before);
  });

  it('sends a draft final only to the channel that made the draft', async () => {
    const draft = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-2.5', content: [{ type: 'text', text: 'draft me' }], draft: true, duration: 4 });
    expect(draft.status, JSON.stringify(draft.body)).to.equal(200);
    expect(await acceptedOn(`video-${draft.body.id}`)).to.equal('ark-a');
    await waitFor('draft succeeded', async () => (await gw.api(key, 'GET', `/v1/videos/generations/${draft.body.id}`)).body.status === 'succeeded');

    const seenB = videoB.seen;
    const seenA = videoA.seen;
    // Two 503s, then answers: counted by request, so the submission's retry budget is never at stake.
    videoA.act = (n) => (n < seenA + 2 ? { status: 503 } : 'forward');
    const final = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: draft.body.id } }] });
    expect(final.status, JSON.stringify(final.body)).to.equal(200);
    await waitFor('the final tried twice on ark-a', async () => videoA.seen >= seenA + 2);
    expect(videoB.seen, 'nothing sent to the channel that does not know the draft').to.equal(seenB);
    expect(await acceptedOn(`video-${final.body.id}`)).to.equal('ark-a');
    await waitFor('final billed', async () => (await gw.api(key, 'GET', `/v1/videos/generations/${final.body.id}`)).body.billing.status !== 'reserved');
    expect(videoB.seen).to.equal(seenB);
  });

  it('refuses to delete a channel while an unfinished task lives on it (409 channel_in_use), and deletes it once the task finished', async () => {
    // ark-a takes the task, which the simulated provider holds queued until it is released: the
    // task stays unfinished there for as long as the test needs, however slow the machine.
    const task = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-2.5', content: [{ type: 'text', text: 'a long one [sim:hold]' }], duration: 4 });
    expect(task.status, JSON.stringify(task.body)).to.equal(200);
    expect(await acceptedOn(`video-${task.body.id}`)).to.equal('ark-a');
    fs.writeFileSync(catalogFile, catalog([{ name: 'ark-b' }]));
    expect((await gw.admin('POST', '/admin/v1/catalog/reload')).status).to.equal(200);
    const refused = await gw.admin('DELETE', '/admin/v1/channels/ark-a');
    // Once seen answering 200 on a loaded machine, cause unknown: the task as it then was says more.
    const then = await gw.api(key, 'GET', `/v1/videos/generations/${task.body.id}`);
    expect(refused.status, `${JSON.stringify(refused.body)}; the task: ${JSON.stringify(then.body)}`).to.equal(409);
    expect(refused.body.error.code).to.equal('channel_in_use');
    expect(refused.body.error.message).to.include(task.body.id);
    expect((await gw.admin('GET', '/admin/v1/channels/ark-a')).status, 'still there').to.equal(200);

    const accepted = (await gw.store.readStream(`video-${task.body.id}`)).find((e) => e.type === 'TaskUpstreamAccepted')!;
    const released = await fetch(`${simulator.url}/ark/api/v3/sim/videos/${encodeURIComponent((accepted.data as { upstreamId: string }).upstreamId)}/release`, { method: 'POST' });
    expect(released.status).to.equal(200);
    await waitFor('task finished', async () => (await gw.api(key, 'GET', `/v1/videos/generations/${task.body.id}`)).body.billing.status !== 'reserved');
    const deleted = await gw.admin('DELETE', '/admin/v1/channels/ark-a');
    expect(deleted.status, JSON.stringify(deleted.body)).to.equal(200);
  });
});
