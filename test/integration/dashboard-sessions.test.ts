import { expect } from 'chai';
import { accountStream } from '../../src/domain/account/events';
import { sessionStream } from '../../src/dashboard/session-events';
import { DashboardClient } from '../support/dashboard-client';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';

describe('dashboard sessions: a key or the admin token exchanged for a cookie; the API mounted under /dashboard/api @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterEach(async () => gw.expectAuditClean());
  after(async () => gw.close());

  it('signs in with a key: an HttpOnly, SameSite=Strict cookie for /dashboard lasting 12 hours, and a CSRF token', async () => {
    const { accountId, key, keyId } = await gw.fundedAccount(1_000);
    const browser = new DashboardClient(gw.url);
    const opened = await browser.signIn(key);
    expect(opened.status).to.equal(201);
    expect(opened.body).to.include({ kind: 'account', account_id: accountId, key_id: keyId });
    expect(opened.body.csrf_token).to.be.a('string').with.length.greaterThan(20);
    expect(Date.parse(opened.body.expires_at) - Date.now()).to.be.within(12 * 3600_000 - 60_000, 12 * 3600_000);
    const cookie = opened.headers.get('set-cookie')!;
    expect(cookie).to.match(/^gw_dashboard=dsess_[0-9a-f]{28}\.[A-Za-z0-9_-]{43}; /);
    expect(cookie.split('; ').slice(1)).to.deep.equal(['Path=/dashboard', 'Max-Age=43200', 'HttpOnly', 'SameSite=Strict']);
    expect(cookie).to.not.include(key);

    const again = await browser.call('GET', '/dashboard/api/session');
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(opened.body);

    // The same route, handler and JSON as /v1 with the key.
    const viaDashboard = await browser.call('GET', '/dashboard/api/v1/account');
    const viaApi = await gw.api(key, 'GET', '/v1/account');
    expect(viaDashboard.status).to.equal(200);
    expect(viaDashboard.body).to.deep.equal(viaApi.body);
    const missing = await browser.call('GET', '/dashboard/api/v1/videos/generations/vid_nope');
    const missingApi = await gw.api(key, 'GET', '/v1/videos/generations/vid_nope');
    expect([missing.status, missing.body]).to.deep.equal([missingApi.status, missingApi.body]);

    const events = await gw.store.readStream(sessionStream(opened.headers.get('set-cookie')!.slice('gw_dashboard='.length).split('.')[0]!));
    expect(events.map((e) => e.type)).to.deep.equal(['DashboardSessionOpened']);
    expect(JSON.stringify(events[0]!.data)).to.not.include(key);
  });

  it('keeps /v1 and /admin on Bearer credentials, and the dashboard on its session', async () => {
    const { key } = await gw.fundedAccount(1_000);
    const browser = new DashboardClient(gw.url);
    await browser.signIn(key);
    const cookieOnApi = await fetch(`${gw.url}/v1/account`, { headers: { cookie: browser.cookie! } });
    expect(cookieOnApi.status).to.equal(401);
    const bearerOnDashboard = await gw.api(key, 'GET', '/dashboard/api/v1/account');
    expect([bearerOnDashboard.status, bearerOnDashboard.body.error.code]).to.deep.equal([401, 'invalid_session']);
    // An account session reaches no operator route, and no path outside the two mounts.
    const adminRoute = await browser.call('GET', '/dashboard/api/admin/v1/accounts');
    expect([adminRoute.status, adminRoute.body.error.code]).to.deep.equal([401, 'invalid_session']);
    const adminUnderAccount = await browser.call('GET', '/dashboard/api/v1/../admin/v1/accounts');
    expect(adminUnderAccount.status).to.be.oneOf([401, 404]);
  });

  it('refuses a state-changing call without the CSRF header (403) and records dashboard changes with their session', async () => {
    const { accountId, key } = await gw.fundedAccount(1_000);
    const browser = new DashboardClient(gw.url);
    const opened = await browser.signIn(key);
    const sessionId = browser.cookie!.slice('gw_dashboard='.length).split('.')[0]!;

    for (const headers of [{}, { 'x-csrf-token': 'wrong' }] as Record<string, string>[]) {
      const refused = await browser.call('POST', '/dashboard/api/v1/account/keys', { name: 'no csrf' }, { csrf: false, headers });
      expect([refused.status, refused.body.error.code]).to.deep.equal([403, 'csrf_token_invalid']);
    }
    const keysBefore = await gw.api(key, 'GET', '/v1/account/keys');
    expect(keysBefore.body.data).to.have.length(1);

    const created = await browser.call('POST', '/dashboard/api/v1/account/keys', { name: 'from the dashboard' });
    expect(created.status).to.equal(201);
    expect(created.body.key).to.match(/^tr-/);
    const rotated = await browser.call('POST', '/dashboard/api/v1/account/webhook-secret');
    expect(rotated.status).to.equal(201);
    // Secrets and balances the dashboard reads are kept out of the browser's cache.
    const secret = await browser.call('GET', '/dashboard/api/v1/account/webhook-secret');
    expect([secret.status, secret.headers.get('cache-control')]).to.deep.equal([200, 'no-store']);
    expect(rotated.headers.get('cache-control')).to.equal('no-store');

    const events = await gw.store.readStream(accountStream(accountId));
    const fromDashboard = events.filter((e) => e.type === 'ApiKeyIssued' || e.type === 'WebhookSecretRotated').slice(-2);
    expect(fromDashboard.map((e) => e.type)).to.deep.equal(['ApiKeyIssued', 'WebhookSecretRotated']);
    for (const e of fromDashboard) expect(e.metadata).to.include({ via: 'dashboard', session_id: sessionId });
    // The API's own changes carry no dashboard origin.
    const first = events.find((e) => e.type === 'ApiKeyIssued')!;
    expect(first.metadata).to.not.have.property('via');
    expect(opened.body.account_id).to.equal(accountId);
  });

  it('a session of key K can do what K can do: its allowed models, and nothing once K is revoked', async () => {
    const { key, keyId } = await gw.fundedAccount(1_000_000, ['chat-fast']);
    const browser = new DashboardClient(gw.url);
    await browser.signIn(key);
    const widened = await browser.call('POST', '/dashboard/api/v1/account/keys', { allowed_models: null });
    const widenedApi = await gw.api(key, 'POST', '/v1/account/keys', { allowed_models: null });
    expect([widened.status, widened.body.error?.code]).to.deep.equal([widenedApi.status, widenedApi.body.error?.code]);
    expect(widened.status).to.equal(403);

    const revoked = await gw.admin('DELETE', `/admin/v1/keys/${keyId}`);
    expect(revoked.status).to.equal(204);
    expect((await browser.call('GET', '/dashboard/api/v1/account')).status).to.equal(401);
    expect((await browser.call('GET', '/dashboard/api/session')).status).to.equal(401);
  });

  it('signs out: the session is closed in the log and its cookie is refused and cleared', async () => {
    const { key } = await gw.fundedAccount(1_000);
    const browser = new DashboardClient(gw.url);
    await browser.signIn(key);
    const cookie = browser.cookie!;
    const noCsrf = await browser.call('DELETE', '/dashboard/api/session', undefined, { csrf: false });
    expect(noCsrf.status).to.equal(403);
    const out = await browser.call('DELETE', '/dashboard/api/session');
    expect(out.status).to.equal(204);
    expect(out.headers.get('set-cookie')).to.match(/^gw_dashboard=; Path=\/dashboard; Max-Age=0; HttpOnly; SameSite=Strict/);
    expect(browser.cookie).to.equal(null);
    const replayed = await fetch(`${gw.url}/dashboard/api/v1/account`, { headers: { cookie } });
    expect(replayed.status).to.equal(401);
    const sessionId = cookie.slice('gw_dashboard='.length).split('.')[0]!;
    const events = await gw.store.readStream(sessionStream(sessionId));
    expect(events.map((e) => e.type)).to.deep.equal(['DashboardSessionOpened', 'DashboardSessionClosed']);
    expect(events[1]!.metadata).to.include({ via: 'dashboard', session_id: sessionId });
  });

  it('signs the operator in with the admin token: the admin API under /dashboard/api/admin, credits recorded as from the dashboard', async () => {
    const { accountId } = await gw.fundedAccount(0);
    const operator = new DashboardClient(gw.url);
    const opened = await operator.signIn(TEST_ADMIN_TOKEN);
    expect(opened.status).to.equal(201);
    expect(Object.keys(opened.body).sort()).to.deep.equal(['csrf_token', 'expires_at', 'kind']);
    expect(opened.body.kind).to.equal('operator');
    const listed = await operator.call('GET', `/dashboard/api/admin/v1/accounts/${accountId}`);
    expect(listed.status).to.equal(200);
    const credit = await operator.call('POST', `/dashboard/api/admin/v1/accounts/${accountId}/credits`, { amount: 1234, reference: 'dash-credit-1' });
    expect(credit.status).to.equal(201);
    const events = await gw.store.readStream(accountStream(accountId));
    expect(events.find((e) => e.type === 'CreditAdded' && (e.data as { reference: string }).reference === 'dash-credit-1')!.metadata).to.include({ via: 'dashboard', actor: 'admin' });
    // An operator session is no key.
    expect((await operator.call('GET', '/dashboard/api/v1/account')).status).to.equal(401);
    // Nothing of the operator's is stored in clear.
    const sessionId = operator.cookie!.slice('gw_dashboard='.length).split('.')[0]!;
    const [openedEvent] = await gw.store.readStream(sessionStream(sessionId));
    expect(JSON.stringify(openedEvent!.data)).to.not.include(TEST_ADMIN_TOKEN);
  });

  it('refuses secrets that are neither a key nor the admin token with 401, and bodies without one with 400', async () => {
    const browser = new DashboardClient(gw.url);
    const wrong = await browser.signIn('tr-' + 'x'.repeat(43));
    expect([wrong.status, wrong.body.error.code]).to.deep.equal([401, 'invalid_api_key']);
    const notAdmin = await browser.signIn('not-the-token');
    expect([notAdmin.status, notAdmin.body.error.code]).to.deep.equal([401, 'invalid_credentials']);
    const empty = await browser.call('POST', '/dashboard/api/session', {});
    expect([empty.status, empty.body.error.param]).to.deep.equal([400, 'secret']);
    expect(browser.cookie).to.equal(null);
    expect((await browser.call('GET', '/dashboard/api/session')).status).to.equal(204);
    browser.cookie = 'gw_dashboard=dsess_0190a1b2c3d4e5f6a7b8c9d0e1f2.' + 'A'.repeat(43);
    const stale = await browser.call('GET', '/dashboard/api/session');
    expect(stale.status).to.equal(401);
    expect(stale.headers.get('set-cookie')).to.match(/^gw_dashboard=; Path=\/dashboard; Max-Age=0;/);
  });
});

