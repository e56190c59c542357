import { expect } from 'chai';
import { Channel, REDACTED_CREDENTIAL, type ChannelAuth } from '../../src/upstreams/channel';
import { UpstreamError } from '../../src/upstreams/errors';
import { recordingServer, type RecordingServer } from '../support/recording-server';

/**
 * A provider that quotes the credentials it refused (a misconfigured proxy echoing its request
 * headers, or an error naming the key): whatever an adapter relays to the client or the log from
 * a refusal carries none of the channel's credentials. Peers have leaked keys this way (new-api
 * PR 6826, LiteLLM issue 5762).
 */
describe('channel refusals: the channel\'s credentials are struck out of what a provider answers', () => {
  let server: RecordingServer;
  const channels: Channel[] = [];

  before(async () => {
    // Echoes every request header back; with status 401 on /refused, 200 elsewhere.
    server = await recordingServer((req, res) => {
      res.writeHead(req.url.startsWith('/refused') ? 401 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `refused: ${JSON.stringify(req.headers)}`, type: 'invalid_request_error' } }));
    });
  });

  after(async () => {
    await Promise.all(channels.map((c) => c.close()));
    await server.close();
  });

  const channel = (auth: ChannelAuth): Channel => {
    const c = new Channel({ name: 'echo', protocol: 'openai', base_url: server.url, auth, timeout_ms: 10_000, max_concurrency: 2 });
    channels.push(c);
    return c;
  };

  const cases: [string, ChannelAuth, string[]][] = [
    ['a Bearer key', { kind: 'bearer', apiKey: 'sk-live-0123456789abcdef' }, ['sk-live-0123456789abcdef']],
    ['a set of headers', { kind: 'headers', headers: { 'x-api-key': 'hk-secret-98765432', 'x-group-id': 'g7' } }, ['hk-secret-98765432']],
    ['a Volcengine key pair (its id in the signed Authorization)', { kind: 'volcengine', credentials: { accessKeyId: 'AKLTidentity0001', secretAccessKey: 'volc-secret-value-0001', region: 'cn-beijing', service: 'ark' } }, ['AKLTidentity0001']],
    ['an Alibaba Cloud key pair (its id in the signed Authorization)', { kind: 'acs3', credentials: { accessKeyId: 'LTAIidentity0001', accessKeySecret: 'ali-secret-value-0001' } }, ['LTAIidentity0001']],
  ];

  for (const [name, auth, quoted] of cases) {
    it(`${name}: a refusal quoting it reads as redacted, through call, openEvents and json`, async () => {
      const c = channel(auth);
      const answer = await c.call({ method: 'POST', path: '/refused', body: {} });
      expect(answer.status).to.equal(401);
      const text = answer.text();
      for (const secret of quoted) expect(text).to.not.include(secret);
      expect(text).to.include(REDACTED_CREDENTIAL);
      expect(JSON.stringify(answer.json())).to.not.include(quoted[0]);
      expect(Buffer.from(answer.bytes()).toString('utf8')).to.equal(text);

      const opened = await c.openEvents({ method: 'POST', path: '/refused', body: {} });
      expect((await opened.whole()).text()).to.not.include(quoted[0]);

      const thrown = await c.json('POST', '/refused', {}).then(() => null, (err: unknown) => err);
      expect(thrown).to.be.instanceOf(UpstreamError);
      expect((thrown as Error).message).to.not.include(quoted[0]);
    });
  }

  it('leaves an answer that is not a refusal as the provider sent it', async () => {
    const answer = await channel({ kind: 'bearer', apiKey: 'sk-live-0123456789abcdef' }).call({ method: 'GET', path: '/ok' });
    expect(answer.status).to.equal(200);
    expect(answer.text()).to.include('sk-live-0123456789abcdef');
  });
});
