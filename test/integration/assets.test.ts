import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { consentForm, consentOnPage } from '../support/verification-page';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

const FEE = 100_000;
const THIRTY_MINUTES_MS = 30 * 60_000;
const IMAGE = 'https://images.example.com/people/alice.png';

describe('asset groups: real-person verification and assets @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  let offsetMs = 0;

  before(async () => {
    gw = await startTestGateway({ TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000' }, { clock: () => new Date(Date.now() + offsetMs) });
    ({ key, accountId } = await gw.fundedAccount(1_000_000_000));
  });
  afterEach(async () => {
    offsetMs = 0;
    await expectSettledAndAuditClean(gw, [key]);
  });
  after(async () => gw.close());

  const openSession = (body: Record<string, unknown>, k = key) => gw.api(k, 'POST', '/v1/asset-groups/validate-session', body);
  const getSession = (id: string, k = key) => gw.api(k, 'GET', `/v1/asset-groups/validate-session/${id}`);
  const addAsset = (groupId: string, url: string, k = key) => gw.api(k, 'POST', `/v1/asset-groups/${groupId}/assets`, { url });
  const getAsset = (groupId: string, id: string, k = key) => gw.api(k, 'GET', `/v1/asset-groups/${groupId}/assets/${id}`);
  const createVideo = (imageUrl: string, k = key) =>
    gw.api(k, 'POST', '/v1/videos/generations', {
      model: 'video-ref-2.0',
      content: [{ type: 'text', text: 'the person waves' }, { type: 'image_url', image_url: { url: imageUrl }, role: 'reference_image' }],
    });

  async function sessionUntil(id: string, status: string, k = key): Promise<any> {
    return waitFor(`session ${id} ${status}`, async () => {
      const res = await getSession(id, k);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.status === status ? res.body : null;
    });
  }

  async function assetUntil(groupId: string, id: string, status: string, k = key): Promise<any> {
    return waitFor(`asset ${id} ${status}`, async () => {
      const res = await getAsset(groupId, id, k);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.status === status ? res.body : null;
    });
  }

  /** Opens a session, has the person consent on the page, and waits for `verified`. */
  async function verifiedGroup(k: string, name = 'Alice'): Promise<{ groupId: string; sessionId: string }> {
    const opened = await openSession({ name }, k);
    expect(opened.status, JSON.stringify(opened.body)).to.equal(200);
    await consentOnPage(opened.body.verification_url);
    await sessionUntil(opened.body.id, 'verified', k);
    return { groupId: opened.body.group_id, sessionId: opened.body.id };
  }

  async function activeAsset(k: string, groupId: string, url = IMAGE): Promise<string> {
    const added = await addAsset(groupId, url, k);
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    await assetUntil(groupId, added.body.id, 'active', k);
    return added.body.id;
  }

  it('verifies a person through the page, settles the fee, takes an image that becomes active, and a video task uses it', async () => {
    const fresh = await gw.fundedAccount(10_000_000);
    const opened = await openSession({ name: 'Alice Example' }, fresh.key);
    expect(opened.status, JSON.stringify(opened.body)).to.equal(200);
    const s = opened.body;
    expect(s).to.deep.include({ object: 'asset_group.validation_session', status: 'pending', error: null });
    expect(s.id).to.match(/^avs_[0-9a-f]+$/);
    expect(s.group_id).to.match(/^grp_[0-9a-f]+$/);
    // The provider's page (H5Link), named by its session token (BytedToken).
    expect(s.verification_url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/volcengine\/sim\/verify\/\d{14}[0-9A-F]{20}$/);
    expect(Date.parse(s.expires_at) - Date.parse(s.created_at)).to.equal(THIRTY_MINUTES_MS);
    expect(s.billing).to.deep.equal({ currency: 'CNY', reserved: FEE, status: 'reserved', amount: null });
    expect(await gw.balance(fresh.key)).to.deep.include({ available: 10_000_000 - FEE, frozen: FEE });

    // The person opens the one-time link: a small HTML page with a labelled consent form.
    const page = await fetch(s.verification_url);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).to.match(/^<!doctype html>\n<html lang="en">/);
    expect(html).to.include('<title>Verify your identity</title>').and.include('<main>');
    const form = consentForm(html, s.verification_url);

    // Submitting without ticking consent is refused on the page; the session stays pending.
    const unticked = await fetch(form.action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=consent' });
    expect(unticked.status).to.equal(400);
    expect(await unticked.text()).to.include('role="alert"');
    expect((await getSession(s.id, fresh.key)).body.status).to.equal('pending');

    const sent = await fetch(form.action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.consent.toString() });
    expect(sent.status).to.equal(200);
    expect(await sent.text()).to.include('you are verified');

    const verified = await sessionUntil(s.id, 'verified', fresh.key);
    expect(verified).to.deep.include({ group_id: s.group_id, verification_url: null, error: null });
    await waitFor('the fee settled', async () => (await getSession(s.id, fresh.key)).body.billing.status === 'settled');
    expect((await getSession(s.id, fresh.key)).body.billing).to.deep.equal({ currency: 'CNY', reserved: FEE, status: 'settled', amount: FEE });
    expect(await gw.balance(fresh.key)).to.deep.include({ available: 10_000_000 - FEE, frozen: 0 });
    // The link was for one use.
    expect((await fetch(s.verification_url)).status).to.equal(410);

    const group = await gw.api(fresh.key, 'GET', `/v1/asset-groups/${s.group_id}`);
    expect(group.status).to.equal(200);
    expect(group.body).to.deep.include({ id: s.group_id, object: 'asset_group', name: 'Alice Example', status: 'verified', last_session_id: s.id });

    const added = await addAsset(s.group_id, IMAGE, fresh.key);
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    expect(added.body).to.deep.include({ object: 'asset', group_id: s.group_id, url: IMAGE, status: 'processing', error: null });
    expect(added.body.id).to.match(/^asset_[0-9a-f]+$/);
    expect(added.body.uri).to.equal(`asset://${added.body.id}`);
    const active = await assetUntil(s.group_id, added.body.id, 'active', fresh.key);
    expect(active.uri).to.equal(`asset://${added.body.id}`);

    const list = await gw.api(fresh.key, 'GET', `/v1/asset-groups/${s.group_id}/assets`);
    expect(list.status).to.equal(200);
    expect(list.body).to.deep.include({ object: 'list', has_more: false, next_after: null });
    expect(list.body.data.map((a: any) => [a.id, a.status])).to.deep.equal([[added.body.id, 'active']]);

    const video = await createVideo(active.uri, fresh.key);
    expect(video.status, JSON.stringify(video.body)).to.equal(200);
    const task = await gw.api(fresh.key, 'GET', `/v1/videos/generations/${video.body.id}`);
    expect(task.body.request.content[1].image_url.url, 'the client sees its own asset id').to.equal(active.uri);
    // The provider took it: it knows the asset by its own id, which the gateway sent in place of the client's.
    expect(video.body.upstream_id).to.be.a('string');
    await waitFor('the video succeeded', async () => (await gw.api(fresh.key, 'GET', `/v1/videos/generations/${video.body.id}`)).body.status === 'succeeded');

    // The H3 class is served by MiniMax, which cannot fetch the asset library's assets: the same
    // active asset is refused there before anything is reserved, not reserved and then failed.
    await waitFor('the video settled', async () => (await gw.api(fresh.key, 'GET', `/v1/videos/generations/${video.body.id}`)).body.billing.status === 'settled');
    const balance = await gw.balance(fresh.key);
    const h3 = await gw.api(fresh.key, 'POST', '/v1/videos/generations', {
      model: 'video-h3',
      ratio: '16:9',
      content: [{ type: 'text', text: 'the person waves' }, { type: 'image_url', image_url: { url: active.uri }, role: 'reference_image' }],
    });
    expect(h3.status, JSON.stringify(h3.body)).to.equal(400);
    expect(h3.body.error).to.deep.include({ code: 'asset_images_not_supported', param: 'content[1].image_url.url' });
    expect(await gw.balance(fresh.key)).to.deep.equal(balance);
    await expectSettledAndAuditClean(gw, [fresh.key]);
  });

  it('re-verifies an existing group of the account; another account cannot name it', async () => {
    const { groupId } = await verifiedGroup(key);
    const again = await openSession({ group_id: groupId });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.body).to.deep.include({ group_id: groupId, status: 'pending' });
    await consentOnPage(again.body.verification_url);
    await sessionUntil(again.body.id, 'verified');

    const other = await gw.fundedAccount(10_000_000);
    const refused = await openSession({ group_id: groupId }, other.key);
    expect(refused.status).to.equal(404);
    expect(refused.body.error).to.deep.include({ code: 'asset_group_not_found', param: 'group_id' });
    expect((await gw.api(other.key, 'GET', `/v1/asset-groups/${groupId}`)).status).to.equal(404);
    expect((await addAsset(groupId, IMAGE, other.key)).status).to.equal(404);
    expect(await gw.balance(other.key)).to.deep.include({ available: 10_000_000, frozen: 0 });
  });

  it('fails when the liveness check fails or the person declines, releases the fee, and the group takes no images', async () => {
    const before = await gw.balance(key);
    // The simulated page's directive: a consent posted with `sim=fail` fails the liveness check.
    for (const [name, choice, directive, code] of [
      ['Bob', 'consent', 'sim=fail', 'liveness_check_failed'],
      ['Carol', 'decline', '', 'consent_declined'],
    ] as const) {
      const opened = await openSession({ name });
      expect(opened.status).to.equal(200);
      const page = await fetch(opened.body.verification_url);
      const form = consentForm(await page.text(), opened.body.verification_url);
      const body = [form[choice].toString(), directive].filter(Boolean).join('&');
      const sent = await fetch(form.action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      expect(sent.status).to.equal(200);
      const failed = await sessionUntil(opened.body.id, 'failed');
      expect(failed.error.code, name).to.equal(code);
      expect(failed.verification_url).to.equal(null);
      await waitFor('the fee released', async () => (await getSession(opened.body.id)).body.billing.status === 'released');

      const refused = await addAsset(opened.body.group_id, IMAGE);
      expect(refused.status).to.equal(409);
      expect(refused.body.error).to.deep.include({ code: 'asset_group_not_verified', param: 'group_id' });
      expect((await gw.api(key, 'GET', `/v1/asset-groups/${opened.body.group_id}`)).body.status).to.equal('unverified');
    }
    expect(await gw.balance(key)).to.deep.equal(before);
  });

  it('fails at once when the provider refuses to open the session, and releases the fee', async () => {
    const before = await gw.balance(key);
    // The provider's session takes nothing a directive could ride in: the simulator is told to refuse the next one.
    const refuse = await fetch(`${gw.simulator.url}/volcengine/sim/refuse-next`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Action: 'CreateVisualValidateSession', Status: 400, Code: 'OperationDenied.TrustedCreatorRequired' }),
    });
    expect(refuse.status).to.equal(200);
    const refused = await openSession({ name: 'Frank' });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(200);
    expect(refused.body).to.deep.include({ status: 'failed', verification_url: null });
    expect(refused.body.error.code).to.equal('OperationDenied.TrustedCreatorRequired');
    await waitFor('the fee released', async () => (await getSession(refused.body.id)).body.billing.status === 'released');
    expect(await gw.balance(key)).to.deep.equal(before);
  });

  it('expires when the provider says so (the page opened with the directive `?sim=expire`): the page is gone and the fee released', async () => {
    const before = await gw.balance(key);
    const opened = await openSession({ name: 'Dan' });
    expect(opened.status).to.equal(200);
    expect((await fetch(`${opened.body.verification_url}?sim=expire`)).status).to.equal(410);
    expect((await fetch(opened.body.verification_url)).status).to.equal(410);
    const expired = await sessionUntil(opened.body.id, 'expired');
    expect(expired.error.code).to.equal('session_expired');
    expect(expired.verification_url).to.equal(null);
    await waitFor('the fee released', async () => (await getSession(opened.body.id)).body.billing.status === 'released');
    expect(await gw.balance(key)).to.deep.equal(before);
  });

  it('expires 30 minutes after creation by the gateway clock, while the person never came', async () => {
    const before = await gw.balance(key);
    // The gateway's clock starts 31 minutes behind and is moved forward: the times of the events
    // (and so the due times of the jobs they schedule) never lie ahead of the real clock.
    offsetMs = -(THIRTY_MINUTES_MS + 60_000);
    const opened = await openSession({ name: 'Erin' });
    expect(opened.status).to.equal(200);
    // The session's poll job counts its polls in its payload: one that ran after the clock moved
    // to a minute before the end found the session still open.
    const pollsSoFar = async () => {
      const { rows } = await gw.pool.query<{ polls: number | null }>(`SELECT (payload->>'polls')::int AS polls FROM jobs WHERE kind = 'task.poll' AND key = $1`, [`asset_session-${opened.body.id}`]);
      return rows[0]?.polls ?? 0;
    };
    await waitFor('the first poll', async () => (await pollsSoFar()) > 0);
    offsetMs = -120_000;
    const before29 = await pollsSoFar();
    await waitFor('a poll at minute 29', async () => (await pollsSoFar()) > before29 + 1);
    expect((await getSession(opened.body.id)).body.status).to.equal('pending');
    offsetMs = 0;
    const expired = await sessionUntil(opened.body.id, 'expired');
    expect(expired.error.code).to.equal('session_expired');
    expect(Date.parse(expired.finished_at)).to.be.at.least(Date.parse(opened.body.expires_at));
    await waitFor('the fee released', async () => (await getSession(opened.body.id)).body.billing.status === 'released');
    expect(await gw.balance(key)).to.deep.equal(before);
  });

  /** A video task naming this asset of `key` is refused, and moves none of its money. */
  async function expectRefusedAsNotActive(what: string, id: string, status: string): Promise<void> {
    const before = await gw.balance(key);
    const res = await createVideo(`asset://${id}`);
    expect(res.status, what).to.equal(400);
    expect(res.body.error, what).to.deep.include({ code: 'asset_not_active', param: 'content[1].image_url' });
    expect(res.body.error.message, what).to.include(`is ${status}`);
    expect(await gw.balance(key), what).to.deep.equal(before);
  }

  it('refuses in a video task an asset:// that is unknown, another account\'s, processing or failed (400 naming content[i].image_url), before money moves', async () => {
    const { groupId } = await verifiedGroup(key);
    const mine = await activeAsset(key, groupId);
    // The provider holds this asset in processing until the test releases it.
    const slow = await addAsset(groupId, `${IMAGE}?sim=hold`);
    expect(slow.status).to.equal(200);
    await expectRefusedAsNotActive('processing', slow.body.id, 'processing');
    const broken = await addAsset(groupId, `${IMAGE}?sim=fail`);
    await assetUntil(groupId, broken.body.id, 'failed');

    const other = await gw.fundedAccount(10_000_000);
    const before = await gw.balance(other.key);
    for (const [what, uri, code] of [
      ['unknown', 'asset://asset_0000000000000000000000000000', 'invalid_asset'],
      ["another account's", `asset://${mine}`, 'invalid_asset'],
    ] as const) {
      const res = await createVideo(uri, other.key);
      expect(res.status, what).to.equal(400);
      expect(res.body.error, what).to.deep.include({ code, param: 'content[1].image_url', type: 'invalid_request_error' });
    }
    expect(await gw.balance(other.key)).to.deep.equal(before);

    await expectRefusedAsNotActive('failed', broken.body.id, 'failed');
    // Submitted in the background: the provider's id is known once the submission is recorded.
    const upstreamId = await waitFor('the held asset accepted upstream', async () => (await gw.tasks.read('asset', slow.body.id, accountId))?.upstream_id ?? null);
    const release = () => fetch(`${gw.simulator.url}/volcengine/sim/assets/${upstreamId}/release`, { method: 'POST' });
    expect((await release()).status).to.equal(200);
    expect((await release()).status, 'a task no longer held').to.equal(409);
    await assetUntil(groupId, slow.body.id, 'active');
  });

  it('refuses image URLs that are not public https, and unknown ids, with clear errors', async () => {
    const { groupId } = await verifiedGroup(key);
    for (const url of ['http://images.example.com/a.png', 'https://127.0.0.1/a.png', 'https://localhost/a.png', 'https://[::1]/a.png', 'https://10.0.0.8/a.png', 'data:image/png;base64,iVBORw0KGgo=', 'not a url']) {
      const res = await addAsset(groupId, url);
      expect(res.status, url).to.equal(400);
      expect(res.body.error, url).to.deep.include({ code: 'invalid_image_url', param: 'url' });
    }
    const extra = await gw.api(key, 'POST', `/v1/asset-groups/${groupId}/assets`, { url: IMAGE, role: 'face' });
    expect(extra.status).to.equal(400);
    const badSession = await openSession({ name: '' });
    expect(badSession.status).to.equal(400);
    expect((await getSession('avs_unknown')).status).to.equal(404);
    expect((await getAsset(groupId, 'asset_unknown')).status).to.equal(404);
    expect((await addAsset('grp_unknown', IMAGE)).body.error.code).to.equal('asset_group_not_found');
    expect((await gw.api(key, 'GET', '/v1/asset-groups/grp_unknown/assets')).status).to.equal(404);
    expect((await gw.api(null, 'POST', '/v1/asset-groups/validate-session', {})).status).to.equal(401);
    // A restricted key needs the verification service among its models; nothing is frozen.
    const restricted = await gw.fundedAccount(10_000_000, ['video-ref-2.0']);
    const notAllowed = await openSession({}, restricted.key);
    expect(notAllowed.body.error).to.deep.include({ code: 'model_not_allowed', param: 'model' });
    expect(await gw.balance(restricted.key)).to.deep.include({ available: 10_000_000, frozen: 0 });
    // Too little money for the fee: 402, and no session.
    const poor = await gw.fundedAccount(FEE - 1);
    const short = await openSession({}, poor.key);
    expect(short.status).to.equal(402);
    expect(await gw.balance(poor.key)).to.deep.include({ available: FEE - 1, frozen: 0 });
  });

  it('answers a repeated Idempotency-Key with the first session, freezing the fee once', async () => {
    const fresh = await gw.fundedAccount(10_000_000);
    const headers = { 'idempotency-key': 'verify-alice-1' };
    const first = await gw.api(fresh.key, 'POST', '/v1/asset-groups/validate-session', { name: 'Alice' }, headers);
    const again = await gw.api(fresh.key, 'POST', '/v1/asset-groups/validate-session', { name: 'Alice' }, headers);
    expect(first.status).to.equal(200);
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body).to.deep.include({ id: first.body.id, group_id: first.body.group_id, verification_url: first.body.verification_url });
    expect(await gw.balance(fresh.key)).to.deep.include({ available: 10_000_000 - FEE, frozen: FEE });
    const page = await fetch(first.body.verification_url);
    const form = consentForm(await page.text(), first.body.verification_url);
    await fetch(form.action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.decline.toString() });
    await sessionUntil(first.body.id, 'failed', fresh.key);
    await expectSettledAndAuditClean(gw, [fresh.key]);
    expect(await gw.balance(fresh.key)).to.deep.include({ available: 10_000_000, frozen: 0 });
  });
});