describe('dashboard sessions across gateway processes, a changed admin token, expiry, lockout and https @integration', () => {
  let first: TestGateway;
  let second: TestGateway;
  let now = Date.parse('2026-03-01T00:00:00Z');
  before(async () => {
    first = await startTestGateway();
    second = await startTestGateway(
      { ADMIN_TOKEN: 'another-admin-token', AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW_MS: '60000', AUTH_LOCKOUT_MS: '60000', TRUST_PROXY_HOPS: '1' },
      { reuseDatabaseOf: first, clock: () => new Date(now) },
    );
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  it('a session opened in one process works in another; an operator session ends where the admin token differs', async () => {
    const { key } = await first.fundedAccount(1_000);
    const account = new DashboardClient(first.url);
    expect((await account.signIn(key)).status).to.equal(201);
    const elsewhere = new DashboardClient(second.url, { 'x-forwarded-for': '198.51.100.1' });
    elsewhere.cookie = account.cookie;
    elsewhere.csrf = account.csrf;
    const read = await elsewhere.call('GET', '/dashboard/api/v1/account');
    expect(read.status).to.equal(200);
    const out = await elsewhere.call('DELETE', '/dashboard/api/session');
    expect(out.status).to.equal(204);
    expect((await account.call('GET', '/dashboard/api/v1/account')).status).to.equal(401);

    const operator = new DashboardClient(first.url);
    expect((await operator.signIn(TEST_ADMIN_TOKEN)).status).to.equal(201);
    const onSecond = await fetch(`${second.url}/dashboard/api/admin/v1/accounts`, { headers: { cookie: operator.cookie!, 'x-forwarded-for': '198.51.100.2' } });
    expect(onSecond.status).to.equal(401);
    expect((await operator.call('GET', '/dashboard/api/admin/v1/accounts')).status).to.equal(200);
  });

  it('ends a session 12 hours after sign-in', async () => {
    const { key } = await first.fundedAccount(1_000);
    const browser = new DashboardClient(second.url, { 'x-forwarded-for': '198.51.100.3' });
    expect((await browser.signIn(key)).status).to.equal(201);
    now += 12 * 3600_000 - 1000;
    expect((await browser.call('GET', '/dashboard/api/v1/account')).status).to.equal(200);
    now += 1000;
    expect((await browser.call('GET', '/dashboard/api/v1/account')).status).to.equal(401);
  });

  it('throttles failed sign-ins like other failed credentials, per client address, and signs a valid key in all along', async () => {
    const attacker = new DashboardClient(second.url, { 'x-forwarded-for': '203.0.113.9' });
    for (let i = 0; i < 3; i++) expect((await attacker.signIn(`guess-${i}`)).status).to.equal(401);
    const locked = await attacker.signIn('another-admin-token');
    expect([locked.status, locked.body.error.code, locked.headers.get('retry-after')]).to.deep.equal([429, 'too_many_failed_credentials', '60']);
    const { key } = await first.fundedAccount(0);
    const sameAddress = new DashboardClient(second.url, { 'x-forwarded-for': '203.0.113.9' });
    expect((await sameAddress.signIn(key)).status, 'a valid key from the locked address').to.equal(201);
    expect((await sameAddress.signIn('tr-' + 'q'.repeat(43))).status, 'a wrong key from it').to.equal(429);
    const other = new DashboardClient(second.url, { 'x-forwarded-for': '203.0.113.10' });
    expect((await other.signIn('another-admin-token')).status).to.equal(201);
  });

  it('marks the cookie Secure when the request came over https through the trusted proxy', async () => {
    const browser = new DashboardClient(second.url, { 'x-forwarded-for': '198.51.100.4', 'x-forwarded-proto': 'https' });
    const opened = await browser.signIn('another-admin-token');
    expect(opened.headers.get('set-cookie')).to.match(/; HttpOnly; SameSite=Strict; Secure$/);
  });
});
