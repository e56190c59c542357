import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE, type CatalogFileEntry } from '../../src/billing/catalog';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { scriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream';
import { taskSettlement } from '../support/settlements';
import { removeTestTempDir, testTempDir } from '../support/temp-dirs';
import { waitFor } from '../support/wait';

/**
 * Asynchronous tasks on a model of two channels (docs/operations.md, Routing): failed over at
 * submission only, never when the submission's outcome is unknown, polled on the channel that
 * accepted them, and settled naming it. Async images, which generate at poll time, fail over by
 * the same rule and settle naming the channel that made them.
 */
describe('routing asynchronous tasks over several channels @integration', function () {
  this.timeout(120_000);

  let simulator: RunningSimulator;
  let dir: string;
  let gw: TestGateway;
  let first: ScriptedUpstream;
  let second: ScriptedUpstream;
  let imagesFirst: ScriptedUpstream;
  let imagesSecond: ScriptedUpstream;
  let key: string;

  before(async () => {
    simulator = await startSimulator();
    dir = testTempDir('routing-tasks-');
    [first, second, imagesFirst, imagesSecond] = await Promise.all([1, 2, 3, 4].map(() => scriptedUpstream(simulator.url)));
    const original = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: CatalogFileEntry[] };
    const { channel: _channel, ...video } = original.models.find((m) => m.id === 'video-ref-2.0')!;
    const routed = { ...video, id: 'video-routed', channels: [{ name: 'ark-first', priority: 1 }, { name: 'ark-second' }], capabilities: { ...video.capabilities, upstream_model: 'video-ref-2.0' } };
    const { channel: _imageChannel, ...image } = original.models.find((m) => m.id === 'image-5.0')!;
    const routedImages = { ...image, id: 'image-routed', channels: [{ name: 'images-first', priority: 1 }, { name: 'images-second' }] };
    const catalogFile = path.join(dir, 'catalog.json');
    fs.writeFileSync(catalogFile, JSON.stringify({ models: [...original.models, routed, routedImages] }));
    const served = channelsServedBy(simulator.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 16 });
    const ark = served.find((c) => c.name === 'ark')!;
    const path_ = new URL(ark.base_url).pathname;
    const arkImages = served.find((c) => c.name === 'ark-images')!;
    const imagesPath = new URL(arkImages.base_url).pathname;
    const fronts = [
      { ...ark, name: 'ark-first', base_url: `${first.url}${path_}` },
      { ...ark, name: 'ark-second', base_url: `${second.url}${path_}` },
      { ...arkImages, name: 'images-first', base_url: `${imagesFirst.url}${imagesPath}` },
      { ...arkImages, name: 'images-second', base_url: `${imagesSecond.url}${imagesPath}` },
    ];
    gw = await startTestGateway({ CHANNELS: JSON.stringify([...served, ...fronts]), CATALOG_FILE: catalogFile });
    ({ key } = await gw.fundedAccount(1_000_000_000));
  });

  beforeEach(() => {
    for (const front of [first, second, imagesFirst, imagesSecond]) front.act = 'forward';
    for (const name of ['ark-first', 'ark-second', 'images-first', 'images-second']) gw.upstreams.mend(name);
  });

  afterEach(async () => {
    await gw.expectAuditClean();
  });

  after(async () => {
    await gw?.close();
    await Promise.all([first, second, imagesFirst, imagesSecond].map((u) => u?.close()));
    await simulator?.close();
    if (dir) removeTestTempDir(dir);
  });

  const create = (text: string) => gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-routed', content: [{ type: 'text', text }], duration: 4 });
  const finished = (id: string) =>
    waitFor(`task ${id} to finish`, async () => {
      const t = (await gw.api(key, 'GET', `/v1/videos/generations/${id}`)).body;
      return t.billing.status !== 'reserved' ? t : null;
    });

  async function acceptedOn(taskId: string): Promise<string | undefined> {
    const events = await gw.store.readStream(`video-${taskId}`);
    const accepted = events.find((e) => e.type === 'TaskUpstreamAccepted');
    return (accepted?.data as { channel?: string } | undefined)?.channel;
  }

  it('fails a submission the first channel answers with a 5xx naming its error code over to the next, records it, and polls only there', async () => {
    // Ark's own internal error, in Ark's error body: the provider's verdict that it did not take the task.
    first.act = { status: 500, body: { error: { message: 'internal error', type: 'server_error', param: null, code: 'InternalServiceError' } } };
    const res = await create('a heron fishing');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(first.seen).to.equal(1);
    expect(await acceptedOn(res.body.id)).to.equal('ark-second');
    // The first channel is healthy again: the task's polls still go to the one that holds it.
    first.act = 'forward';
    const task = await finished(res.body.id);
    expect(task.status).to.equal('succeeded');
    expect(task.billing.status).to.equal('settled');
    expect(first.seen, 'no poll reached the channel that does not hold the task').to.equal(1);
    expect(second.seen).to.be.greaterThan(1);
    const settlement = await taskSettlement(gw, `video-${res.body.id}`);
    expect([settlement.channel, settlement.channels], 'the settlement names the channel that served').to.deep.equal(['ark-second', undefined]);
  });

  for (const [what, act] of [
    ['a connection broken after the request was written', 'hang-up'],
    ['a 504 of a gateway in front of the provider', { status: 504, body: { error: { message: 'upstream timed out', type: 'server_error', param: null, code: 'GatewayTimeout' } } }],
    ['a 502', { status: 502 }],
    ['a 503 without the provider\'s error code', { status: 503, headers: { 'content-type': 'text/html' }, body: '<html>busy</html>' }],
  ] as const) {
    it(`never sends a submission whose outcome is unknown (${what}) to another channel: the task fails and is released`, async () => {
      const before = { first: first.seen, second: second.seen };
      first.act = act;
      // The task is created and answered at once; its submission fails it.
      const res = await create(`a heron behind ${what}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const task = await finished(res.body.id);
      expect(second.seen, 'the second channel was never asked').to.equal(before.second);
      expect(first.seen - before.first).to.equal(1);
      expect(task.status).to.equal('failed');
      expect(task.error.code).to.equal('upstream_outcome_unknown');
      expect(task.billing.status).to.equal('released');
    });
  }

  const createImages = (prompt: string) => gw.api(key, 'POST', '/v1/images/async', { model: 'image-routed', prompt, n: 1 });
  const imagesFinished = (id: string) =>
    waitFor(`image task ${id} to finish`, async () => {
      const t = (await gw.api(key, 'GET', `/v1/images/async/${id}`)).body;
      return t.status === 'succeeded' || t.status === 'failed' ? t : null;
    });

  it('fails an async image generation the first channel answers with a 5xx over to the next, and settles naming it', async () => {
    imagesFirst.act = { status: 503, body: { error: { message: 'overloaded', type: 'server_error', param: null, code: 'server_overloaded' } } };
    const res = await createImages('a heron at dawn');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const task = await imagesFinished(res.body.id);
    expect(task.status, JSON.stringify(task)).to.equal('succeeded');
    expect(task.result.data).to.have.length(1);
    expect([imagesFirst.seen, imagesSecond.seen], 'one refused call, one generation').to.deep.equal([1, 1]);
    const settlement = await taskSettlement(gw, `image-${res.body.id}`);
    expect([settlement.channel, settlement.channels]).to.deep.equal(['images-second', undefined]);
    expect(settlement.usage).to.deep.include({ images: 1 });
    const succeeded = (await gw.store.readStream(`image-${res.body.id}`)).find((e) => e.type === 'TaskUpstreamSucceeded')!;
    expect((succeeded.data as { channels?: string[] }).channels, 'the task records the channel that made its images').to.deep.equal(['images-second']);
  });

  it('never sends an async image generation whose outcome is unknown to another channel: the task fails and is released', async () => {
    const before = { first: imagesFirst.seen, second: imagesSecond.seen };
    imagesFirst.act = 'hang-up';
    const res = await createImages('a heron, lost on the wire');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const task = await imagesFinished(res.body.id);
    expect(task.status).to.equal('failed');
    expect([imagesFirst.seen - before.first, imagesSecond.seen - before.second], 'asked once, never elsewhere').to.deep.equal([1, 0]);
    const row = await waitFor('the image task to be billed', async () => {
      const { rows } = await gw.pool.query(`SELECT billing_status FROM rm.tasks WHERE task_id = $1 AND billing_status <> 'reserved'`, [res.body.id]);
      return rows[0] ?? null;
    });
    expect(row.billing_status).to.equal('released');
  });
});
