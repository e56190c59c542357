import { expect } from 'chai';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { channelConfigs } from '../../src/config';
import { arkVideoTasks, createSeedanceTask } from '../../src/upstreams/ark/video-tasks';
import type { VideoTaskAsk } from '../../src/upstreams/video-task';
import { Channel } from '../../src/upstreams/channel';
import { UpstreamError } from '../../src/upstreams/errors';
import { channelsServedBy } from '../../src/upstreams/registry';
import { waitFor } from '../support/wait';

/**
 * The Ark video adapter through a real channel (the checked-in channels file's `ark` entry, its
 * base URL moved onto the simulator) against the simulated Ark: Bearer authentication, and every
 * operation the adapter builds, read back as the gateway reads it.
 */
describe('Ark video tasks through the ark channel, against the simulated Ark @integration', () => {
  let sim: RunningSimulator;
  let channel: Channel;
  let wrongKey: Channel;

  before(async () => {
    sim = await startSimulator();
    const entries = channelsServedBy(sim.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 10_000, maxConcurrency: 4 });
    const ark = entries.find((e) => e.name === 'ark');
    expect(ark?.base_url).to.equal(`${sim.url}/ark/api/v3`);
    const [config] = channelConfigs([ark], 'the ark entry');
    channel = new Channel(config!);
    const [wrong] = channelConfigs([{ ...ark, api_key: 'not-the-key' }], 'a wrong ark key');
    wrongKey = new Channel(wrong!);
  });
  after(async () => {
    await Promise.all([channel.close(), wrongKey.close()]);
    await sim.close();
  });

  const ask = (text: string): VideoTaskAsk => ({
    model: 'doubao-seedance-1-5-pro-251215',
    content: [{ type: 'text', text }],
    mode: 'text',
    resolution: '1080p',
    ratio: '16:9',
    duration: 5,
    seed: 7,
    generate_audio: true,
    draft: false,
    return_last_frame: true,
    camera_fixed: false,
    watermark: false,
    service_tier: 'default',
    safety_identifier: null,
    draft_task: null,
  });

  it('creates, polls to success and reads the video, its expiry and what Ark bills by', async () => {
    const { upstreamId } = await arkVideoTasks.create(channel, ask('a lighthouse [sim:delay=50]'), 'vid_ch_1');
    const done = await waitFor('the task to succeed', async () => {
      const reading = await arkVideoTasks.get(channel, upstreamId);
      return reading.state === 'succeeded' ? reading : null;
    });
    expect(done.usage).to.deep.equal({ duration_seconds: 5, resolution: '1080p', completion_tokens: Math.floor((1920 * 1080 * 121) / 1024) });
    expect(done.last_frame_url).to.be.a('string');
    expect(done.video_url_expires_at! - Date.now() / 1000).to.be.within(86_400 - 60, 86_400 + 1);
  });

  it('cancels a queued task with DELETE; a second cancel is refused with Ark’s error', async () => {
    const { upstreamId } = await arkVideoTasks.create(channel, ask('held [sim:hold]'), 'vid_ch_2');
    await arkVideoTasks.cancel(channel, upstreamId);
    expect(await arkVideoTasks.get(channel, upstreamId)).to.have.nested.property('error.code', 'upstream_task_cancelled');
    const refusal = await arkVideoTasks.cancel(channel, upstreamId).then(() => null, (err: unknown) => err);
    expect(refusal).to.be.instanceOf(UpstreamError).with.property('status', 400);
  });

  it("is refused with a wrong key as Ark refuses it, read as the gateway's credential error", async () => {
    const answer = await wrongKey.call(createSeedanceTask(ask('anything'), 'vid_ch_3'));
    expect(answer.status).to.equal(401);
    expect(answer.json()).to.have.nested.property('error.code', 'AuthenticationError');
    const refusal = await arkVideoTasks.create(wrongKey, ask('anything'), 'vid_ch_4').then(() => null, (err: unknown) => err);
    expect(refusal).to.be.instanceOf(UpstreamError).with.property('code', 'upstream_auth_failed');
  });
});
