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

  it('serves a valid key from an address that failed 20 bad keys, while its bad keys stay refused 429 with Retry-After', async () => {
    const shared = '203.0.113.20';
    for (let i = 0; i < 5; i++) expect((await from(shared, `tr-guess${i}`, 'GET', '/v1/account')).status).to.equal(401);
    for (let i = 5; i < 25; i++) {
      const refused = await from(shared, `tr-guess${i}`, 'GET', '/v1/account');
      expect([refused.status, refused.body.error.code, refused.headers.get('retry-after')]).to.deep.equal([429, 'too_many_failed_credentials', '120']);
    }
    const served = await from(shared, key, 'GET', '/v1/account');
    expect(served.status, 'the valid key of another client behind the same address').to.equal(200);
    const chat = await from(shared, key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).to.equal(200);
    const bad = await from(shared, 'tr-guess-after', 'GET', '/v1/account');
    expect([bad.status, bad.headers.get('retry-after')], 'bad keys are still refused').to.deep.equal([429, '120']);
    const missing = await from(shared, null, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi' }] });
    expect([missing.status, missing.body.error.code]).to.deep.equal([429, 'too_many_failed_credentials']);
    now += 120_000;
    expect((await from(shared, 'tr-guess-later', 'GET', '/v1/account')).status, 'after the lockout').to.equal(401);
  });

  it('answers a locked-out failure 429 with Retry-After, or the endpoint\'s 401 where its list has no 429, and serves valid credentials everywhere', async () => {
    const attacker = '203.0.113.7';
    // What the client writes into the header itself does not make it another address.
    for (let i = 0; i < 3; i++) expect((await from(`10.9.9.${i}, ${attacker}`, `tr-guess${i}`, 'GET', '/v1/account')).status).to.equal(401);
    for (let i = 0; i < 2; i++) expect((await from(attacker, `admin-guess${i}`, 'GET', '/admin/v1/jobs')).status).to.equal(401);

    const chat = await from(attacker, 'tr-wrong', 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi' }] });
    expect([chat.status, chat.body.error.code, chat.headers.get('retry-after')]).to.deep.equal([429, 'too_many_failed_credentials', '120']);
    const podcastStatus = await from(attacker, null, 'GET', '/v1/audio/podcasts/pod_x');
    expect(podcastStatus.status).to.equal(429);
    const webqa = await from(attacker, 'tr-wrong', 'POST', '/v1/agent/chat/completions', { bot_id: 'x', messages: [] });
    expect([webqa.status, webqa.body.error.code, webqa.headers.get('retry-after')]).to.deep.equal([401, 'invalid_api_key', null]);
    const minutesStatus = await from(attacker, 'tr-wrong', 'GET', '/v1/audio/minutes/mins_x');
    expect([minutesStatus.status, minutesStatus.body]).to.deep.equal([401, { error: 'invalid or missing API key', type: 'auth_error' }]);
    const risk = await from(attacker, null, 'POST', '/v1/agent/risk/chat/completions', { messages: [{ role: 'user', content: 'x' }] });
    expect([risk.status, risk.body.error.code]).to.deep.equal([401, 'invalid_api_key']);

    expect((await from(attacker, key, 'GET', '/v1/audio/minutes/mins_x')).status, 'a valid key on a 401-only endpoint').to.equal(404);
    expect((await from(attacker, key, 'GET', '/v1/account')).status).to.equal(200);
    expect((await from(attacker, TEST_ADMIN_TOKEN, 'GET', '/admin/v1/jobs')).status, 'two failed admin tokens lock no admin token out').to.equal(200);
    const neighbour = await from('198.51.100.9', 'tr-wrong', 'GET', '/v1/account');
    expect(neighbour.status, 'a bad key from another address').to.equal(401);
  });

  it('refuses the admin token unchecked from an address that failed it AUTH_FAILURE_LIMIT times, and only there', async () => {
    const guesser = '203.0.113.8';
    for (let i = 0; i < 5; i++) expect((await from(guesser, `admin-guess${i}`, 'GET', '/admin/v1/jobs')).status).to.equal(401);
    const admin = await from(guesser, TEST_ADMIN_TOKEN, 'GET', '/admin/v1/jobs');
    expect([admin.status, admin.body.error.code, admin.headers.get('retry-after')]).to.deep.equal([429, 'too_many_failed_credentials', '120']);
    expect((await from(guesser, key, 'GET', '/v1/account')).status, 'a valid key from that address').to.equal(200);
    expect((await from('198.51.100.10', TEST_ADMIN_TOKEN, 'GET', '/admin/v1/jobs')).status, 'the admin token from another address').to.equal(200);
    now += 119_000;
    expect((await from(guesser, TEST_ADMIN_TOKEN, 'GET', '/admin/v1/jobs')).headers.get('retry-after')).to.equal('1');
    now += 1_000;
    expect((await from(guesser, TEST_ADMIN_TOKEN, 'GET', '/admin/v1/jobs')).status, 'after the lockout').to.equal(200);
  });

  it('counts failures by the key prefix tried, from any address', async () => {
    const prefix = 'tr-Pq7xZ2';
    for (let i = 0; i < 4; i++) expect((await from(`192.0.2.${100 + i}`, `${prefix}${'a'.repeat(36)}${i}`, 'GET', '/v1/account')).status).to.equal(401);
    expect((await from('192.0.2.104', `${prefix}${'b'.repeat(37)}`, 'GET', '/v1/account')).status, 'the fifth failure locks the prefix').to.equal(401);
    const sixth = await from('192.0.2.105', `${prefix}${'c'.repeat(37)}`, 'GET', '/v1/account');
    expect([sixth.status, sixth.headers.get('retry-after')], 'a sixth address, with its first failure').to.deep.equal([429, '120']);
    expect((await from('192.0.2.106', 'tr-Other0' + 'c'.repeat(37), 'GET', '/v1/account')).status, 'another prefix').to.equal(401);
    expect((await from('192.0.2.104', key, 'GET', '/v1/account')).status).to.equal(200);
  });

  it('counts only failures within the window, and never successes', async () => {
    const client = '192.0.2.44';
    for (let i = 0; i < 4; i++) expect((await from(client, 'tr-typo', 'GET', '/v1/account')).status).to.equal(401);
    now += 60_000;
    for (let i = 0; i < 4; i++) expect((await from(client, 'tr-typo', 'GET', '/v1/account')).status).to.equal(401);
    for (let i = 0; i < 10; i++) expect((await from(client, key, 'GET', '/v1/account')).status).to.equal(200);
    expect((await from(client, null, 'GET', '/v1/account')).status, 'the fifth failure within the window').to.equal(401);
    expect((await from(client, null, 'GET', '/v1/account')).status).to.equal(429);
    expect((await from(client, key, 'GET', '/v1/account')).status).to.equal(200);
  });
});

