import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

const PER_SECOND_768P = 350_000; // video-h3 at 768P
const PER_SECOND_2K = 800_000;

/**
 * The H3 class end to end: the gateway's MiniMax channel (deploy/channels.example.json, base URL
 * rewritten to the simulated MiniMax) carries `video-h3` through MiniMax's video generation v2,
 * whose task ids, statuses, usage and errors the gateway reads into its own.
 */
describe('video generation on MiniMax (the H3 class) @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;

  before(async () => {
    gw = await startTestGateway({ TASK_POLL_MS: '20' });
    ({ key, accountId } = await gw.fundedAccount(1_000_000_000));
  });
  afterEach(async () => expectSettledAndAuditClean(gw, [key]));
  after(async () => gw.close());

  const create = (body: Record<string, unknown>) => gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-h3', ...body });
  const billed = (id: string) =>
    waitFor(`task ${id} to be billed`, async () => {
      const t = (await gw.api(key, 'GET', `/v1/videos/generations/${id}`)).body;
      return t.billing.status !== 'reserved' ? t : null;
    });

  it('runs a text-to-video task on MiniMax: MiniMax\'s task id, held queued, then the video, settled by the seconds MiniMax reports', async () => {
    const res = await create({ content: [{ type: 'text', text: 'a lighthouse at dusk [sim:hold] [sim:usage-duration=5.2]' }], ratio: '16:9', duration: 8 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.upstream_id, 'MiniMax\'s id, a string of digits').to.match(/^\d{10,}$/);
    expect((await gw.api(key, 'GET', `/v1/videos/generations/${res.body.id}`)).body.status).to.equal('queued');
    const upstreamId = (await gw.tasks.read('video', res.body.id, accountId))!.upstream_id!;
    expect((await fetch(`${gw.simulator.url}/minimax/sim/videos/${upstreamId}/release`, { method: 'POST' })).status).to.equal(200);
    const task = await billed(res.body.id);
    expect(task.status).to.equal('succeeded');
    expect(task.video_url).to.match(/\/minimax\/sim\/files\/\d+\.mp4/);
    expect(task.last_frame_url).to.equal(null);
    expect(task.usage).to.deep.include({ duration_seconds: 6, resolution: '768P' });
    expect(task.billing).to.deep.include({ status: 'settled', reserved: 8 * PER_SECOND_768P, amount: 6 * PER_SECOND_768P });
  });

  it('runs a 2K image-to-video task with an adaptive ratio', async () => {
    const res = await create({ content: [{ type: 'text', text: 'the sail fills' }, { type: 'image_url', image_url: { url: 'https://example.com/boat.png' }, role: 'first_frame' }], resolution: '2K', duration: 4 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const task = await billed(res.body.id);
    expect(task.status).to.equal('succeeded');
    expect(task.request).to.deep.include({ resolution: '2K', ratio: 'adaptive', duration: 4 });
    expect(task.billing).to.deep.include({ status: 'settled', amount: 4 * PER_SECOND_2K });
  });

  it('fails a task with the gateway\'s code for MiniMax\'s, and releases it: sensitive output, an expired task, a refused real person, a text-less request', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ content: [{ type: 'text', text: 'rude [sim:task-error=1027]' }], ratio: '1:1' }, 'output_sensitive_content'],
      // An expired task (not in MiniMax's reference: docs/providers.md) is refunded, not retried as an unknown status.
      [{ content: [{ type: 'text', text: 'too late [sim:expire]' }], ratio: '1:1' }, 'upstream_task_expired'],
      [{ content: [{ type: 'text', text: 'who' }, { type: 'image_url', image_url: { url: 'https://example.com/sim-real-person.png' }, role: 'first_frame' }] }, 'input_sensitive_content'],
      // The spec's image-to-video needs no text item, so the gateway takes it; MiniMax takes exactly
      // one non-empty text item and refuses the rest at submission (docs/providers.md): released.
      [{ content: [{ type: 'image_url', image_url: { url: 'https://example.com/still.png' }, role: 'first_frame' }] }, 'upstream_rejected'],
    ];
    for (const [body, code] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const task = await billed(res.body.id);
      expect([task.status, task.error?.code], JSON.stringify(body)).to.deep.equal(['failed', code]);
      expect(task.billing).to.deep.include({ status: 'released', amount: 0 });
    }
  });
});
