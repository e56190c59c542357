import { expect } from 'chai';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';

/**
 * The gateway is told it runs behind one proxy (TRUST_PROXY_HOPS=1), so each test address is
 * given as the last X-Forwarded-For entry, the one that proxy would append. The gateway's clock stands still unless a test moves it (no sleeping).
 */
describe('failed credentials lock the client address out @integration', () => {
  let gw: TestGateway;
  let now = Date.parse('2026-01-01T00:00:00Z');
  let key: string;
  before(async () => {
    gw = await startTestGateway(
      { AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_MS: '60000', AUTH_LOCKOUT_MS: '120000', TRUST_PROXY_HOPS: '1' },
      { clock: () => new Date(now) },
    );
    ({ key } = await gw.fundedAccount(1_000_000));
  });
  after(async () => gw.close());

  const from = (address: string, auth: string | null, method: string, path: string, body?: unknown) => gw.api(auth, method, path, body, { 'x-forwarded-for': address });

  it('answers 429 with Retry-After, or the endpoint\'s 401 where its list has no 429, without checking the credential', async () => {
    const attacker = '203.0.113.7';
    // What the client writes into the header itself does not make it another address.
    for (let i = 0; i < 3; i++) expect((await from(`10.9.9.${i}, ${attacker}`, `tr-guess${i}`, 'GET', '/v1/account')).status).to.equal(401);
    for (let i = 0; i < 2; i++) expect((await from(attacker, `admin-guess${i}`, 'GET', '/admin/v1/jobs')).status).to.equal(401);

    const chat = await from(attacker, key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi' }] });
    expect([chat.status, chat.body.error.code, chat.headers.get('retry-after')]).to.deep.equal([429, 'too_many_failed_credentials', '120']);
    const admin = await from(attacker, TEST_ADMIN_TOKEN, 'GET', '/admin/v1/jobs');
    expect([admin.status, admin.headers.get('retry-after')]).to.deep.equal([429, '120']);
    const podcastStatus = await from(attacker, key, 'GET', '/v1/audio/podcasts/pod_x');
    expect(podcastStatus.status).to.equal(429);

    const webqa = await from(attacker, key, 'POST', '/v1/agent/chat/completions', { bot_id: 'x', messages: [] });
    expect([webqa.status, webqa.body.error.code, webqa.headers.get('retry-after')]).to.deep.equal([401, 'invalid_api_key', null]);
    const minutesStatus = await from(attacker, key, 'GET', '/v1/audio/minutes/mins_x');
    expect([minutesStatus.status, minutesStatus.body]).to.deep.equal([401, { error: 'invalid or missing API key', type: 'auth_error' }]);
    const risk = await from(attacker, key, 'POST', '/v1/agent/risk/chat/completions', { messages: [{ role: 'user', content: 'x' }] });
    expect([risk.status, risk.body.error.code]).to.deep.equal([401, 'invalid_api_key']);

    const neighbour = await from('198.51.100.9', key, 'GET', '/v1/account');
    expect(neighbour.status, 'a valid key from another address').to.equal(200);
    const neighbourAdmin = await from('198.51.100.9', TEST_ADMIN_TOKEN, 'GET', '/admin/v1/jobs');
    expect(neighbourAdmin.status, 'the admin token from another address').to.equal(200);

    now += 119_000;
    expect((await from(attacker, key, 'GET', '/v1/account')).headers.get('retry-after')).to.equal('1');
    now += 1_000;
    expect((await from(attacker, key, 'GET', '/v1/account')).status, 'after the lockout').to.equal(200);
  });

  it('counts only failures within the window, and never successes', async () => {
    const client = '192.0.2.44';
    for (let i = 0; i < 4; i++) expect((await from(client, 'tr-typo', 'GET', '/v1/account')).status).to.equal(401);
    now += 60_000;
    for (let i = 0; i < 4; i++) expect((await from(client, 'tr-typo', 'GET', '/v1/account')).status).to.equal(401);
    for (let i = 0; i < 10; i++) expect((await from(client, key, 'GET', '/v1/account')).status).to.equal(200);
    expect((await from(client, null, 'GET', '/v1/account')).status, 'the fifth failure within the window').to.equal(401);
    expect((await from(client, key, 'GET', '/v1/account')).status).to.equal(429);
  });
});

describe('without a trusted proxy, the lockout ignores X-Forwarded-For @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ AUTH_FAILURE_LIMIT: '3' });
  });
  after(async () => gw.close());

  it('counts failures by the connection address whatever the header says', async () => {
    const { key } = await gw.fundedAccount(0);
    for (let i = 0; i < 3; i++) expect((await gw.api('tr-guess', 'GET', '/v1/account', undefined, { 'x-forwarded-for': `10.0.0.${i}` })).status).to.equal(401);
    const res = await gw.api(key, 'GET', '/v1/account', undefined, { 'x-forwarded-for': '10.0.0.99' });
    expect([res.status, res.body.error.code]).to.deep.equal([429, 'too_many_failed_credentials']);
  });
});