describe('a locked address cannot lift its own lock, and its valid keys are served @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_MS: '60000', AUTH_LOCKOUT_MS: '120000', AUTH_LOCKOUT_MAX_ADDRESSES: '4', TRUST_PROXY_HOPS: '1' });
  });
  after(async () => gw.close());

  const from = (address: string, auth: string | null, method: string, path: string) => gw.api(auth, method, path, undefined, { 'x-forwarded-for': address });
  const keyShaped = (i: number) => `tr-${String(i).padStart(6, '0')}${'k'.repeat(37)}`;

  it('keeps the admin-token lock through more key prefixes than are tracked, and serves a valid key its process has not cached yet', async () => {
    const { accountId } = await gw.fundedAccount(0);
    const uncachedKey = (await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, {})).body.key as string;
    const guesser = '203.0.113.30';
    for (let i = 0; i < 5; i++) expect((await from(guesser, `admin-guess${i}`, 'GET', '/admin/v1/jobs')).status).to.equal(401);
    // The address is locked too (admin tokens count by address as well).
    const keys = [];
    for (let i = 0; i < 10; i++) keys.push((await from(guesser, keyShaped(i), 'GET', '/v1/account')).headers.get('retry-after'));
    expect(keys, 'every bad key locked out').to.deep.equal(Array(10).fill('120'));
    const admin = await from(guesser, TEST_ADMIN_TOKEN, 'GET', '/admin/v1/jobs');
    expect([admin.status, admin.headers.get('retry-after')], '10 prefixes did not evict the admin lock').to.deep.equal([429, '120']);
    expect((await from(guesser, uncachedKey, 'GET', '/v1/account')).status, 'a valid key never used before').to.equal(200);
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
    const res = await gw.api('tr-guess', 'GET', '/v1/account', undefined, { 'x-forwarded-for': '10.0.0.99' });
    expect([res.status, res.body.error.code]).to.deep.equal([429, 'too_many_failed_credentials']);
    expect((await gw.api(key, 'GET', '/v1/account', undefined, { 'x-forwarded-for': '10.0.0.99' })).status).to.equal(200);
  });
});
