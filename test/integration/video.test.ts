import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { verifyWebhook } from '../../src/webhooks/signing';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { leaseSecondsLeft } from '../support/idempotency';
import { arkReleasePath } from '../support/simulated-ark';
import { testTempDir } from '../support/temp-dirs';
import { Receiver, type Received } from '../support/webhook-receiver';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

const PER_SECOND_720 = 400_000; // video-ref-2.0 at 720p

describe('video generation tasks and webhooks @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  let receiver: Receiver;

  const env = {
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_DELAYS_MS: '100,200,300',
    WEBHOOK_TIMEOUT_MS: '300',
    TASK_POLL_MS: '20',
  };

  before(async () => {
    gw = await startTestGateway(env);
    ({ key, accountId } = await gw.fundedAccount(1_000_000_000));
  });
  beforeEach(async () => {
    receiver = await new Receiver().start();
  });
  afterEach(async () => {
    await receiver.close();
    await expectSettledAndAuditClean(gw, [key]);
  });
  after(async () => gw.close());

  const create = (body: Record<string, unknown>, headers?: Record<string, string>, k = key) => gw.api(k, 'POST', '/v1/videos/generations', body, headers);
  const get = (id: string, k = key) => gw.api(k, 'GET', `/v1/videos/generations/${id}`);
  const billed = (id: string) => waitFor(`task ${id} to be billed`, async () => {
    const t = (await get(id)).body;
    return t.billing.status !== 'reserved' ? t : null;
  });

  /** Lets a task the provider holds (`[sim:hold]`) finish. */
  async function releaseUpstream(id: string): Promise<void> {
    const upstreamId = await waitFor(`task ${id} accepted upstream`, async () => (await gw.tasks.read('video', id, accountId))?.upstream_id ?? null);
    expect((await fetch(gw.simulator.url + arkReleasePath(upstreamId), { method: 'POST' })).status).to.equal(200);
  }

  it('creates a text-to-video task, answers at once, finishes, and settles by actual usage', async () => {
    const before = (await gw.api(key, 'GET', '/v1/account')).body.balance;
    // Held by the provider until the frozen amount is read.
    const res = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'a cat surfing [sim:hold]' }], duration: 4 });
    expect(res.status).to.equal(200);
    expect(res.body).to.have.keys(['id', 'upstream_id', 'model', 'status', 'created_at']);
    expect(res.body).to.deep.include({ model: 'video-ref-2.0', status: 'queued' });
    expect(res.body.upstream_id, 'the provider took the task during the request').to.match(/^cgt-sim-/);
    expect(Date.parse(res.body.created_at)).to.be.a('number').and.not.NaN;
    const frozen = (await gw.api(key, 'GET', '/v1/account')).body.balance;
    expect(frozen.frozen - before.frozen).to.equal(4 * PER_SECOND_720);

    await releaseUpstream(res.body.id);
    const task = await billed(res.body.id);
    expect(task.status).to.equal('succeeded');
    expect(task.video_url).to.match(/^http/);
    expect(task.upstream_id).to.match(/^cgt-sim-/);
    expect(task.usage).to.deep.include({ duration_seconds: 4, resolution: '720p' });
    expect(task.billing).to.deep.include({ status: 'settled', amount: 4 * PER_SECOND_720, reserved: 4 * PER_SECOND_720 });
    expect(task.request).to.deep.include({ resolution: '720p', ratio: 'adaptive', duration: 4, seed: -1, generate_audio: true, service_tier: 'default', video_url_mode: 'auto' });
    const after = (await gw.api(key, 'GET', '/v1/account')).body.balance;
    expect(before.available - after.available).to.equal(4 * PER_SECOND_720);
  });

  it('bills the usage a provider reports in its own form: a fraction of a second started, a resolution in capitals, no more than the model makes', async () => {
    const res = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'a cat surfing [sim:usage-duration=4.04] [sim:usage-resolution=720P]' }], duration: 4 });
    expect(res.status).to.equal(200);
    const task = await billed(res.body.id);
    expect(task.status).to.equal('succeeded');
    expect(task.usage).to.deep.include({ duration_seconds: 5, resolution: '720p', reported: { duration: 4.04, resolution: '720P' } });
    expect(task.billing).to.deep.include({ status: 'settled', amount: 5 * PER_SECOND_720, reserved: 4 * PER_SECOND_720 });
    // A report no price reads at all bills the requested resolution and duration, which the reservation priced.
    const odd = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'a cat surfing [sim:usage-duration=-1] [sim:usage-resolution=8K]' }], duration: 4 });
    expect((await billed(odd.body.id)).billing).to.deep.include({ status: 'settled', amount: 4 * PER_SECOND_720 });
    // A report beyond the longest video the model makes (12 s) bills that longest, not the report.
    const long = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'a cat surfing [sim:usage-duration=100000]' }], duration: 4 });
    expect((await billed(long.body.id)).billing).to.deep.include({ status: 'settled', amount: 12 * PER_SECOND_720 });
  });

  async function withSecret(): Promise<string> {
    return (await gw.api(key, 'POST', '/v1/account/webhook-secret')).body.secret as string;
  }

  it('delivers a signed success payload that verifies with the account secret', async () => {
    const secret = await withSecret();
    const res = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'sunrise' }], callback_url: receiver.url, video_url_mode: 'auto' });
    expect(res.status).to.equal(200);
    await waitFor('the webhook', async () => receiver.received.length === 1);
    const [hook] = receiver.received;
    expect(hook!.headers['content-type']).to.equal('application/json');
    const signature = hook!.headers['x-service-signature'] as string;
    expect(signature).to.match(/^sha256=[0-9a-f]{64}$/);
    expect(verifyWebhook(secret, hook!.headers['x-service-timestamp'] as string, hook!.body, signature, Math.floor(Date.now() / 1000))).to.equal(true);
    expect(verifyWebhook('whsec_wrong', hook!.headers['x-service-timestamp'] as string, hook!.body, signature, Math.floor(Date.now() / 1000))).to.equal(false);
    const payload = JSON.parse(hook!.body);
    expect(payload).to.have.keys(['task_id', 'status', 'model', 'video_url', 'created_at', 'finished_at']);
    expect(payload).to.deep.include({ task_id: res.body.id, status: 'succeeded', model: 'video-ref-2.0' });
    expect(payload.video_url).to.match(/^http/);
    // The receiver answered before the gateway recorded the attempt: wait for the record.
    const task = await waitFor('the delivery on record', async () => {
      const t = (await get(res.body.id)).body;
      return t.webhook.deliveries[0]?.status === 'delivered' ? t : null;
    });
    expect(task.webhook.deliveries).to.have.length(1);
    expect(task.webhook.deliveries[0].attempts[0]).to.deep.include({ attempt: 1, ok: true, status_code: 200 });
  });

  it('delivers a failure payload and releases the whole freeze', async () => {
    await withSecret();
    const before = (await gw.api(key, 'GET', '/v1/account')).body.balance.available;
    const res = await create({ model: 'video-pro-1.5', content: [{ type: 'text', text: 'doomed [sim:fail]' }], callback_url: receiver.url });
    await waitFor('the webhook', async () => receiver.received.length === 1);
    const payload = JSON.parse(receiver.received[0]!.body);
    expect(payload).to.have.keys(['task_id', 'status', 'model', 'error', 'created_at', 'finished_at']);
    expect(payload).to.deep.include({ task_id: res.body.id, status: 'failed', model: 'video-pro-1.5' });
    expect(payload.error).to.have.keys(['code', 'message']);
    const task = await billed(res.body.id);
    expect(task.billing).to.deep.include({ status: 'released', amount: 0 });
    expect(task.error.code).to.equal('InternalServiceError');
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance.available).to.equal(before);
  });

  it("fails a task Ark expired or cancelled unasked with the gateway's code: failure webhook, whole freeze released", async () => {
    await withSecret();
    const before = (await gw.api(key, 'GET', '/v1/account')).body.balance.available;
    const cases = [
      { directive: '[sim:expire]', code: 'upstream_task_expired' },
      { directive: '[sim:provider-cancel]', code: 'upstream_task_cancelled' },
    ];
    for (const [i, c] of cases.entries()) {
      const res = await create({ model: 'video-pro-1.5', content: [{ type: 'text', text: `never runs ${c.directive}` }], service_tier: 'flex', callback_url: receiver.url });
      await waitFor(`webhook ${i + 1}`, async () => receiver.received.length === i + 1);
      expect(JSON.parse(receiver.received[i]!.body)).to.deep.include({ task_id: res.body.id, status: 'failed', error: (await billed(res.body.id)).error });
      const task = await billed(res.body.id);
      expect(task.status).to.equal('failed');
      expect(task.error.code).to.equal(c.code);
      expect(task.billing).to.deep.include({ status: 'released', amount: 0 });
    }
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance.available).to.equal(before);
  });

  /** Whether one received attempt verifies against its own timestamp header and its own body. */
  const verifiesAlone = (r: Received, secret: string) =>
    verifyWebhook(secret, r.headers['x-service-timestamp'] as string, r.body, r.headers['x-service-signature'] as string, Math.floor(Date.now() / 1000));

  it('retries a failing receiver at the configured spacing until it answers 2xx', async () => {
    const secret = await withSecret();
    receiver.script = [500, 503, 200];
    const res = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'retry me' }], callback_url: receiver.url });
    await waitFor('three attempts', async () => receiver.received.length === 3);
    const gaps = [receiver.received[1]!.at - receiver.received[0]!.at, receiver.received[2]!.at - receiver.received[1]!.at];
    expect(gaps[0]).to.be.at.least(100);
    expect(gaps[1]).to.be.at.least(200);
    for (const [i, r] of receiver.received.entries()) {
      expect(r.headers['x-service-signature'], `attempt ${i + 1} is signed`).to.match(/^sha256=[0-9a-f]{64}$/);
      expect(verifiesAlone(r, secret), `attempt ${i + 1} verifies against its own timestamp and body`).to.equal(true);
    }
    const task = await waitFor('delivered', async () => {
      const t = (await get(res.body.id)).body;
      return t.webhook.deliveries[0]?.status === 'delivered' ? t : null;
    });
    expect(task.webhook.deliveries[0].attempts.map((a: { status_code: number }) => a.status_code)).to.deep.equal([500, 503, 200]);
    // A delivered delivery is never attempted again (the webhook job checks its state first): three is final.
    expect(receiver.received).to.have.length(3);
  });

  it('drops a delivery after 4 attempts to a receiver that never answers; the task stays readable', async () => {
    const secret = await withSecret();
    receiver.script = ['hang'];
    const res = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'nobody listens' }], callback_url: receiver.url });
    const task = await waitFor('dropped', async () => {
      const t = (await get(res.body.id)).body;
      return t.webhook?.deliveries[0]?.status === 'dropped' ? t : null;
    });
    expect(receiver.received).to.have.length(4);
    // Each attempt is signed afresh: the fourth starts at least 3 × 300 ms (timeouts) + 600 ms
    // (delays) after the first, so its timestamp is a later second, and its signature is over that.
    const [first, , , fourth] = receiver.received;
    expect(Number(fourth!.headers['x-service-timestamp']), 'a fresh timestamp on a later attempt').to.be.greaterThan(Number(first!.headers['x-service-timestamp']));
    expect(fourth!.headers['x-service-signature']).to.not.equal(first!.headers['x-service-signature']);
    for (const [i, r] of receiver.received.entries()) expect(verifiesAlone(r, secret), `attempt ${i + 1} verifies against its own timestamp and body`).to.equal(true);
    expect(task.webhook.deliveries[0].attempts).to.have.length(4);
    expect(task.webhook.deliveries[0].attempts.every((a: { ok: boolean; error: string }) => !a.ok && /no answer within 300 ms/.test(a.error))).to.equal(true);
    expect(task.status).to.equal('succeeded');
    expect(task.video_url).to.match(/^http/);

    // The customer can have it sent again, as a new delivery.
    receiver.script = [200];
    const redeliver = await gw.api(key, 'POST', `/v1/videos/generations/${res.body.id}/webhook/redeliver`);
    expect(redeliver.status).to.equal(202);
    await waitFor('the redelivery', async () => receiver.received.length === 5);
    const again = await waitFor('redelivered', async () => {
      const t = (await get(res.body.id)).body;
      return t.webhook.deliveries[1]?.status === 'delivered' ? t : null;
    });
    expect(again.webhook.deliveries[1]).to.deep.include({ id: redeliver.body.delivery_id, reason: 'redeliver' });
    expect(JSON.parse(receiver.received[4]!.body).task_id).to.equal(res.body.id);
  });

  it('signs each attempt with the secret in force: a rotation between attempts applies to the next one', async () => {
    const oldSecret = await withSecret();
    receiver.script = ['hang', 200];
    await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'rotate' }], callback_url: receiver.url, video_url_mode: 'upstream' });
    await waitFor('the first attempt', async () => receiver.received.length === 1);
    const newSecret = await withSecret();
    await waitFor('the second attempt', async () => receiver.received.length === 2);
    const verify = (r: Received, s: string) => verifyWebhook(s, r.headers['x-service-timestamp'] as string, r.body, r.headers['x-service-signature'] as string, Math.floor(Date.now() / 1000));
    expect(verify(receiver.received[0]!, oldSecret)).to.equal(true);
    expect(verify(receiver.received[1]!, newSecret)).to.equal(true);
    expect(verify(receiver.received[1]!, oldSecret)).to.equal(false);
  });

  it('delivers unsigned on the legacy path: callback without a secret and without an explicit mode', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const res = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'legacy' }], callback_url: receiver.url }, undefined, fresh.key);
    expect(res.status).to.equal(200);
    await waitFor('the webhook', async () => receiver.received.length === 1);
    expect(receiver.received[0]!.headers['x-service-signature']).to.equal(undefined);
    expect(receiver.received[0]!.headers['x-service-timestamp']).to.match(/^\d+$/);
    await waitFor('billing', async () => (await gw.api(fresh.key, 'GET', '/v1/account')).body.balance.frozen === 0);
  });

  it('refuses a callback with an explicit mode when the account has no webhook secret: 400 webhook_secret_required', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const res = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'x' }], callback_url: receiver.url, video_url_mode: 'tos' }, undefined, fresh.key);
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('webhook_secret_required');
    expect((await gw.api(fresh.key, 'GET', '/v1/account')).body.balance).to.deep.include({ frozen: 0, available: 100_000_000 });
  });

  it('refuses callback URLs on private networks unless allowed', async () => {
    const strict = await startTestGateway({ ...env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      const account = await strict.fundedAccount(100_000_000);
      for (const url of ['http://127.0.0.1:9/hook', 'http://10.1.2.3/x', 'http://[::1]/x', 'http://localhost:8080/x']) {
        const res = await strict.api(account.key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'x' }], callback_url: url });
        expect(res.status, url).to.equal(400);
        expect(res.body.error.code).to.equal('invalid_callback_url');
      }
      // Malformed URLs are a 400 naming the field (they once reached the guard's new URL() and answered 500).
      for (const url of ['http://a:99999/', 'http://[x/', 'http://user@/', 'https://exa mple.com/']) {
        const res = await strict.api(account.key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'x' }], callback_url: url });
        expect(res.status, url).to.equal(400);
        expect(res.body.error, url).to.deep.include({ code: 'invalid_request', param: 'callback_url', type: 'invalid_request_error' });
      }
      // The scheme is case-insensitive: this one parses, and is refused for where it points.
      const upper = await strict.api(account.key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'x' }], callback_url: 'HTTPS://10.1.2.3/x' });
      expect(upper.status).to.equal(400);
      expect(upper.body.error).to.deep.include({ code: 'invalid_callback_url', param: 'callback_url' });
      expect(await strict.balance(account.key)).to.deep.include({ available: 100_000_000, frozen: 0 });
      await strict.expectAuditClean();
    } finally {
      await strict.close();
    }
  });

  it('never delivers to a private target once private targets are disallowed, whoever created the task', async () => {
    // A task created while private targets were allowed, delivered once; then the same data under a
    // gateway that disallows them: a redelivery to the loopback receiver is a failed attempt, not a delivery.
    const permissive = await startTestGateway(env);
    let strict: TestGateway | null = null;
    try {
      const account = await permissive.fundedAccount(100_000_000);
      const res = await permissive.api(account.key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'x' }], callback_url: receiver.url });
      expect(res.status).to.equal(200);
      await waitFor('the first delivery', async () => (await permissive.api(account.key, 'GET', `/v1/videos/generations/${res.body.id}`)).body.webhook?.deliveries[0]?.status === 'delivered');
      await permissive.stopProcess();
      strict = await startTestGateway({ ...env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }, { reuseDatabaseOf: permissive });
      const redeliver = await strict.api(account.key, 'POST', `/v1/videos/generations/${res.body.id}/webhook/redeliver`);
      expect(redeliver.status).to.equal(202);
      const task = await waitFor('the redelivery dropped', async () => {
        const t = (await strict!.api(account.key, 'GET', `/v1/videos/generations/${res.body.id}`)).body;
        return t.webhook.deliveries[1]?.status === 'dropped' ? t : null;
      });
      const attempts = task.webhook.deliveries[1].attempts as { ok: boolean; status_code: number | null; error: string }[];
      expect(attempts).to.have.length(4);
      for (const a of attempts) expect(a).to.deep.include({ ok: false, status_code: null }) && expect(a.error).to.match(/private or loopback address/);
      expect(receiver.received, 'only the delivery made while allowed').to.have.length(1);
      await strict.expectAuditClean();
    } finally {
      await strict?.close();
      await permissive.close();
    }
  });

  it('answers 413 payload_too_large above 5 MB and 400 for every rule, reserving nothing', async () => {
    const big = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'x'.repeat(3000) }], safety_identifier: 'y'.repeat(6 * 1024 * 1024) });
    expect(big.status).to.equal(413);
    expect(big.body.error.code).to.equal('payload_too_large');
    const text = { type: 'text', text: 'a prompt' };
    const image = (url: string, role?: string) => ({ type: 'image_url', image_url: { url }, ...(role ? { role } : {}) });
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['missing content', { model: 'video-ref-2.0' }, 'content', 'invalid_request'],
      ['unknown field', { model: 'video-ref-2.0', content: [text], colour: 'red' }, 'colour', 'invalid_request'],
      ['bad resolution value', { model: 'video-ref-2.0', content: [text], resolution: '4K' }, 'resolution', 'invalid_request'],
      ['bad ratio', { model: 'video-ref-2.0', content: [text], ratio: '2:1' }, 'ratio', 'invalid_request'],
      ['seed too large', { model: 'video-ref-2.0', content: [text], seed: 4294967296 }, 'seed', 'invalid_request'],
      ['seed too small', { model: 'video-ref-2.0', content: [text], seed: -2 }, 'seed', 'invalid_request'],
      ['safety identifier too long', { model: 'video-ref-2.0', content: [text], safety_identifier: 'x'.repeat(65) }, 'safety_identifier', 'invalid_request'],
      ['callback not http', { model: 'video-ref-2.0', content: [text], callback_url: 'ftp://example.com/x' }, 'callback_url', 'invalid_request'],
      ['text item without text', { model: 'video-ref-2.0', content: [{ type: 'text' }] }, 'content[0].text', 'invalid_request'],
      ['bad service tier', { model: 'video-ref-2.0', content: [text], service_tier: 'fast' }, 'service_tier', 'invalid_request'],
      ['H3 resolution', { model: 'video-h3', content: [text], ratio: '16:9', resolution: '720p' }, 'resolution', 'unsupported_resolution'],
      ['H3 duration below 4', { model: 'video-h3', content: [text], ratio: '16:9', duration: 3 }, 'duration', 'unsupported_duration'],
      ['H3 duration above 15', { model: 'video-h3', content: [text], ratio: '16:9', duration: 16 }, 'duration', 'unsupported_duration'],
      ['H3 lets the model choose', { model: 'video-h3', content: [text], ratio: '16:9', duration: -1 }, 'duration', 'unsupported_duration'],
      ['H3 text-to-video without ratio', { model: 'video-h3', content: [text] }, 'ratio', 'ratio_required'],
      ['H3 text-to-video adaptive', { model: 'video-h3', content: [text], ratio: 'adaptive' }, 'ratio', 'ratio_required'],
      ['H3 generate_audio', { model: 'video-h3', content: [text], ratio: '16:9', generate_audio: true }, 'generate_audio', 'unsupported_parameter'],
      ['H3 frames with references', { model: 'video-h3', content: [image('https://example.com/a.png', 'first_frame'), image('https://example.com/b.png', 'reference_image')] }, 'content', 'frames_with_references'],
      ['H3 asset:// image (the asset library is Ark\'s, H3 runs on MiniMax)', { model: 'video-h3', ratio: '16:9', content: [text, image('asset://asset_0000000000000000000000000000', 'reference_image')] }, 'content[1].image_url.url', 'asset_images_not_supported'],
      ['video item on a non-reference model', { model: 'video-h3', ratio: '16:9', content: [text, { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' }, role: 'reference_video' }] }, 'content', 'reference_media_not_supported'],
      ['audio item on 1.5 pro', { model: 'video-pro-1.5', content: [text, { type: 'audio_url', audio_url: { url: 'https://example.com/a.mp3' }, role: 'reference_audio' }] }, 'content', 'references_not_supported'],
      ['draft on a model without it', { model: 'video-ref-2.0', content: [text], draft: true }, 'draft', 'draft_not_supported'],
      ['draft on the idle variant', { model: 'video-2.5-idle', content: [text], draft: true }, 'draft', 'draft_not_supported'],
      ['idle variant refuses upstream mode', { model: 'video-2.5-idle', content: [text], video_url_mode: 'upstream' }, 'video_url_mode', 'unsupported_video_url_mode'],
      ['http image', { model: 'video-ref-2.0', content: [image('http://example.com/a.png')] }, 'content[0].image_url.url', 'invalid_media_url'],
      ['inline base64 image', { model: 'video-ref-2.0', content: [image('data:image/png;base64,AAAA')] }, 'content[0].image_url.url', 'inline_data_not_allowed'],
      ['last frame without first', { model: 'video-ref-2.0', content: [image('https://example.com/a.png', 'last_frame')] }, 'content', 'invalid_frames'],
      ['duration out of range', { model: 'video-ref-2.0', content: [text], duration: 30 }, 'duration', 'unsupported_duration'],
      ['unknown model', { model: 'video-none', content: [text] }, 'model', 'model_not_found'],
      ['a chat model', { model: 'chat-fast', content: [text] }, 'model', 'model_not_found'],
      ['draft final with extras', { model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: 'vid_x' } }, text] }, 'content', 'invalid_draft_final'],
      ['draft final resending duration', { model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: 'vid_x' } }], duration: 5 }, 'duration', 'invalid_draft_final'],
      ['draft final of an unknown task', { model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: 'vid_unknown' } }] }, 'content[0].draft_task.id', 'invalid_draft_task'],
      // callback_url is parsed, not only matched
      ['callback port out of range', { model: 'video-ref-2.0', content: [text], callback_url: 'http://a:99999/' }, 'callback_url', 'invalid_request'],
      ['callback host an unclosed bracket', { model: 'video-ref-2.0', content: [text], callback_url: 'http://[x/' }, 'callback_url', 'invalid_request'],
      ['callback with user info and no host', { model: 'video-ref-2.0', content: [text], callback_url: 'http://user@/' }, 'callback_url', 'invalid_request'],
      ['callback not absolute', { model: 'video-ref-2.0', content: [text], callback_url: 'http:/example.com/x' }, 'callback_url', 'invalid_request'],
      ['callback with a space in the host', { model: 'video-ref-2.0', content: [text], callback_url: 'http://exa mple.com/x' }, 'callback_url', 'invalid_request'],
      // inline data is named as such whatever its length (the URL length rule is 4096)
      ['inline base64 image over 4 KB', { model: 'video-ref-2.0', content: [image(`data:image/png;base64,${'iVBORw0KGgo'.repeat(2000)}`, 'first_frame')] }, 'content[0].image_url.url', 'inline_data_not_allowed'],
      ['inline base64 video over 4 KB', { model: 'video-ref-2.0', content: [text, { type: 'video_url', video_url: { url: `DATA:video/mp4;base64,${'A'.repeat(10_000)}` }, role: 'reference_video' }] }, 'content[1].video_url.url', 'inline_data_not_allowed'],
      // each content type carries its own member and only its roles
      ['audio item with a frame role', { model: 'video-ref-2.0', content: [text, { type: 'audio_url', audio_url: { url: 'https://example.com/a.mp3' }, role: 'first_frame' }] }, 'content[1].role', 'invalid_role'],
      ['audio item with the video role', { model: 'video-ref-2.0', content: [text, { type: 'audio_url', audio_url: { url: 'https://example.com/a.mp3' }, role: 'reference_video' }] }, 'content[1].role', 'invalid_role'],
      ['video item with the image role', { model: 'video-ref-2.0', content: [text, { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' }, role: 'reference_image' }] }, 'content[1].role', 'invalid_role'],
      ['image item with the video role', { model: 'video-ref-2.0', content: [text, image('https://example.com/a.png', 'reference_video')] }, 'content[1].role', 'invalid_role'],
      ['text item with a role', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'x', role: 'reference_video' }] }, 'content[0].role', 'invalid_role'],
      ['draft_task item with a role', { model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: 'vid_x' }, role: 'reference_video' }] }, 'content[0].role', 'invalid_role'],
      ['text item carrying an image', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'x', image_url: { url: 'https://example.com/a.png' } }] }, 'content[0].image_url', 'invalid_content'],
      ['image item carrying text', { model: 'video-ref-2.0', content: [{ ...image('https://example.com/a.png', 'first_frame'), text: 'x' }] }, 'content[0].text', 'invalid_content'],
      ['video item carrying audio', { model: 'video-ref-2.0', content: [text, { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' }, audio_url: { url: 'https://example.com/a.mp3' } }] }, 'content[1].audio_url', 'invalid_content'],
      ['draft_task item carrying text', { model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: 'vid_x' }, text: 'x' }] }, 'content[0].text', 'invalid_content'],
      // generate_audio: H3 does not take the field at all; true needs a model with audio
      ['H3 generate_audio false', { model: 'video-h3', content: [text], ratio: '16:9', generate_audio: false }, 'generate_audio', 'unsupported_parameter'],
      ['2.5 generate_audio true', { model: 'video-2.5', content: [text], generate_audio: true }, 'generate_audio', 'unsupported_parameter'],
      ['idle variant generate_audio true', { model: 'video-2.5-idle', content: [text], generate_audio: true }, 'generate_audio', 'unsupported_parameter'],
    ];
    const before = (await gw.api(key, 'GET', '/v1/account')).body.balance;
    for (const [name, body, param, code] of cases) {
      const res = await create(body);
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.error.code, name).to.equal(code);
      expect(res.body.error.param, name).to.equal(param);
    }
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance).to.deep.equal(before);
  });

  it('says which field is wrong and how, in plain words: a content item without a type, a duration of 0, a seed out of range', async () => {
    const text = { type: 'text', text: 'a prompt' };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ content: [{ text: 'a prompt' }] }, 'content[0].type', 'content[0] needs a type: one of text, image_url, video_url, audio_url, draft_task'],
      [{ content: [{ image_url: { url: 'https://example.com/a.png' } }] }, 'content[0].type', 'content[0] needs a type: one of text, image_url, video_url, audio_url, draft_task'],
      [{ content: [text, { type: 'image_url', role: 'first_frame' }] }, 'content[1].image_url', 'content[1].image_url is required'],
      [{ content: [text], duration: 0 }, 'duration', 'duration must not be 0'],
      [{ content: [text], seed: -2 }, 'seed', 'seed must be at least -1'],
    ];
    const before = (await gw.api(key, 'GET', '/v1/account')).body.balance;
    for (const [body, param, message] of cases) {
      const res = await create({ model: 'video-ref-2.0', ...body });
      expect([res.status, res.body.error], JSON.stringify(body)).to.deep.equal([400, { message, type: 'invalid_request_error', param, code: 'invalid_request' }]);
    }
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance).to.deep.equal(before);
  });

  it('accepts the shapes each class allows: H3 with a ratio, reference images, frames with references on 2.0 (asset:// ids: assets.test.ts)', async () => {
    const ok = [
      { model: 'video-h3', content: [{ type: 'text', text: 'h3' }], ratio: '16:9', resolution: '2K', duration: 4 },
      { model: 'video-ref-2.0', content: [{ type: 'text', text: 'ref' }, { type: 'image_url', image_url: { url: 'https://example.com/ref.png' }, role: 'reference_image' }, { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' }, role: 'reference_video' }] },
      { model: 'video-ref-2.0', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' }, role: 'first_frame' }, { type: 'image_url', image_url: { url: 'https://example.com/b.png' }, role: 'last_frame' }], duration: -1 },
      { model: 'video-ref-2.0', content: [{ type: 'text', text: 'ref media' }, { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' } }, { type: 'audio_url', audio_url: { url: 'https://example.com/a.mp3' }, role: 'reference_audio' }], generate_audio: false },
      { model: 'video-2.5', content: [{ type: 'text', text: '2.5 ref' }, { type: 'audio_url', audio_url: { url: 'https://example.com/a.mp3' }, role: 'reference_audio' }] },
    ];
    for (const body of ok) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(200);
      await billed(res.body.id);
    }
  });

  it('accepts a callback_url whose scheme is upper case, and calls it back', async () => {
    const secret = await withSecret();
    const url = receiver.url.replace(/^http:/, 'HTTP:');
    expect(url).to.match(/^HTTP:\/\/127\.0\.0\.1:/);
    const res = await create({ model: 'video-pro-1.5', content: [{ type: 'text', text: 'shouting scheme' }], callback_url: url, video_url_mode: 'auto' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await waitFor('the webhook', async () => receiver.received.length === 1);
    expect(verifiesAlone(receiver.received[0]!, secret)).to.equal(true);
    expect(JSON.parse(receiver.received[0]!.body).task_id).to.equal(res.body.id);
    await billed(res.body.id);
  });

  it('answers 402 insufficient_balance when the estimate is not covered, reserving and recording nothing', async () => {
    const poor = await gw.fundedAccount(100_000);
    const res = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'too dear' }], duration: 5 }, { 'idempotency-key': 'poor-1' }, poor.key);
    expect(res.status).to.equal(402);
    expect(res.body.error).to.deep.include({ code: 'insufficient_balance', type: 'insufficient_balance' });
    expect(await gw.balance(poor.key)).to.deep.include({ available: 100_000, frozen: 0 });
    const list = await gw.api(poor.key, 'GET', '/v1/videos/generations');
    expect(list.status).to.equal(200);
    expect(list.body.data, 'no task recorded').to.deep.equal([]);
    await gw.expectAuditClean();
  });

  it('fails a task whose image shows a real person with the provider code, and releases it', async () => {
    const res = await create({ model: 'video-ref-2.0', content: [{ type: 'image_url', image_url: { url: 'https://example.com/sim-real-person.png' }, role: 'first_frame' }] });
    expect(res.status).to.equal(200);
    const task = await billed(res.body.id);
    expect(task.status).to.equal('failed');
    expect(task.error.code).to.equal('InputImageSensitiveContentDetected.PrivacyInformation');
    // Ark's message, which ends with its request id (Ark's error codes reference).
    expect(task.error.message).to.match(/^The request failed because the input image may contain real person\. Request id: \w+$/);
    expect(task.billing).to.deep.include({ status: 'released', amount: 0 });
  });

  it('runs the draft flow: a 480p draft, then the 1080p final priced separately', async () => {
    const draft = await create({ model: 'video-2.5', content: [{ type: 'text', text: 'draft me' }], draft: true, duration: 6 });
    expect(draft.status).to.equal(200);
    const draftTask = await billed(draft.body.id);
    expect(draftTask.request).to.deep.include({ draft: true, resolution: '480p' });
    expect(draftTask.billing.amount).to.equal(6 * 100_000);
    const final = await create({ model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: draft.body.id } }] });
    expect(final.status).to.equal(200);
    const finalTask = await billed(final.body.id);
    expect(finalTask.status).to.equal('succeeded');
    expect(finalTask.request).to.deep.include({ resolution: '1080p', duration: 6, draft: false });
    expect(finalTask.billing.amount).to.equal(6 * 500_000);
    // A task that was not a draft cannot be finalised.
    const notDraft = await create({ model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: final.body.id } }] });
    expect(notDraft.status).to.equal(400);
    expect(notDraft.body.error.code).to.equal('invalid_draft_task');
  });

  it('prices a draft final by whether its draft had a reference video', async () => {
    const draft = await create({ model: 'video-2.5', draft: true, duration: 4, content: [{ type: 'text', text: 'with ref' }, { type: 'video_url', video_url: { url: 'https://example.com/ref.mp4' }, role: 'reference_video' }] });
    expect((await billed(draft.body.id)).billing.amount).to.equal(4 * 150_000);
    const final = await create({ model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: draft.body.id } }] });
    expect((await billed(final.body.id)).billing.amount).to.equal(4 * 750_000);
  });

  it('refuses draft finals that break the draft rules, reserving nothing: another account, not yet succeeded, resent fields', async () => {
    const other = await gw.fundedAccount(100_000_000);
    const final = (id: string, extra: Record<string, unknown> = {}, k = key) => create({ model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id } }], ...extra }, undefined, k);
    const draft = await create({ model: 'video-2.5', content: [{ type: 'text', text: 'the draft' }], draft: true, duration: 4 });
    expect((await billed(draft.body.id)).status).to.equal('succeeded');
    // The provider holds this draft unfinished until the test releases it.
    const pending = await create({ model: 'video-2.5', content: [{ type: 'text', text: 'held draft [sim:hold]' }], draft: true, duration: 4 });
    expect(pending.status).to.equal(200);

    const mine = await gw.balance(key);
    const theirs = await gw.balance(other.key);
    const refused: [string, Promise<{ status: number; body: any }>, string, string][] = [
      ['another account’s draft', final(draft.body.id, {}, other.key), 'content[0].draft_task.id', 'invalid_draft_task'],
      ['a draft not yet succeeded', final(pending.body.id), 'content[0].draft_task.id', 'invalid_draft_task'],
      ['resending the prompt', create({ model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: draft.body.id } }, { type: 'text', text: 'the draft' }] }), 'content', 'invalid_draft_final'],
      ['resending a reference', create({ model: 'video-2.5', content: [{ type: 'draft_task', draft_task: { id: draft.body.id } }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, role: 'reference_image' }] }), 'content', 'invalid_draft_final'],
      ['resending the ratio', final(draft.body.id, { ratio: '16:9' }), 'ratio', 'invalid_draft_final'],
      ['resending the seed', final(draft.body.id, { seed: 42 }), 'seed', 'invalid_draft_final'],
      ['resending the duration', final(draft.body.id, { duration: 4 }), 'duration', 'invalid_draft_final'],
      ['resending generate_audio: false', final(draft.body.id, { generate_audio: false }), 'generate_audio', 'invalid_draft_final'],
      ['resending generate_audio: true', final(draft.body.id, { generate_audio: true }), 'generate_audio', 'invalid_draft_final'],
    ];
    for (const [name, pendingRes, param, code] of refused) {
      const res = await pendingRes;
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.error, name).to.deep.include({ code, param });
    }
    expect(await gw.balance(key), 'nothing reserved').to.deep.equal(mine);
    expect(await gw.balance(other.key), 'nothing reserved for the other account').to.deep.equal(theirs);
    expect((await gw.api(other.key, 'GET', '/v1/videos/generations')).body.data, 'nothing recorded for the other account').to.deep.equal([]);

    // The same draft, finalised by its owner with nothing resent, is accepted: the refusals above were the rules.
    const ok = await final(draft.body.id);
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect((await billed(ok.body.id)).status).to.equal('succeeded');
    await releaseUpstream(pending.body.id);
    expect((await billed(pending.body.id)).status).to.equal('succeeded');
  });

  it('honours Idempotency-Key: the same body returns the first task and freezes nothing new; another body is 400', async () => {
    // Held by the provider, so that nothing settles between the two reads of the frozen amount.
    const body = { model: 'video-ref-2.0', content: [{ type: 'text', text: 'once [sim:hold]' }] };
    const first = await create(body, { 'idempotency-key': 'order-42' });
    const frozen = (await gw.api(key, 'GET', '/v1/account')).body.balance.frozen;
    const second = await create(body, { 'idempotency-key': 'order-42' });
    expect(second.status).to.equal(200);
    expect(second.body.id).to.equal(first.body.id);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance.frozen).to.equal(frozen);
    const other = await create({ ...body, duration: 6 }, { 'idempotency-key': 'order-42' });
    expect(other.status).to.equal(400);
    expect(other.body.error).to.deep.include({ code: 'idempotency_key_reused', param: 'Idempotency-Key', type: 'invalid_request_error' });
    await releaseUpstream(first.body.id);
    await billed(first.body.id);
  });

  it('frees an Idempotency-Key whose request was refused for the balance: the retry after a top-up creates the task', async () => {
    const poor = await gw.fundedAccount(1);
    const body = { model: 'video-ref-2.0', content: [{ type: 'text', text: 'later' }] };
    const refused = await create(body, { 'idempotency-key': 'short-1' }, poor.key);
    expect([refused.status, refused.body.error.code]).to.deep.equal([402, 'insufficient_balance']);
    expect((await gw.admin('POST', `/admin/v1/accounts/${poor.accountId}/credits`, { amount: 100_000_000, reference: `top-up-${poor.accountId}` })).status).to.equal(201);
    const retried = await create(body, { 'idempotency-key': 'short-1' }, poor.key);
    expect(retried.status, JSON.stringify(retried.body)).to.equal(200);
    expect(retried.headers.get('idempotent-replayed')).to.equal(null);
    await waitFor('billing', async () => (await gw.balance(poor.key)).frozen === 0);
  });

  it('concurrent creates with one Idempotency-Key: one task, one reservation; the others replay it or answer 429 with Retry-After', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const body = { model: 'video-ref-2.0', content: [{ type: 'text', text: 'at once' }] };
    const sentAt = Date.now();
    const answers = await Promise.all(Array.from({ length: 8 }, async () => ({ ...(await create(body, { 'idempotency-key': 'burst-1' }, fresh.key)), receivedAt: Date.now() })));
    const created = answers.filter((a) => a.status === 200 && a.headers.get('idempotent-replayed') === null);
    expect(created, JSON.stringify(answers.map((a) => a.status))).to.have.length(1);
    const taskId = created[0]!.body.id as string;
    // A loser is told the whole seconds left on the winner's lease (IDEMPOTENCY_LEASE_MS) when it was answered.
    const secondsLeftAt = await leaseSecondsLeft(gw.store, fresh.accountId, 'burst-1');
    for (const a of answers) {
      if (a.status === 200) {
        expect(a.body.id).to.equal(taskId);
      } else {
        expect(a.status, JSON.stringify(a.body)).to.equal(429);
        expect(a.body.error).to.deep.include({ code: 'idempotent_request_in_progress', type: 'rate_limit_error' });
        expect(Number(a.headers.get('retry-after'))).to.be.within(secondsLeftAt(a.receivedAt), secondsLeftAt(sentAt));
      }
    }
    // Retrying as told: the task the winner made.
    const retried = await create(body, { 'idempotency-key': 'burst-1' }, fresh.key);
    expect([retried.status, retried.body.id, retried.headers.get('idempotent-replayed')]).to.deep.equal([200, taskId, 'true']);
    const ledger = (await gw.admin('GET', `/admin/v1/accounts/${fresh.accountId}/ledger`)).body.data as { type: string }[];
    expect(ledger.filter((e) => e.type === 'reservation'), 'exactly one reservation').to.have.length(1);
    expect(ledger.filter((e) => e.type === 'release'), 'nothing reserved and released by the losers').to.have.length(0);
    await waitFor('billing', async () => (await gw.balance(fresh.key)).frozen === 0);
  });

  it('archives videos: tos waits for a verified archive, upstream keeps the native URL, and the archive link serves the bytes', async () => {
    await withSecret();
    const tos = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'archive' }], video_url_mode: 'tos', return_last_frame: true });
    const tosTask = await billed(tos.body.id);
    expect(tosTask).to.deep.include({ status: 'succeeded', video_url_source: 'archive' });
    expect(tosTask.archive.status).to.equal('archived');
    const file = await fetch(tosTask.video_url);
    expect(file.status).to.equal(200);
    expect(file.headers.get('content-type')).to.equal('video/mp4');
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(bytes.subarray(4, 8).toString('ascii')).to.equal('ftyp');
    const frame = await fetch(tosTask.last_frame_url);
    expect(frame.headers.get('content-type')).to.equal('image/png');
    const tampered = await fetch(tosTask.video_url.replace(/sig=[0-9a-f]{4}/, 'sig=0000'));
    expect(tampered.status).to.equal(403);

    const upstream = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'native' }], video_url_mode: 'upstream' });
    const upstreamTask = await billed(upstream.body.id);
    expect(upstreamTask.video_url_source).to.equal('upstream');
    expect(upstreamTask.video_url).to.include('/sim/files/video/');

    // auto: the native URL while it stays valid more than five minutes, the archive after that.
    const archived = (id: string) =>
      waitFor('archived', async () => {
        const t = (await get(id)).body;
        return t.archive.status === 'archived' && t.billing.status !== 'reserved' ? t : null;
      });
    const usable = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'long lived [sim:url-ttl=900000]' }] });
    const usableTask = await archived(usable.body.id);
    expect(usableTask.video_url_source, 'native URL valid for 15 more minutes').to.equal('upstream');
    expect(usableTask.video_url).to.include('/sim/files/video/');
    expect(Date.parse(usableTask.video_url_expires_at) - Date.now()).to.be.within(14 * 60_000, 15 * 60_000 + 1_000);
    expect((await fetch(usableTask.video_url)).status).to.equal(200);
    const inMargin = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'valid but not for long [sim:url-ttl=240000]' }] });
    expect((await archived(inMargin.body.id)).video_url_source, 'native URL valid for 4 more minutes: inside the margin').to.equal('archive');
    const auto = await create({ model: 'video-ref-2.0', content: [{ type: 'text', text: 'short lived [sim:url-ttl=1000]' }] });
    const autoTask = await archived(auto.body.id);
    expect(autoTask.video_url_source).to.equal('archive');
  });

  it('reads only the caller’s tasks (404 otherwise) and lists them newest first with a cursor', async () => {
    const other = await gw.fundedAccount(100_000_000);
    const mine = await create({ model: 'video-pro-1.5', content: [{ type: 'text', text: 'mine' }] });
    expect((await get(mine.body.id, other.key)).status).to.equal(404);
    expect((await get('vid_does_not_exist')).status).to.equal(404);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ model: 'video-pro-1.5', content: [{ type: 'text', text: `list ${i}` }] }, undefined, other.key)).body.id);
    const page1 = await gw.api(other.key, 'GET', '/v1/videos/generations?limit=2');
    expect(page1.body.data.map((t: { id: string }) => t.id)).to.deep.equal([ids[2], ids[1]]);
    expect(page1.body.has_more).to.equal(true);
    const page2 = await gw.api(other.key, 'GET', `/v1/videos/generations?limit=2&after=${page1.body.next_after}`);
    expect(page2.body.data.map((t: { id: string }) => t.id)).to.deep.equal([ids[0]]);
    for (const id of [mine.body.id]) await billed(id);
    for (const id of ids) await waitFor('billed', async () => ((await get(id, other.key)).body.billing.status !== 'reserved'));
  });

  it('uses the account default video_url_mode when a request omits it', async () => {
    const account = await gw.fundedAccount(100_000_000);
    const changed = await gw.admin('PATCH', `/admin/v1/accounts/${account.accountId}`, { default_video_url_mode: 'tos' });
    expect(changed.status).to.equal(200);
    expect(changed.body.settings).to.deep.equal({ default_video_url_mode: 'tos', timezone: 'Asia/Shanghai' });
    expect((await gw.admin('PATCH', `/admin/v1/accounts/${account.accountId}`, { default_video_url_mode: 'fast' })).status).to.equal(400);
    const res = await create({ model: 'video-pro-1.5', content: [{ type: 'text', text: 'default mode' }] }, undefined, account.key);
    const task = await waitFor('billing', async () => {
      const t = (await get(res.body.id, account.key)).body;
      return t.billing.status !== 'reserved' ? t : null;
    });
    expect(task.request.video_url_mode).to.equal('tos');
    expect(task.video_url_source).to.equal('archive');
  });
});

