import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { NON_PUBLIC_HOSTS, refusalPhrase } from '../support/address-spellings';
import { expectSettledAndAuditClean } from '../support/wait';

/**
 * The one address rule of every URL a client hands the gateway (src/http/public-address.ts), at
 * each endpoint family that takes one, with the deployment's defaults (no private targets): every
 * spelling of a non-public host is 400 in the endpoint's error shape naming the field, and no money
 * moves.
 */
describe('client URLs: one address rule at every endpoint @integration', () => {
  let gw: TestGateway;
  let key: string;

  before(async () => {
    gw = await startTestGateway({ TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000' });
    ({ key } = await gw.fundedAccount(1_000_000_000));
  });
  after(async () => {
    await expectSettledAndAuditClean(gw, [key]);
    await gw.close();
  });

  const money = async (k = key) => ({ balance: await gw.balance(k), ledger: (await gw.api(k, 'GET', '/v1/account/ledger')).body.data });

  /** Posts one body per non-public host; each is refused with `expected` and nothing reaches the ledger. */
  async function expectEveryHostRefused(
    path: string,
    bodyFor: (host: string) => Record<string, unknown>,
    expected: (why: string) => Record<string, unknown>,
    field: (res: { body: any }) => unknown,
    k = key,
  ): Promise<void> {
    const before = await money(k);
    for (const [host, why] of NON_PUBLIC_HOSTS) {
      const res = await gw.api(k, 'POST', path, bodyFor(host));
      expect(res.status, `${host}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(field(res), host).to.deep.equal(expected(refusalPhrase(why)));
    }
    expect(await money(k)).to.deep.equal(before);
  }

  const openAiError = (res: { body: any }) => {
    const { code, param, message, type } = res.body.error;
    return { code, param, message, type };
  };

  it('video: first and last frames, reference images, videos and audio', async () => {
    const image = (url: string, role: string) => ({ type: 'image_url', image_url: { url }, role });
    const firstFrame = 'https://images.example.com/first.png';
    const items: [string, (url: string) => Record<string, unknown>[], string, string][] = [
      ['first_frame', (url) => [image(url, 'first_frame')], 'content[0].image_url.url', ' (or asset://<id>)'],
      ['last_frame', (url) => [image(firstFrame, 'first_frame'), image(url, 'last_frame')], 'content[1].image_url.url', ' (or asset://<id>)'],
      ['reference_image', (url) => [{ type: 'text', text: 'x' }, image(url, 'reference_image')], 'content[1].image_url.url', ' (or asset://<id>)'],
      ['reference_video', (url) => [{ type: 'text', text: 'x' }, { type: 'video_url', video_url: { url }, role: 'reference_video' }], 'content[1].video_url.url', ''],
      ['reference_audio', (url) => [{ type: 'text', text: 'x' }, { type: 'audio_url', audio_url: { url }, role: 'reference_audio' }], 'content[1].audio_url.url', ''],
    ];
    for (const [, content, param, alternative] of items) {
      await expectEveryHostRefused(
        '/v1/videos/generations',
        (host) => ({ model: 'video-ref-2.0', content: content(`https://${host}/media`) }),
        (why) => ({ code: 'invalid_media_url', param, message: `${param} must be a publicly reachable https URL${alternative}, not ${why}`, type: 'invalid_request_error' }),
        openAiError,
      );
    }
  });

  it('video: a callback_url on a name only a local network resolves, trailing dot or not', async () => {
    const before = await money();
    for (const host of ['localhost.', 'vm.', 'vm', 'hooks.corp.internal', 'printer.local.', 'site.test', 'router.home.arpa']) {
      const res = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'x' }], callback_url: `http://${host}:8080/hook` });
      expect(res.status, host).to.equal(400);
      expect(res.body.error, host).to.deep.include({ code: 'invalid_callback_url', param: 'callback_url' });
      expect(res.body.error.message, host).to.match(/is not a public name \(.+\), so it may reach a private or loopback address$/);
    }
    expect(await money()).to.deep.equal(before);
  });

  it('reference assets: the image of an asset', async () => {
    // An account of its own: the session's fee stays frozen while the session waits for the person.
    const other = await gw.fundedAccount(10_000_000);
    const session = await gw.api(other.key, 'POST', '/v1/asset-groups/validate-session', { name: 'Alice' });
    expect(session.status, JSON.stringify(session.body)).to.equal(200);
    // The address is checked before the group's state: the group need not be verified yet.
    await expectEveryHostRefused(
      `/v1/asset-groups/${session.body.group_id}/assets`,
      (host) => ({ url: `https://${host}/alice.png` }),
      (why) => ({ code: 'invalid_image_url', param: 'url', message: `url must be a publicly reachable https URL, not ${why}`, type: 'invalid_request_error' }),
      openAiError,
      other.key,
    );
  });

  it('subtitle erase: the video', async () => {
    await expectEveryHostRefused(
      '/v1/videos/erase-subtitle',
      (host) => ({ video_url: `https://${host}/clip.mp4`, duration_seconds: 10 }),
      (why) => ({ code: 'invalid_video_url', param: 'video_url', message: `video_url must be a publicly reachable https URL, not ${why}`, type: 'invalid_request_error' }),
      openAiError,
    );
  });

  it('meeting minutes: the recording (shape B), yet an upload of the gateway\'s own is taken wherever its links point', async () => {
    await expectEveryHostRefused(
      '/v1/audio/minutes',
      (host) => ({ model: 'service-minutes', file_url: `http://${host}/meeting.mp3` }),
      (why) => ({ error: `file_url must be a publicly reachable http(s) URL, not ${why}`, type: 'invalid_request_error' }),
      (res) => res.body,
    );
    const form = new FormData();
    form.append('purpose', 'minutes');
    form.append('file', new Blob([Buffer.alloc(1_000)], { type: 'audio/mpeg' }), 'meeting.mp3');
    const other = await gw.fundedAccount(100_000_000);
    const uploaded = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${other.key}` }, body: form });
    const file = (await uploaded.json()) as { url: string };
    expect(new URL(file.url).hostname, 'the test gateway links to a loopback address').to.equal('127.0.0.1');
    const own = await gw.api(other.key, 'POST', '/v1/audio/minutes', { model: 'service-minutes', file_url: file.url });
    expect(own.status, JSON.stringify(own.body)).to.equal(200);
    await expectSettledAndAuditClean(gw, [other.key]);
  });

  it('web Q&A: the media of a message', async () => {
    for (const type of ['image_url', 'file_url', 'audio_url']) {
      const param = `messages[0].content[1].${type}.url`;
      await expectEveryHostRefused(
        '/v1/agent/chat/completions',
        (host) => ({ bot_id: 'webqa-pro', messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type, [type]: { url: `https://${host}/a` } }] }] }),
        (why) => ({ code: 'invalid_media_url', param, message: `${param} must be a publicly reachable http(s) URL, not ${why}`, type: 'invalid_request_error' }),
        openAiError,
      );
    }
  });
});
