import { expect } from 'chai';
import { hashApiKey } from '../../src/accounts/api-keys';
import { accountStream } from '../../src/domain/account/events';
import { DashboardClient, type Reply } from '../support/dashboard-client';
import { FIXED_CALL, FIXED_CHARGE } from '../support/fixed-chat';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';

const CHAT = '/v1/chat/completions';
const playground = (keyId: string, path = CHAT) => `/dashboard/api/playground/${keyId}${path}`;

/** The error of a reply as a comparable triple. */
const refusal = (reply: Reply) => [reply.status, reply.body?.error?.code, reply.body?.error?.message];

describe('the dashboard playground: one /v1 call on behalf of a key the owner picks @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterEach(async () => gw.expectAuditClean());
  after(async () => gw.close());

  /** An account, a dashboard session opened with its owner key, and a key `pick` with `settings`. */
  async function ownerWithKey(settings: Record<string, unknown>) {
    const owner = await gw.fundedAccount(10_000_000);
    const picked = await gw.admin('POST', `/admin/v1/accounts/${owner.accountId}/keys`, { name: 'pick', ...settings });
    expect(picked.status).to.equal(201);
    const browser = new DashboardClient(gw.url);
    expect((await browser.signIn(owner.key)).status).to.equal(201);
    return { owner, browser, keyId: picked.body.id as string, key: picked.body.key as string };
  }

  function expectNoSecret(reply: Reply, key: string): void {
    const text = JSON.stringify(reply.body) + JSON.stringify([...reply.headers.entries()]);
    expect(text).to.not.include(key);
    expect(text).to.not.include(hashApiKey(key));
  }

  it('charges a chat completion to the chosen key, with the session on its events and its request id on its ledger entries', async () => {
    const { owner, browser, keyId, key } = await ownerWithKey({ allowed_models: ['chat-fast'] });
    const sessionId = browser.cookie!.slice('gw_dashboard='.length).split('.')[0]!;
    const answer = await browser.call('POST', playground(keyId), FIXED_CALL);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body.object).to.equal('chat.completion');
    expect(answer.body.choices[0].message.content).to.be.a('string').and.not.equal('');
    expect(answer.body.usage.total_tokens).to.be.greaterThan(0);
    expect(answer.headers.get('cache-control')).to.equal('no-store');
    expectNoSecret(answer, key);
    const requestId = answer.headers.get('x-request-id')!;

    // The entries it caused, by its request id: a reservation and a settlement of the chosen key.
    const ledger = await browser.call('GET', `/dashboard/api/v1/account/ledger?request_id=${requestId}`);
    expect(ledger.status).to.equal(200);
    expect(ledger.body.data.map((e: { type: string }) => e.type)).to.deep.equal(['reservation', 'settlement']);
    for (const entry of ledger.body.data) expect(entry).to.include({ key_id: keyId, request_id: requestId, model: 'chat-fast', endpoint: 'POST /v1/chat/completions' });
    expect(ledger.body.data[1].amount).to.equal(FIXED_CHARGE);
    const keys = await gw.api(owner.key, 'GET', '/v1/account/keys');
    expect(keys.body.data.find((k: { id: string }) => k.id === keyId).last_used_at).to.be.a('string');

    const events = (await gw.store.readStream(accountStream(owner.accountId))).filter((e) => e.type === 'FundsReserved' || e.type === 'ReservationSettled');
    expect(events.map((e) => e.type)).to.deep.equal(['FundsReserved', 'ReservationSettled']);
    expect((events[0]!.data as { purpose: { actor: string } }).purpose.actor).to.equal(keyId);
    for (const e of events) expect(e.metadata).to.include({ via: 'dashboard', session_id: sessionId });
  });

  it('generates an image through the same route as /v1/images/generations', async () => {
    const { browser, keyId, key } = await ownerWithKey({});
    const answer = await browser.call('POST', playground(keyId, '/v1/images/generations'), { model: 'image-5.0', prompt: 'a lighthouse', response_format: 'b64_json' });
    expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).to.equal(200);
    expect(answer.body.data).to.have.length(1);
    expect(answer.body.data[0].b64_json).to.be.a('string');
    expectNoSecret(answer, key);
  });

  it('holds the chosen key to its limits exactly as /v1 does: models, budget, rate and expiry', async () => {
    const models = await ownerWithKey({ allowed_models: ['chat-fast'] });
    const pro = { ...FIXED_CALL, model: 'chat-pro' };
    expect(refusal(await models.browser.call('POST', playground(models.keyId), pro))).to.deep.equal(refusal(await gw.api(models.key, 'POST', CHAT, pro)));
    expect((await models.browser.call('POST', playground(models.keyId), pro)).status).to.equal(400);

    const budget = await ownerWithKey({ budget: { amount: FIXED_CHARGE - 1, period: 'total' } });
    const overBudget = await budget.browser.call('POST', playground(budget.keyId), FIXED_CALL);
    expect(overBudget.status).to.equal(402);
    expect(refusal(overBudget)).to.deep.equal(refusal(await gw.api(budget.key, 'POST', CHAT, FIXED_CALL)));

    // One rate for the key, whichever way it is used.
    const rate = await ownerWithKey({ rate_limit_per_minute: 2 });
    expect((await rate.browser.call('POST', playground(rate.keyId), FIXED_CALL)).status).to.equal(200);
    expect((await gw.api(rate.key, 'POST', CHAT, FIXED_CALL)).status).to.equal(200);
    const limited = await rate.browser.call('POST', playground(rate.keyId), FIXED_CALL);
    expect(limited.status).to.equal(429);
    expect(refusal(limited)).to.deep.equal(refusal(await gw.api(rate.key, 'POST', CHAT, FIXED_CALL)));

    const expiring = await ownerWithKey({});
    expect((await gw.admin('PATCH', `/admin/v1/keys/${expiring.keyId}`, { expires_at: '2020-01-01T00:00:00Z' })).status).to.equal(200);
    const expired = await expiring.browser.call('POST', playground(expiring.keyId), FIXED_CALL);
    expect(refusal(expired)).to.deep.equal([401, 'key_expired', 'this API key expired at 2020-01-01T00:00:00.000Z']);
    expect(refusal(expired)).to.deep.equal(refusal(await gw.api(expiring.key, 'POST', CHAT, FIXED_CALL)));
    // The session itself goes on.
    expect((await expiring.browser.call('GET', '/dashboard/api/v1/account')).status).to.equal(200);
  });

  it('lets a session use its own key and keys no wider than it, a budgeted one only its own; offers only those; refuses any other with 403, nothing reserved', async () => {
    const owner = await gw.fundedAccount(10_000_000);
    const issue = async (name: string, settings: Record<string, unknown>) => {
      const issued = await gw.admin('POST', `/admin/v1/accounts/${owner.accountId}/keys`, { name, ...settings });
      expect(issued.status).to.equal(201);
      return { id: issued.body.id as string, key: issued.body.key as string };
    };
    const session = await issue('session', { allowed_models: ['chat-fast'], rate_limit_per_minute: 50 });
    const narrower = await issue('narrower', { allowed_models: ['chat-fast'], rate_limit_per_minute: 10 });
    const budgeted = await issue('budgeted', { allowed_models: ['chat-fast'], rate_limit_per_minute: 10, budget: { amount: 5_000_000, period: 'total' } });
    const twin = await issue('twin', { allowed_models: ['chat-fast'], rate_limit_per_minute: 10, budget: { amount: 1_000_000, period: 'total' } });
    const narrow = new DashboardClient(gw.url);
    expect((await narrow.signIn(session.key)).status).to.equal(201);
    const thrifty = new DashboardClient(gw.url);
    expect((await thrifty.signIn(budgeted.key)).status).to.equal(201);
    const offered = async (browser: DashboardClient) => {
      const keys = await browser.call('GET', '/dashboard/api/playground/keys');
      expect(keys.status, JSON.stringify(keys.body)).to.equal(200);
      expect(keys.headers.get('cache-control')).to.equal('no-store');
      return (keys.body.data as { id: string }[]).map((k) => k.id);
    };
    expect(await offered(narrow)).to.deep.equal([session.id, narrower.id, budgeted.id, twin.id]);
    expect(await offered(thrifty)).to.deep.equal([budgeted.id]);

    const before = (await gw.store.readStream(accountStream(owner.accountId))).length;
    for (const [browser, keyId] of [
      [narrow, owner.keyId],
      [thrifty, twin.id],
      [thrifty, session.id],
    ] as const) {
      const refused = await browser.call('POST', playground(keyId), FIXED_CALL);
      expect([refused.status, refused.body.error.code, refused.body.error.type], JSON.stringify(refused.body)).to.deep.equal([403, 'key_scope_exceeded', 'permission_error']);
    }
    expect(await gw.store.readStream(accountStream(owner.accountId))).to.have.length(before);

    for (const [browser, keyId] of [
      [narrow, narrower.id],
      [narrow, session.id],
      [thrifty, budgeted.id],
    ] as const) {
      const answer = await browser.call('POST', playground(keyId), FIXED_CALL);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      const ledger = await browser.call('GET', `/dashboard/api/v1/account/ledger?request_id=${answer.headers.get('x-request-id')!}`);
      expect(ledger.body.data.map((e: { type: string; key_id: string }) => [e.type, e.key_id])).to.deep.equal([
        ['reservation', keyId],
        ['settlement', keyId],
      ]);
    }
  });

  it('refuses without the CSRF header, another account’s or a revoked key, an operator session, and other routes; nothing is reserved', async () => {
    const { owner, browser, keyId } = await ownerWithKey({});
    const other = await gw.fundedAccount(1_000_000);
    const revoked = await gw.admin('POST', `/admin/v1/accounts/${owner.accountId}/keys`, {});
    expect((await gw.admin('DELETE', `/admin/v1/keys/${revoked.body.id}`)).status).to.equal(204);
    const operator = new DashboardClient(gw.url);
    expect((await operator.signIn(TEST_ADMIN_TOKEN)).status).to.equal(201);
    const before = (await gw.store.readStream(accountStream(owner.accountId))).length;
    const otherBefore = (await gw.store.readStream(accountStream(other.accountId))).length;

    const answers: [Reply, number, string][] = [
      [await browser.call('POST', playground(keyId), FIXED_CALL, { csrf: false }), 403, 'csrf_token_invalid'],
      [await browser.call('POST', playground(keyId), FIXED_CALL, { csrf: false, headers: { 'x-csrf-token': 'wrong' } }), 403, 'csrf_token_invalid'],
      [await browser.call('POST', playground(other.keyId), FIXED_CALL), 404, 'key_not_found'],
      [await browser.call('POST', playground(revoked.body.id), FIXED_CALL), 404, 'key_not_found'],
      [await browser.call('POST', playground('key_nope'), FIXED_CALL), 404, 'key_not_found'],
      [await browser.call('POST', playground('%E0%A4%A'), FIXED_CALL), 404, 'key_not_found'],
      [await operator.call('POST', playground(keyId), FIXED_CALL), 401, 'invalid_session'],
      [await operator.call('GET', '/dashboard/api/playground/keys'), 401, 'invalid_session'],
      [await new DashboardClient(gw.url).call('GET', '/dashboard/api/playground/keys'), 401, 'invalid_session'],
      [await new DashboardClient(gw.url).call('POST', playground(keyId), FIXED_CALL), 401, 'invalid_session'],
      [await browser.call('POST', playground(keyId, '/v1/responses'), FIXED_CALL), 404, 'not_found'],
      [await browser.call('POST', playground(keyId, '/v1/account/keys'), {}), 404, 'not_found'],
      [await browser.call('POST', playground(keyId), { model: 'chat-fast' }), 400, 'invalid_request'],
    ];
    for (const [reply, status, code] of answers) expect([reply.status, reply.body?.error?.code], JSON.stringify(reply.body)).to.deep.equal([status, code]);
    expect(await gw.store.readStream(accountStream(owner.accountId))).to.have.length(before);
    expect(await gw.store.readStream(accountStream(other.accountId))).to.have.length(otherBefore);
  });
});
