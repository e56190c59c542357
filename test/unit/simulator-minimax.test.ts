import fs from 'node:fs';
import { expect } from 'chai';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { EXAMPLE_CHANNELS_FILE } from '../../src/upstreams/registry';
import { Channel } from '../../src/upstreams/channel';
import { createVideoTask, minimaxVideoTasks, readCreated } from '../../src/upstreams/minimax/video';
import type { VideoContentItem } from '../../src/upstreams/video-task';
import { upstreamErrorOf as refusal } from '../support/wire-answer';

/**
 * The simulated MiniMax (simulator/providers/minimax.ts) driven by the gateway's own MiniMax
 * adapter over a real channel: it speaks what the adapter reads (MiniMax publishes no Node SDK for
 * video generation v2; the adapter's fixtures are checked against the reference in
 * minimax-video.test.ts), refuses a wrong key as MiniMax does, and checks the H3 rules MiniMax checks.
 */
describe('upstream simulator: MiniMax video generation v2', () => {
  let sim: RunningSimulator;
  let minimax: Channel;
  const channelOf = (apiKey: string) => new Channel({ name: 'minimax', protocol: 'minimax', base_url: `${sim.url}/minimax`, auth: { kind: 'bearer', apiKey }, timeout_ms: 5_000, max_concurrency: 4 });
  before(async () => {
    sim = await startSimulator();
    // The simulated providers accept the channels file's placeholder credentials, as the fallback sends them.
    const entries = JSON.parse(fs.readFileSync(EXAMPLE_CHANNELS_FILE, 'utf8')) as { protocol?: string; api_key?: string }[];
    minimax = channelOf(entries.find((e) => e.protocol === 'minimax')!.api_key!);
  });
  after(async () => {
    await minimax.close();
    await sim.close();
  });

  const text = (t: string): VideoContentItem => ({ type: 'text', text: t });
  const h3 = { model: 'MiniMax-H3', resolution: '768P', duration: 6, ratio: '16:9', watermark: false };
  const create = async (task: Partial<typeof h3> & { content: VideoContentItem[] }) => readCreated(await minimax.call(createVideoTask({ ...h3, ...task })), 'minimax');
  const query = (id: string) => minimaxVideoTasks.get(minimax, id);
  const release = async (id: string) => expect((await fetch(`${sim.url}/minimax/sim/videos/${id}/release`, { method: 'POST' })).status).to.equal(200);

  it('creates a task with a digit id, holds it queued, then succeeds with a downloadable video and the usage billing reads', async () => {
    const { upstreamId } = await create({ resolution: '2K', duration: 5, content: [text('a held cat [sim:hold] [sim:usage-duration=4.6]')] });
    expect(upstreamId).to.match(/^\d{10,}$/);
    expect(await query(upstreamId)).to.deep.equal({ state: 'pending', upstreamStatus: 'queued' });
    await release(upstreamId);
    const done = await query(upstreamId);
    if (done.state !== 'succeeded') throw new Error(`not succeeded: ${JSON.stringify(done)}`);
    expect(done.usage).to.deep.equal({ duration_seconds: 4.6, resolution: '2K', completion_tokens: null });
    const video = await fetch(done.video_url);
    expect([video.status, video.headers.get('content-type')]).to.deep.equal([200, 'video/mp4']);
  });

  it('refuses a wrong key as MiniMax does (authorized_error 401), which the adapter reads as a refusal of the gateway\'s credentials', async () => {
    const wrong = channelOf('not-the-key');
    try {
      const err = await refusal(() => wrong.call(createVideoTask({ ...h3, content: [text('x')] })).then((a) => readCreated(a, 'minimax')));
      expect([err.status, err.code]).to.deep.equal([401, 'upstream_auth_failed']);
    } finally {
      await wrong.close();
    }
  });

  it('checks the H3 rules MiniMax checks: model, one text item, resolution, duration, ratio for text, frames without references', async () => {
    const first: VideoContentItem = { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, role: 'first_frame' };
    const ref: VideoContentItem = { type: 'image_url', image_url: { url: 'https://example.com/r.png' }, role: 'reference_image' };
    const cases: (Partial<typeof h3> & { content: VideoContentItem[] })[] = [
      { model: 'video-h3', content: [text('x')] },
      { content: [first] },
      { resolution: '720p', content: [text('x')] },
      { duration: 3, content: [text('x')] },
      { duration: 16, content: [text('x')] },
      { ratio: 'adaptive', content: [text('x')] },
      { content: [text('x'), first, ref] },
    ];
    for (const task of cases) expect(await refusal(() => create(task)), JSON.stringify(task)).to.include({ status: 400, code: 'upstream_rejected' });
    expect(await create({ ratio: 'adaptive', content: [text('animate [sim:delay=0]'), first] })).to.have.property('upstreamId');
  });

  it('refuses a real person\'s image as sensitive input (422), fails tasks with MiniMax\'s codes, and expires one ([sim:expire])', async () => {
    const person: VideoContentItem = { type: 'image_url', image_url: { url: 'https://example.com/sim-real-person.png' }, role: 'first_frame' };
    expect(await refusal(() => create({ content: [text('x'), person] }))).to.include({ status: 422, code: 'input_sensitive_content' });
    const failed = await create({ content: [text('doomed [sim:fail] [sim:delay=0]')] });
    expect(await query(failed.upstreamId)).to.deep.equal({ state: 'failed', error: { code: 'task_failed', message: 'the simulated generation failed' } });
    const sensitive = await create({ content: [text('rude [sim:task-error=1027] [sim:delay=0]')] });
    expect(await query(sensitive.upstreamId)).to.deep.include({ state: 'failed', error: { code: 'output_sensitive_content', message: 'the simulated generation failed with code 1027' } });
    const expired = await create({ content: [text('too late [sim:expire] [sim:delay=0]')] });
    expect(await query(expired.upstreamId)).to.deep.equal({ state: 'failed', error: { code: 'upstream_task_expired', message: 'the upstream task expired before it ran' } });
  });

  it('cancels a queued task (read later as cancelled at the provider) and deletes a finished one, whose id is then unknown', async () => {
    const queued = await create({ content: [text('never mind [sim:hold]')] });
    await minimaxVideoTasks.cancel(minimax, queued.upstreamId);
    expect(await query(queued.upstreamId)).to.deep.equal({ state: 'failed', error: { code: 'upstream_task_cancelled', message: 'the upstream task was cancelled at the provider' } });
    const done = await create({ content: [text('quick [sim:delay=0]')] });
    await minimaxVideoTasks.cancel(minimax, done.upstreamId);
    expect(await refusal(() => query(done.upstreamId))).to.include({ status: 400, code: 'upstream_rejected' });
  });
});
