import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE, type CatalogFileEntry } from '../../src/billing/catalog';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { scriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream';
import { removeTestTempDir, testTempDir } from '../support/temp-dirs';
import { waitFor } from '../support/wait';

/**
 * Asynchronous tasks on a model of two channels (docs/operations.md, Routing): failed over at
 * submission only, never when the submission's outcome is unknown, and polled on the channel that
 * accepted them.
 */
describe('routing asynchronous tasks over several channels @integration', function () {
  this.timeout(120_000);

  let simulator: RunningSimulator;
  let dir: string;
  let gw: TestGateway;
  let first: ScriptedUpstream;
  let second: ScriptedUpstream;
  let key: string;

  before(async () => {
    simulator = await startSimulator();
    dir = testTempDir('routing-tasks-');
    [first, second] = await Promise.all([scriptedUpstream(simulator.url), scriptedUpstream(simulator.url)]);
    const original = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: CatalogFileEntry[] };
    const { channel: _channel, ...video } = original.models.find((m) => m.id === 'video-ref-2.0')!;
    const routed = { ...video, id: 'video-routed', channels: [{ name: 'ark-first', priority: 1 }, { name: 'ark-second' }], capabilities: { ...video.capabilities, upstream_model: 'video-ref-2.0' } };
    const catalogFile = path.join(dir, 'catalog.json');
    fs.writeFileSync(catalogFile, JSON.stringify({ models: [...original.models, routed] }));
    const served = channelsServedBy(simulator.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 16 });
    const ark = served.find((c) => c.name === 'ark')!;
    const path_ = new URL(ark.base_url).pathname;
    const fronts = [
      { ...ark, name: 'ark-first', base_url: `${first.url}${path_}` },
      { ...ark, name: 'ark-second', base_url: `${second.url}${path_}` },
    ];
    gw = await startTestGateway({ CHANNELS: JSON.stringify([...served, ...fronts]), CATALOG_FILE: catalogFile });
    ({ key } = await gw.fundedAccount(1_000_000_000));
  });

  beforeEach(() => {
    first.act = 'forward';
    second.act = 'forward';
    for (const name of ['ark-first', 'ark-second']) gw.upstreams.mend(name);
  });

  afterEach(async () => {
    await gw.expectAuditClean();
  });

  after(async () => {
    await gw?.close();
    await Promise.all([first, second].map((u) => u?.close()));
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

  it('fails a submission the first channel answers with a 5xx over to the next, records it, and polls only there', async () => {
    first.act = { status: 503 };
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
  });

  it('never sends a submission whose outcome is unknown to another channel: the task fails and is released', async () => {
    const before = { first: first.seen, second: second.seen };
    first.act = 'hang-up';
    const res = await create('a heron, lost on the wire');
    // The task is created and answered at once; its submission fails it.
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const task = await finished(res.body.id);
    expect(second.seen, 'the second channel was never asked').to.equal(before.second);
    expect(first.seen - before.first).to.equal(1);
    expect(task.status).to.equal('failed');
    expect(task.error.code).to.equal('upstream_outcome_unknown');
    expect(task.billing.status).to.equal('released');
  });
});
