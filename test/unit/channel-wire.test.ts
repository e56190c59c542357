import { expect } from 'chai';
import { channelConfigs } from '../../src/config';
import { createLogger } from '../../src/log';
import { verifyAcs3 } from '../../src/upstreams/auth/acs3-signature';
import { verifyVolcengine } from '../../src/upstreams/auth/volcengine-signature';
import { Channel, type ChannelAuth } from '../../src/upstreams/channel';
import { recordingServer, type RecordingServer } from '../support/recording-server';

/** The channel transport on the wire: a test server records each request and answers as told. */
describe('channel transport (Channel.call): authentication strategies, query strings, answers of any body', () => {
  let server: RecordingServer;
  let base: string;
  const channels: Channel[] = [];
  const now = new Date('2026-12-05T17:00:00Z');

  before(async () => {
    server = await recordingServer((req, res) => {
      if (req.url.startsWith('/base/binary')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'X-Request-Id': 'req-1' });
        res.end(Buffer.from([0, 255, 1, 254]));
      } else if (req.url.startsWith('/base/empty')) {
        res.writeHead(204, { 'X-Tt-Logid': 'log-1' });
        res.end();
      } else {
        res.writeHead(req.url.startsWith('/base/refused') ? 429 : 200, { 'content-type': 'application/json', 'Retry-After': '3' });
        res.end(JSON.stringify({ ok: true }));
      }
    });
    base = `${server.url}/base`;
  });

  after(async () => {
    await Promise.all(channels.map((c) => c.close()));
    await server.close();
  });

  const channel = (auth: ChannelAuth): Channel => {
    const c = new Channel({ name: 'wire', protocol: 'openai', base_url: base, auth, timeout_ms: 10_000, max_concurrency: 2 }, undefined, () => now);
    channels.push(c);
    return c;
  };
  const last = () => server.seen[server.seen.length - 1]!;

  it('Bearer: `Authorization: Bearer <api_key>`', async () => {
    await channel({ kind: 'bearer', apiKey: 'sk-wire' }).call({ method: 'GET', path: '/ok' });
    expect(last().headers.authorization).to.equal('Bearer sk-wire');
  });

  it('a set of headers: each sent as configured, no Authorization added', async () => {
    await channel({ kind: 'headers', headers: { 'x-api-key': 'k-1', 'x-group-id': 'g-7' } }).call({ method: 'POST', path: '/ok', body: { a: 1 } });
    expect(last().headers).to.include({ 'x-api-key': 'k-1', 'x-group-id': 'g-7' });
    expect(last().headers.authorization).to.equal(undefined);
  });

  it('no credentials: nothing added', async () => {
    await channel({ kind: 'none' }).call({ method: 'GET', path: '/ok' });
    expect(last().headers.authorization).to.equal(undefined);
  });

  it('Volcengine signing: the server verifies the signature over the path, query, headers and body it received', async () => {
    const credentials = { accessKeyId: 'AKLTwire', secretAccessKey: 'wire-secret', region: 'cn-beijing', service: 'ark' };
    const answer = await channel({ kind: 'volcengine', credentials }).call({
      method: 'POST',
      path: '/ok',
      query: { Action: 'CreateAssetGroup', Version: '2024-01-01', Name: 'a b/ü*' },
      body: { Name: '组', n: 1 },
    });
    expect(answer.status).to.equal(200);
    const got = last();
    const url = new URL(got.url, 'http://x');
    expect(Object.fromEntries(url.searchParams)).to.deep.equal({ Action: 'CreateAssetGroup', Version: '2024-01-01', Name: 'a b/ü*' });
    const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
    const check = (body: Buffer) =>
      verifyVolcengine(
        { method: got.method, pathname: url.pathname, query: Object.fromEntries(url.searchParams), headers, body },
        { secretOf: (id) => (id === 'AKLTwire' ? 'wire-secret' : undefined), now },
      );
    expect(check(got.body)).to.deep.equal({ ok: true, accessKeyId: 'AKLTwire', region: 'cn-beijing', service: 'ark' });
    expect(check(Buffer.from('{"Name":"x"}'))).to.include({ ok: false, code: 'SignatureDoesNotMatch' });
    expect(headers['x-date']).to.equal('20261205T170000Z');
  });

  it('Alibaba Cloud ACS3 signing: the Host sent is the one signed, a new nonce each request, and the server verifies the signature over what it received', async () => {
    const credentials = { accessKeyId: 'LTAIwire', accessKeySecret: 'wire-secret' };
    const c = channel({ kind: 'acs3', credentials });
    const call = () => c.call({ method: 'PUT', path: '/ok', query: { type: 'offline', Name: 'a b/ü*' }, headers: { 'x-acs-action': 'CreateTask', 'x-acs-version': '2023-09-30' }, body: { AppKey: '组', n: 1 } });
    expect((await call()).status).to.equal(200);
    const first = last();
    await call();
    const got = last();
    const url = new URL(got.url, 'http://x');
    const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
    expect(headers.host).to.equal(new URL(base).host);
    expect(headers['x-acs-date']).to.equal('2026-12-05T17:00:00Z');
    expect(headers['x-acs-signature-nonce']).to.match(/^[0-9a-f]{32}$/).and.not.equal(first.headers['x-acs-signature-nonce']);
    expect(headers.authorization).to.match(/^ACS3-HMAC-SHA256 Credential=LTAIwire,SignedHeaders=content-type;host;x-acs-action;x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version,Signature=[0-9a-f]{64}$/);
    const check = (body: Buffer, host = headers.host!) =>
      verifyAcs3(
        { method: got.method, pathname: url.pathname, query: Object.fromEntries(url.searchParams), headers: { ...headers, host }, body },
        { secretOf: (id) => (id === 'LTAIwire' ? 'wire-secret' : undefined), now },
      );
    expect(check(got.body)).to.deep.equal({ ok: true, accessKeyId: 'LTAIwire' });
    expect(check(got.body, 'elsewhere.example')).to.include({ ok: false, code: 'SignatureDoesNotMatch' });
    expect(check(Buffer.from('{"AppKey":"x"}'))).to.include({ ok: false, code: 'IncompleteSignature' });
  });

  it('answers with any status, lower-cased headers, and bodies that are JSON, empty or binary', async () => {
    const c = channel({ kind: 'none' });
    const refused = await c.call({ method: 'GET', path: '/refused' });
    expect(refused.status).to.equal(429);
    expect(refused.headers['retry-after']).to.equal('3');
    expect(refused.json()).to.deep.equal({ ok: true });
    const binary = await c.call({ method: 'GET', path: '/binary' });
    expect([...binary.bytes()]).to.deep.equal([0, 255, 1, 254]);
    expect(binary.headers['x-request-id']).to.equal('req-1');
    const empty = await c.call({ method: 'DELETE', path: '/empty' });
    expect(empty.status).to.equal(204);
    expect(empty.bytes().length).to.equal(0);
    expect(empty.headers['x-tt-logid']).to.equal('log-1');
    expect(() => empty.json()).to.throw(/invalid JSON/);
  });

  it('json() (the OpenAI relay) rides the same send path: an error status becomes the OpenAI protocol’s error', async () => {
    const c = channel({ kind: 'bearer', apiKey: 'sk-relay' });
    const err = await c.json('GET', '/refused').catch((e: unknown) => e);
    expect(err).to.include({ status: 429, retryAfter: '3' });
    expect(last().headers.authorization).to.equal('Bearer sk-relay');
  });
});

