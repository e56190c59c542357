import net from 'node:net';
import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../support/gateway';

/**
 * Oversized bodies and bodies that are not JSON. The spec lists of these endpoints have no 413
 * or 415, so both are a 400 in the endpoint's error shape (codes `payload_too_large` and
 * `unsupported_media_type`); only video creation lists 413 for a body over 5 MB.
 */
describe('body limits and content types @integration', () => {
  let gw: TestGateway;
  let key: string;
  const FUNDS = 100_000_000;

  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.fundedAccount(FUNDS));
  });
  after(async () => gw.close());

  type Shape = 'openai' | 'risk' | 'minutes';
  const big = 'x'.repeat(1024 * 1024 + 1);
  const endpoints: [string, Shape, Record<string, unknown>][] = [
    ['/v1/chat/completions', 'openai', { model: 'chat-fast', messages: [{ role: 'user', content: big }] }],
    ['/v1/responses', 'openai', { model: 'chat-fast', input: big }],
    ['/v1/images/generations', 'openai', { model: 'image-5.0', prompt: big }],
    ['/v1/images/async', 'openai', { model: 'image-5.0', prompt: big }],
    ['/v1/audio/podcasts', 'openai', { model: 'podcast-standard', text: big }],
    ['/v1/videos/erase-subtitle', 'openai', { video_url: `https://example.com/${big}` }],
    ['/v1/agent/chat/completions', 'openai', { bot_id: 'b', messages: [{ role: 'user', content: big }] }],
    ['/v1/audio/minutes', 'minutes', { model: 'service-minutes', file_url: `https://example.com/${big}` }],
    ['/v1/summaries', 'minutes', { task_id: big }],
    ['/v1/agent/risk/chat/completions', 'risk', { messages: [{ role: 'user', content: big }] }],
  ];

  /** Shape B has no code: its message tells the refusals apart. */
  const MINUTES_MESSAGES: Record<string, RegExp> = {
    payload_too_large: /exceeds \d+ bytes/,
    unsupported_media_type: /application\/json/,
    invalid_json: /^request body is not valid UTF-8/,
  };

  function expectShape(res: { status: number; body: any }, shape: Shape, code: string): void {
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    if (shape === 'openai') expect(res.body.error).to.deep.include({ code, type: 'invalid_request_error' });
    if (shape === 'risk') expect(res.body.error.code).to.equal(code) && expect(res.body.request_id).to.be.a('string');
    if (shape === 'minutes') {
      expect(res.body).to.have.keys('error', 'type');
      expect(res.body.type).to.equal('invalid_request_error');
      expect(res.body.error).to.be.a('string').and.match(MINUTES_MESSAGES[code]!);
    }
  }

  for (const [path, shape, body] of endpoints) {
    it(`${path}: a body over the limit is 400 payload_too_large`, async () => {
      expectShape(await gw.api(key, 'POST', path, body), shape, 'payload_too_large');
      expect(await gw.balance(key)).to.deep.include({ available: FUNDS, frozen: 0 });
    });
    it(`${path}: a body that is not JSON is 400 unsupported_media_type`, async () => {
      expectShape(await gw.api(key, 'POST', path, 'model=x', { 'content-type': 'application/x-www-form-urlencoded' }), shape, 'unsupported_media_type');
      expect(await gw.balance(key)).to.deep.include({ available: FUNDS, frozen: 0 });
    });
  }

  // A byte that cannot follow C3; "/" written in two bytes (overlong); a UTF-16 surrogate written in UTF-8.
  const NOT_UTF8 = [[0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80]];
  /** The body with `big` replaced by text holding `bytes`. */
  const withBytes = (body: Record<string, unknown>, bytes: number[]) => {
    const [before, after] = JSON.stringify(body).split(big);
    return Buffer.concat([Buffer.from(`${before}caf\u00e9 `), Buffer.from(bytes), Buffer.from(` ok${after}`)]);
  };
  const video: [string, Shape, Record<string, unknown>] = ['/v1/videos/generations', 'openai', { model: 'video-ref-2.0', content: [{ type: 'text', text: big }] }];
  for (const [path, shape, body] of [...endpoints, video]) {
    it(`${path}: a body that is not UTF-8 is 400 invalid_json naming the body, and reserves nothing`, async () => {
      for (const bytes of NOT_UTF8) {
        const res = await gw.api(key, 'POST', path, withBytes(body, bytes));
        expectShape(res, shape, 'invalid_json');
        if (shape !== 'minutes') expect(res.body.error.message).to.equal('request body is not valid UTF-8 (JSON text is UTF-8)');
      }
      expect(await gw.balance(key)).to.deep.include({ available: FUNDS, frozen: 0 });
    });
  }

  it('video creation keeps 413 payload_too_large above 5 MB, and answers a non-JSON body 400 unsupported_media_type', async () => {
    const huge = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'x'.repeat(5 * 1024 * 1024) }] });
    expect([huge.status, huge.body.error.code]).to.deep.equal([413, 'payload_too_large']);
    // Between the common limit and 5 MB a video request is read and validated as usual.
    const sizeable = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'x' }], unknown: big });
    expect([sizeable.status, sizeable.body.error.code, sizeable.body.error.param]).to.deep.equal([400, 'invalid_request', 'unknown']);
    const text = await gw.api(key, 'POST', '/v1/videos/generations', 'hello', { 'content-type': 'text/plain' });
    expect([text.status, text.body.error.code]).to.deep.equal([400, 'unsupported_media_type']);
    expect(await gw.balance(key)).to.deep.include({ available: FUNDS, frozen: 0 });
  });

  it('refuses a body nested more than 100 levels deep with 400 invalid_request, reserving nothing, and serves one of 100', async () => {
    const { key: own } = await gw.fundedAccount(FUNDS);
    // A Responses input item may carry members of its own, so such a nest went on to the provider:
    // 6,000 levels failed there (JSON.stringify overflows its stack) and answered 502.
    const nestedInput = (levels: number) =>
      `{"model":"chat-fast","input":[{"role":"user","content":"hi","extra":${'['.repeat(levels - 3)}${']'.repeat(levels - 3)}}]}`;
    for (const levels of [101, 6_000]) {
      const res = await gw.api(own, 'POST', '/v1/responses', nestedInput(levels), { 'content-type': 'application/json' });
      expectShape(res, 'openai', 'invalid_request');
      expect(res.body.error.message).to.equal('request body nests arrays and objects more than 100 levels deep');
    }
    expect(await gw.balance(own)).to.deep.include({ available: FUNDS, frozen: 0 });
    const served = await gw.api(own, 'POST', '/v1/responses', nestedInput(100), { 'content-type': 'application/json' });
    expect(served.status, JSON.stringify(served.body)).to.equal(200);
    expect(served.body.status).to.equal('completed');
    await gw.expectAuditClean();
  });

  it('a route that takes no body refuses one with 400 unexpected_body and does nothing; none, or {}, it serves', async () => {
    const { accountId, key: own } = await gw.fundedAccount(FUNDS);
    const secretOf = async () => (await gw.api(own, 'GET', '/v1/account/webhook-secret')).body.secret as string | null;
    const first = await gw.api(own, 'POST', '/v1/account/webhook-secret');
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    for (const body of ['{"secret":"whsec_mine"}', '[]', 'null', 'secret=whsec_mine', 'x'.repeat(10_000)]) {
      const res = await gw.api(own, 'POST', '/v1/account/webhook-secret', body);
      expect([res.status, res.body.error?.code], body.slice(0, 30)).to.deep.equal([400, 'unexpected_body']);
      expect(res.body.error.message).to.equal('this endpoint takes no request body (send none, or {})');
    }
    expect(await secretOf(), 'not rotated').to.equal(first.body.secret);
    for (const body of ['{}', ' { }\r\n', '']) {
      const res = await gw.api(own, 'POST', '/v1/account/webhook-secret', body);
      expect(res.status, JSON.stringify(body)).to.equal(201);
      expect(await secretOf()).to.equal(res.body.secret);
    }

    const spare = await gw.api(own, 'POST', '/v1/account/keys', { name: 'spare' });
    const revoke = await gw.api(own, 'DELETE', `/v1/account/keys/${spare.body.id}`, { reason: 'leaked' });
    expect([revoke.status, revoke.body.error?.code]).to.deep.equal([400, 'unexpected_body']);
    expect((await gw.api(spare.body.key, 'GET', '/v1/account')).status, 'the key still works').to.equal(200);
    const reload = await gw.admin('POST', '/admin/v1/catalog/reload', { path: '/etc/passwd' });
    expect([reload.status, reload.body.error?.code]).to.deep.equal([400, 'unexpected_body']);
    expect((await gw.admin('POST', `/admin/v1/accounts/${accountId}/webhook-secret`, { secret: 'whsec_mine' })).status).to.equal(400);
    expect(await gw.balance(own)).to.deep.include({ available: FUNDS, frozen: 0 });
  });

  it('a route that takes no body answers a declared 10 MB body at once, without reading it, and closes the connection', async () => {
    const { key: own } = await gw.fundedAccount(FUNDS);
    const { port } = new URL(gw.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    try {
      const answer = new Promise<string>((resolve, reject) => {
        let received = '';
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1'))).on('end', () => resolve(received)).on('error', reject);
      });
      // The headers and 1 KB of the 10 MB declared: the answer cannot wait for the rest.
      socket.write(`POST /v1/account/webhook-secret HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${own}\r\ncontent-type: application/json\r\ncontent-length: ${10 * 1024 * 1024}\r\n\r\n${'x'.repeat(1024)}`);
      const text = await answer;
      expect(text).to.match(/^HTTP\/1\.1 400 /);
      expect(text.toLowerCase()).to.include('connection: close');
      expect(text).to.include('"code":"unexpected_body"');
    } finally {
      socket.destroy();
    }
    expect((await gw.api(own, 'GET', '/v1/account/webhook-secret')).body.secret, 'not rotated').to.equal(null);
  });

  it('the openai SDK sees an oversized chat request as a BadRequestError with code payload_too_large', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: big }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('payload_too_large');
    await gw.expectAuditClean();
  });
});