describe('video draft window, draft models and generate_audio: false @integration', () => {
  let gw: TestGateway;
  let key: string;
  let offsetMs = 0;

  before(async () => {
    // The default catalog, plus a second draft-capable model (a draft must be finalised on its own
    // model) and `accepts_audio_off` on the models without audio except H3 (idempotent if the
    // shipped catalog already says so).
    const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: { id: string; capabilities: Record<string, unknown> }[] };
    for (const model of catalog.models) if (model.id === 'video-2.5' || model.id === 'video-2.5-idle') model.capabilities.accepts_audio_off = true;
    const base = catalog.models.find((m) => m.id === 'video-2.5')!;
    catalog.models.push({ ...structuredClone(base), id: 'video-2.5-twin' });
    const file = path.join(testTempDir('video-catalog-'), 'catalog.json');
    writeFileSync(file, JSON.stringify(catalog));
    // A clock the test moves, to age a draft past its 7-day window.
    gw = await startTestGateway({ TASK_POLL_MS: '20', CATALOG_FILE: file }, { clock: () => new Date(Date.now() + offsetMs) });
    ({ key } = await gw.fundedAccount(1_000_000_000));
  });
  afterEach(async () => {
    offsetMs = 0;
    await expectSettledAndAuditClean(gw, [key]);
  });
  after(async () => gw.close());

  const create = (body: Record<string, unknown>) => gw.api(key, 'POST', '/v1/videos/generations', body);
  const billed = (id: string) =>
    waitFor(`task ${id} to be billed`, async () => {
      const t = (await gw.api(key, 'GET', `/v1/videos/generations/${id}`)).body;
      return t.billing.status !== 'reserved' ? t : null;
    });

  it('refuses a draft finalised on another model, and a draft older than 7 days; reserving nothing', async () => {
    const draft = await create({ model: 'video-2.5', content: [{ type: 'text', text: 'aging draft' }], draft: true, duration: 3 });
    expect(draft.status).to.equal(200);
    expect((await billed(draft.body.id)).status).to.equal('succeeded');
    const final = (model: string) => create({ model, content: [{ type: 'draft_task', draft_task: { id: draft.body.id } }] });
    const before = await gw.balance(key);

    const twin = await final('video-2.5-twin');
    expect(twin.status, JSON.stringify(twin.body)).to.equal(400);
    expect(twin.body.error).to.deep.include({ code: 'invalid_draft_task', param: 'content[0].draft_task.id' });
    expect(twin.body.error.message).to.match(/made with video-2\.5\b/);

    offsetMs = 7 * 24 * 3_600_000 + 60_000;
    const old = await final('video-2.5');
    expect(old.status, JSON.stringify(old.body)).to.equal(400);
    expect(old.body.error).to.deep.include({ code: 'invalid_draft_task', param: 'content[0].draft_task.id' });
    expect(old.body.error.message).to.match(/older than 7 days/);
    expect(await gw.balance(key), 'nothing reserved').to.deep.equal(before);

    // Within its window the same draft is finalised: age was the only reason.
    offsetMs = 0;
    const ok = await final('video-2.5');
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect((await billed(ok.body.id)).billing.amount).to.equal(3 * 500_000);
  });

  it('accepts generate_audio: false on models without audio that say so, refuses true there, and H3 refuses the field', async () => {
    for (const model of ['video-2.5', 'video-2.5-idle']) {
      const off = await create({ model, content: [{ type: 'text', text: 'silent' }], generate_audio: false });
      expect(off.status, `${model}: ${JSON.stringify(off.body)}`).to.equal(200);
      const task = await billed(off.body.id);
      expect(task.status).to.equal('succeeded');
      expect(task.request.generate_audio, 'the model has no audio').to.equal(null);
      const on = await create({ model, content: [{ type: 'text', text: 'loud' }], generate_audio: true });
      expect(on.status, model).to.equal(400);
      expect(on.body.error).to.deep.include({ code: 'unsupported_parameter', param: 'generate_audio' });
    }
    for (const value of [false, true]) {
      const h3 = await create({ model: 'video-h3', content: [{ type: 'text', text: 'h3' }], ratio: '16:9', generate_audio: value });
      expect(h3.status, String(value)).to.equal(400);
      expect(h3.body.error).to.deep.include({ code: 'unsupported_parameter', param: 'generate_audio' });
    }
  });
});