describe('channel credentials are redacted from logs', () => {
  it('a logged channel config or list of configs, or a raw CHANNELS entry with a key or a secret, shows none of its credentials', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const raw = [
      { name: 'a', protocol: 'openai', base_url: 'https://a.example/v1', api_key: 'sk-SECRET1' },
      { name: 'b', protocol: 'openai', base_url: 'https://b.example/v1', headers: { 'x-api-key': 'SECRET2' } },
      { name: 'c', protocol: 'volcengine_openapi', base_url: 'https://c.example', volcengine: { access_key_id: 'AK', secret_access_key: 'SECRET3', region: 'r', service: 's' } },
      { name: 'd', protocol: 'tingwu', base_url: 'https://d.example', alibaba: { access_key_id: 'LTAI', access_key_secret: 'SECRET4' } },
    ];
    const configs = channelConfigs(raw, 'test');
    logger.info({ channels: configs }, 'list');
    logger.info({ channel: configs[2] }, 'one');
    logger.info(configs[1]!, 'bare');
    // Raw entries are only ever parsed, never kept; their Bearer key and Volcengine secret are still censored.
    logger.info({ channel: configs[3] }, 'acs3');
    logger.info({ config: { channels: [raw[0], raw[2], raw[3]] } }, 'raw');
    logger.info({ accessKeySecret: 'SECRET4', access_key_secret: 'SECRET4' }, 'bare secrets');
    const text = lines.join('\n');
    for (const secret of ['SECRET1', 'SECRET2', 'SECRET3', 'SECRET4']) expect(text).not.to.include(secret);
    expect(text).to.include('[redacted]').and.include('https://c.example');
  });
});
