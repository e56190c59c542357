import { expect } from 'chai';
import OpenAI from 'openai';
import { accountStream } from '../../src/domain/account/events';
import { expectBudgetRefusals, FIXED_CALL, FIXED_CHARGE, fireFixedCalls } from '../support/fixed-chat';
import { startTestGateway, type TestGateway } from '../support/gateway';


describe('API keys with budgets, expiry and their own rate; the owner manages keys @integration', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterEach(async () => gw.expectAuditClean());
  after(async () => gw.close());

  async function account(name: string): Promise<string> {
    const res = await gw.admin('POST', '/admin/v1/accounts', { name });
    const credit = await gw.admin('POST', `/admin/v1/accounts/${res.body.id}/credits`, { amount: 100_000_000, reference: `fund-${res.body.id}` });
    expect(credit.status).to.equal(201);
    return res.body.id as string;
  }

  it('issues a key with limits, shows its secret once, and lists it with spend, remaining and last use', async () => {
    const accountId = await account('Keys & Co');
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, {
      name: 'ci',
      allowed_models: ['chat-fast'],
      budget: { amount: 1_000_000, period: 'month' },
      expires_at: expiresAt,
      rate_limit_per_minute: 50,
      tokens_per_minute: 50_000,
    });
    expect(issued.status).to.equal(201);
    expect(issued.body).to.deep.include({
      name: 'ci',
      allowed_models: ['chat-fast'],
      budget: { amount: 1_000_000, period: 'month', spent: 0, remaining: 1_000_000 },
      expires_at: expiresAt,
      rate_limit_per_minute: 50,
      tokens_per_minute: 50_000,
      last_used_at: null,
      revoked: false,
    });
    expect(issued.body.key).to.match(/^tr-/);
    expect(issued.body.key.startsWith(issued.body.prefix)).to.equal(true);

    const client = new OpenAI({ apiKey: issued.body.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await client.chat.completions.create(FIXED_CALL);

    const listed = await gw.admin('GET', `/admin/v1/accounts/${accountId}/keys`);
    expect(listed.status).to.equal(200);
    const [key] = listed.body.data;
    expect(key).to.not.have.property('key');
    expect(key.budget).to.deep.equal({ amount: 1_000_000, period: 'month', spent: FIXED_CHARGE, remaining: 1_000_000 - FIXED_CHARGE });
    expect(Date.parse(key.last_used_at)).to.be.greaterThan(Date.parse(key.created_at) - 1);

    const changed = await gw.admin('PATCH', `/admin/v1/keys/${key.id}`, { name: 'ci-2', budget: { amount: FIXED_CHARGE, period: 'total' } });
    expect(changed.status).to.equal(200);
    expect(changed.body).to.deep.include({ name: 'ci-2', allowed_models: ['chat-fast'], rate_limit_per_minute: 50 });
    expect(changed.body.budget).to.deep.equal({ amount: FIXED_CHARGE, period: 'total', spent: FIXED_CHARGE, remaining: 0 });
    const refused = await gw.api(issued.body.key, 'POST', '/v1/chat/completions', FIXED_CALL);
    expect(refused.status).to.equal(402);
    expect(refused.body.error.code).to.equal('key_budget_exceeded');
    expect(refused.headers.get('x-should-retry')).to.equal('false');

    const lifted = await gw.admin('PATCH', `/admin/v1/keys/${key.id}`, { budget: null });
    expect(lifted.body.budget).to.equal(null);
    expect((await gw.api(issued.body.key, 'POST', '/v1/chat/completions', FIXED_CALL)).status).to.equal(200);
  });

  it('refuses bad key settings with 400 naming the field, and unknown keys with 404', async () => {
    const accountId = await account('validation');
    for (const [body, param] of [
      [{ budget: { amount: 10, period: 'week' } }, 'budget.period'],
      [{ budget: { amount: 0, period: 'day' } }, 'budget.amount'],
      [{ budget: { amount: 10 } }, 'budget.period'],
      [{ expires_at: 'tomorrow' }, 'expires_at'],
      [{ rate_limit_per_minute: 0 }, 'rate_limit_per_minute'],
      [{ rate_limit_per_minute: 1.5 }, 'rate_limit_per_minute'],
      [{ tokens_per_minute: 0 }, 'tokens_per_minute'],
      [{ tokens_per_minute: '1000' }, 'tokens_per_minute'],
      [{ secret: 'x' }, 'secret'],
    ] as const) {
      const res = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.param).to.equal(param);
    }
    expect((await gw.admin('PATCH', '/admin/v1/keys/key_missing', { name: 'x' })).status).to.equal(404);
    expect((await gw.admin('POST', '/admin/v1/accounts/acct_missing/keys', {})).status).to.equal(404);
    expect((await gw.admin('GET', '/admin/v1/accounts/acct_missing/keys')).status).to.equal(404);
  });

  it('lists accounts, searches them by name and pages through them', async () => {
    const ids = [await account('Search 测试 one'), await account('search 测试 two'), await account('Search 测试 three')];
    await account('unrelated');
    const first = await gw.admin('GET', `/admin/v1/accounts?q=${encodeURIComponent('search 测试')}&limit=2`);
    expect(first.status).to.equal(200);
    expect(first.body.has_more).to.equal(true);
    const second = await gw.admin('GET', `/admin/v1/accounts?q=${encodeURIComponent('search 测试')}&limit=2&after=${first.body.next_after}`);
    expect(second.body.has_more).to.equal(false);
    const found = [...first.body.data, ...second.body.data];
    expect(found.map((a: { id: string }) => a.id).sort()).to.deep.equal([...ids].sort());
    expect(found[0]).to.have.keys(['id', 'name', 'balance', 'settings']);
    expect((await gw.admin('GET', '/admin/v1/accounts?q=%25')).body.data).to.deep.equal([]);
    expect((await gw.admin('GET', '/admin/v1/accounts?limit=0')).status).to.equal(400);
  });

  it('refuses an expired key with 401 key_expired, and on the minutes endpoints with their own body', async () => {
    const accountId = await account('expiry');
    const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { expires_at: new Date(Date.now() - 1000).toISOString() });
    const chat = await gw.api(issued.body.key, 'POST', '/v1/chat/completions', FIXED_CALL);
    expect(chat.status).to.equal(401);
    expect(chat.body.error).to.deep.include({ code: 'key_expired', type: 'authentication_error' });
    const minutes = await gw.api(issued.body.key, 'GET', '/v1/audio/minutes/min_x');
    expect(minutes.status).to.equal(401);
    expect(minutes.body).to.deep.equal({ error: 'invalid or missing API key', type: 'auth_error' });
    const extended = await gw.admin('PATCH', `/admin/v1/keys/${issued.body.id}`, { expires_at: null });
    expect(extended.body.expires_at).to.equal(null);
    expect((await gw.api(issued.body.key, 'GET', '/v1/account')).status).to.equal(200);
  });

  it("holds a key to its own rate on endpoints that answer 429", async () => {
    const accountId = await account('rate');
    const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { rate_limit_per_minute: 2 });
    expect((await gw.api(issued.body.key, 'POST', '/v1/chat/completions', FIXED_CALL)).status).to.equal(200);
    expect((await gw.api(issued.body.key, 'POST', '/v1/chat/completions', FIXED_CALL)).status).to.equal(200);
    const third = await gw.api(issued.body.key, 'POST', '/v1/chat/completions', FIXED_CALL);
    expect(third.status).to.equal(429);
    expect(third.body.error.message).to.contain('rate limit of 2 requests per minute');
    // Another key of the same account runs at the gateway's rate.
    const other = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, {});
    expect((await gw.api(other.body.key, 'POST', '/v1/chat/completions', FIXED_CALL)).status).to.equal(200);
  });

  it("holds a key to its own rate on web Q&A with the bounded wait, then 502 gateway_busy", async () => {
    const accountId = await account('rate web Q&A');
    const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { rate_limit_per_minute: 1 });
    const ask = () => gw.api(issued.body.key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-basic', messages: [{ role: 'user', content: 'hi [sim:tokens=1]' }] });
    expect((await ask()).status).to.equal(200);
    // At 1 a minute the next turn is 60 s away, beyond the 2 s wait: refused at once.
    const busy = await ask();
    expect(busy.status, JSON.stringify(busy.body)).to.equal(502);
    expect(busy.body.error).to.deep.include({ code: 'gateway_busy' });
    expect(busy.body.error.message).to.contain('rate of 1 requests per minute');
  });

  it('lets 10 of 50 parallel requests through a key budget for exactly 10', async () => {
    const accountId = await account('parallel');
    const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { budget: { amount: 10 * FIXED_CHARGE, period: 'day' } });
    // Default retries: the SDK must not retry a budget refusal (x-should-retry: false).
    const client = new OpenAI({ apiKey: issued.body.key, baseURL: `${gw.url}/v1` });
    const { ok, refused } = await fireFixedCalls([client], 50);
    expect(ok).to.equal(10);
    expect(refused).to.have.length(40);
    expectBudgetRefusals(refused);
    const [key] = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/keys`)).body.data;
    expect(key.budget).to.deep.include({ spent: 10 * FIXED_CHARGE, remaining: 0 });
  });

  it('lets the owner manage keys, never beyond the acting key, recording the acting key on every change', async () => {
    const accountId = await account('owner');
    const parent = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, {
      name: 'owner',
      allowed_models: ['chat-fast', 'chat-pro'],
      expires_at: '2099-01-01T00:00:00Z',
      rate_limit_per_minute: 100,
      tokens_per_minute: 100_000,
    });
    const key = parent.body.key as string;

    // A key with a budget creates no keys: their spend would not count against its budget.
    const budgeted = await gw.admin('POST', `/admin/v1/accounts/${await account('budgeted')}/keys`, { name: 'budgeted', budget: { amount: 1_000_000, period: 'month' } });
    const byBudgeted = await gw.api(budgeted.body.key, 'POST', '/v1/account/keys', { name: 'escape', budget: { amount: 1_000_000, period: 'month' } });
    expect([byBudgeted.status, byBudgeted.body.error?.code]).to.deep.equal([403, 'key_scope_exceeded']);

    const inherited = await gw.api(key, 'POST', '/v1/account/keys', { name: 'child' });
    expect(inherited.status).to.equal(201);
    expect(inherited.body).to.deep.include({
      name: 'child',
      allowed_models: ['chat-fast', 'chat-pro'],
      expires_at: '2099-01-01T00:00:00.000Z',
      rate_limit_per_minute: 100,
      tokens_per_minute: 100_000,
    });
    expect(inherited.body.budget).to.equal(null);
    const childId = inherited.body.id as string;

    for (const wider of [
      { allowed_models: ['chat-fast', 'image-fast'] },
      { allowed_models: null },
      { expires_at: '2099-01-02T00:00:00Z' },
      { rate_limit_per_minute: 101 },
      { tokens_per_minute: 100_001 },
      { tokens_per_minute: null },
    ]) {
      const created = await gw.api(key, 'POST', '/v1/account/keys', wider);
      expect(created.status, JSON.stringify(wider)).to.equal(403);
      expect(created.body.error.code).to.equal('key_scope_exceeded');
      expect((await gw.api(key, 'PATCH', `/v1/account/keys/${childId}`, wider)).status, JSON.stringify(wider)).to.equal(403);
    }

    const narrowed = await gw.api(key, 'PATCH', `/v1/account/keys/${childId}`, { allowed_models: ['chat-fast'], budget: { amount: 500, period: 'total' } });
    expect(narrowed.status).to.equal(200);
    expect(narrowed.body).to.deep.include({ allowed_models: ['chat-fast'] });
    // The narrowed child cannot widen itself back, nor touch its wider parent.
    const child = inherited.body.key as string;
    expect((await gw.api(child, 'PATCH', `/v1/account/keys/${childId}`, { allowed_models: ['chat-fast', 'chat-pro'] })).status).to.equal(403);
    expect((await gw.api(child, 'DELETE', `/v1/account/keys/${parent.body.id}`)).status).to.equal(403);

    const listed = await gw.api(key, 'GET', '/v1/account/keys');
    expect(listed.body.data.map((k: { id: string }) => k.id)).to.deep.equal([parent.body.id, childId]);

    // Another account's key is not found from here.
    const strangerAccount = await account('stranger');
    const stranger = await gw.admin('POST', `/admin/v1/accounts/${strangerAccount}/keys`, {});
    expect((await gw.api(key, 'PATCH', `/v1/account/keys/${stranger.body.id}`, { name: 'x' })).status).to.equal(404);
    expect((await gw.api(key, 'DELETE', `/v1/account/keys/${stranger.body.id}`)).status).to.equal(404);

    expect((await gw.api(key, 'DELETE', `/v1/account/keys/${childId}`)).status).to.equal(204);
    expect((await gw.api(child, 'GET', '/v1/account')).status).to.equal(401);

    const events = await gw.store.readStream(accountStream(accountId));
    const keyChanges = events.filter((e) => e.type.startsWith('ApiKey') && (e.data as { keyId: string }).keyId === childId);
    expect(keyChanges.map((e) => e.type)).to.deep.equal(['ApiKeyIssued', 'ApiKeyChanged', 'ApiKeyRevoked']);
    for (const e of keyChanges) expect(e.metadata.actor).to.equal(parent.body.id);
  });
});
