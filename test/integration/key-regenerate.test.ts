import { expect } from 'chai';
import { hashApiKey } from '../../src/accounts/api-keys';
import { accountStream } from '../../src/domain/account/events';
import { DashboardClient } from '../support/dashboard-client';
import { FIXED_CALL, FIXED_CHARGE } from '../support/fixed-chat';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';

/** Whether the gateway serves `key` from its key cache on its next use after this one. */
async function servedFromMemory(gw: TestGateway, key: string): Promise<boolean> {
  // A key's issue may answer before the keys view holds it (past PROJECTION_WAIT_MS on a loaded
  // machine): asked before, the key would be refused. Asked of the view, not with the key, whose
  // refusals would count towards the address's lockout.
  await waitFor('the keys view to hold the key', async () => (await gw.pool.query('SELECT 1 FROM rm.api_keys WHERE key_hash = $1', [hashApiKey(key)])).rowCount === 1);
  expect((await gw.api(key, 'GET', '/v1/account')).status).to.equal(200);
  const hits = gw.keyCache.stats().hits;
  expect((await gw.api(key, 'GET', '/v1/account')).status).to.equal(200);
  return gw.keyCache.stats().hits > hits;
}

async function keyRow(gw: TestGateway, keyId: string): Promise<{ key_hash: string; key_prefix: string }> {
  const { rows } = await gw.pool.query<{ key_hash: string; key_prefix: string }>('SELECT key_hash, key_prefix FROM rm.api_keys WHERE key_id = $1', [keyId]);
  return rows[0]!;
}

describe('regenerating a key’s secret in place @integration', () => {
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    a = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    b = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' }, { reuseDatabaseOf: a });
    // Each gateway caches once it follows the log and its read model has the log's head.
    await waitFor('both key caches to follow the log', async () => {
      const { key } = await a.fundedAccount(0);
      return (await Promise.all([a, b].map((gw) => servedFromMemory(gw, key)))).every(Boolean);
    });
  });
  afterEach(async () => a.expectAuditClean());
  after(async () => {
    await b?.close();
    await a?.close();
  });

  /** An account with an unrestricted owner key and a limited key `ci` that has spent one fixed call. */
  async function accountWithSpentKey() {
    const owner = await a.fundedAccount(10_000_000);
    const issued = await a.admin('POST', `/admin/v1/accounts/${owner.accountId}/keys`, {
      name: 'ci',
      allowed_models: ['chat-fast'],
      budget: { amount: 100 * FIXED_CHARGE, period: 'total' },
      rate_limit_per_minute: 500,
      tokens_per_minute: 1_000_000,
    });
    expect(issued.status).to.equal(201);
    expect((await a.api(issued.body.key, 'POST', '/v1/chat/completions', FIXED_CALL)).status).to.equal(200);
    return { owner, keyId: issued.body.id as string, key: issued.body.key as string };
  }

  it('gives the owner a new secret for the same key: same id, limits and spent budget, ledger unchanged; the old secret is refused in both processes', async () => {
    const { owner, keyId, key } = await accountWithSpentKey();
    await waitFor('the other gateway to serve the old secret from memory', () => servedFromMemory(b, key));
    const before = (await a.api(owner.key, 'GET', `/v1/account/keys`)).body.data.find((k: { id: string }) => k.id === keyId);
    expect(before.budget).to.deep.include({ spent: FIXED_CHARGE });
    const ledgerBefore = (await a.api(owner.key, 'GET', '/v1/account/ledger?limit=100')).body.data;
    const invalidations = b.keyCache.stats().invalidations;

    const regenerated = await a.api(owner.key, 'POST', `/v1/account/keys/${keyId}/regenerate`);
    expect(regenerated.status, JSON.stringify(regenerated.body)).to.equal(200);
    const fresh = regenerated.body.key as string;
    expect(fresh).to.match(/^tr-[A-Za-z0-9_-]{43}$/);
    expect(fresh).to.not.equal(key);
    expect(regenerated.body.prefix).to.equal(fresh.slice(0, 9));
    const { key: _secret, ...view } = regenerated.body;
    expect(view).to.deep.equal({ ...before, prefix: fresh.slice(0, 9) });

    // The old secret: refused at once here, and in the other process once the log's notice reaches it.
    const refused = await a.api(key, 'GET', '/v1/account');
    expect([refused.status, refused.body.error.code]).to.deep.equal([401, 'invalid_api_key']);
    await waitFor('the regeneration to reach the other gateway', async () => b.keyCache.stats().invalidations > invalidations);
    expect((await b.api(key, 'POST', '/v1/chat/completions', FIXED_CALL)).status).to.equal(401);
    expect((await a.api(owner.key, 'GET', '/v1/account/ledger?limit=100')).body.data).to.deep.equal(ledgerBefore);

    // The new secret is the same key everywhere: its limits and its spend go on.
    const call = await b.api(fresh, 'POST', '/v1/chat/completions', FIXED_CALL);
    expect(call.status, JSON.stringify(call.body)).to.equal(200);
    const outside = await b.api(fresh, 'POST', '/v1/chat/completions', { ...FIXED_CALL, model: 'chat-pro' });
    expect([outside.status, outside.body.error.code]).to.deep.equal([400, 'model_not_allowed']);
    const after = (await a.api(owner.key, 'GET', `/v1/account/keys`)).body.data.find((k: { id: string }) => k.id === keyId);
    expect(after.budget).to.deep.include({ spent: 2 * FIXED_CHARGE });
    const ledger = (await a.api(owner.key, 'GET', `/v1/account/ledger?key_id=${keyId}`)).body.data;
    expect(ledger.filter((e: { type: string }) => e.type === 'settlement')).to.have.length(2);

    // The event: the new hash and prefix, never the secret, recorded with the acting key.
    const events = await a.store.readStream(accountStream(owner.accountId));
    const event = events.find((e) => e.type === 'ApiKeySecretRegenerated')!;
    expect(Object.keys(event.data as object).sort()).to.deep.equal(['at', 'keyHash', 'keyId', 'keyPrefix']);
    expect(event.data).to.include({ keyId, keyHash: hashApiKey(fresh), keyPrefix: fresh.slice(0, 9) });
    expect(JSON.stringify([event.data, event.metadata])).to.not.include(fresh);
    expect(event.metadata).to.include({ actor: owner.keyId });
    expect(await keyRow(a, keyId)).to.deep.equal({ key_hash: hashApiKey(fresh), key_prefix: fresh.slice(0, 9) });
  });

  it('lets the operator regenerate any account’s key, and ends the dashboard sessions opened with the old secret', async () => {
    const { owner, keyId, key } = await accountWithSpentKey();
    const browser = new DashboardClient(a.url);
    expect((await browser.signIn(key)).status).to.equal(201);
    expect((await browser.call('GET', '/dashboard/api/v1/account')).status).to.equal(200);

    const regenerated = await a.admin('POST', `/admin/v1/accounts/${owner.accountId}/keys/${keyId}/regenerate`);
    expect(regenerated.status, JSON.stringify(regenerated.body)).to.equal(200);
    expect(regenerated.body).to.include({ id: keyId, name: 'ci' });
    expect(regenerated.body.budget).to.deep.include({ amount: 100 * FIXED_CHARGE, spent: FIXED_CHARGE });
    expect((await a.api(key, 'GET', '/v1/account')).status).to.equal(401);
    expect((await a.api(regenerated.body.key, 'GET', '/v1/account')).status).to.equal(200);
    const events = await a.store.readStream(accountStream(owner.accountId));
    expect(events.find((e) => e.type === 'ApiKeySecretRegenerated')!.metadata).to.include({ actor: 'admin' });

    // The session held the old secret's hash: it ended, in either process.
    const ended = await browser.call('GET', '/dashboard/api/v1/account');
    expect([ended.status, ended.body.error.code]).to.deep.equal([401, 'invalid_api_key']);
    expect((await browser.call('GET', '/dashboard/api/session')).status).to.equal(401);
    const again = new DashboardClient(b.url);
    expect((await again.signIn(key)).status).to.equal(401);
    expect((await again.signIn(regenerated.body.key)).status).to.equal(201);
  });

  it('answers the documented errors and changes nothing: unknown, revoked or another account’s key 404, a wider key 403, a body 400', async () => {
    const { owner, keyId, key } = await accountWithSpentKey();
    const other = await a.fundedAccount(0);
    const revoked = await a.admin('POST', `/admin/v1/accounts/${owner.accountId}/keys`, { name: 'gone' });
    expect((await a.admin('DELETE', `/admin/v1/keys/${revoked.body.id}`)).status).to.equal(204);
    const eventsBefore = (await a.store.readStream(accountStream(owner.accountId))).length;
    const otherBefore = (await a.store.readStream(accountStream(other.accountId))).length;

    const answers = [
      [await a.api(owner.key, 'POST', '/v1/account/keys/key_nope/regenerate'), 404, 'key_not_found'],
      [await a.api(owner.key, 'POST', `/v1/account/keys/${other.keyId}/regenerate`), 404, 'key_not_found'],
      [await a.api(owner.key, 'POST', `/v1/account/keys/${revoked.body.id}/regenerate`), 404, 'key_not_found'],
      // The limited key cannot act on the unrestricted owner key.
      [await a.api(key, 'POST', `/v1/account/keys/${owner.keyId}/regenerate`), 403, 'key_scope_exceeded'],
      [await a.api(owner.key, 'POST', `/v1/account/keys/${keyId}/regenerate`, { name: 'x' }), 400, 'unexpected_body'],
      [await a.admin('POST', `/admin/v1/accounts/${owner.accountId}/keys/key_nope/regenerate`), 404, 'key_not_found'],
      [await a.admin('POST', `/admin/v1/accounts/${other.accountId}/keys/${keyId}/regenerate`), 404, 'key_not_found'],
      [await a.admin('POST', `/admin/v1/accounts/${owner.accountId}/keys/${revoked.body.id}/regenerate`), 404, 'key_not_found'],
      [await a.admin('POST', `/admin/v1/accounts/acct_nope/keys/${keyId}/regenerate`), 404, 'account_not_found'],
      [await a.api(null, 'POST', `/v1/account/keys/${keyId}/regenerate`), 401, 'invalid_api_key'],
    ] as const;
    for (const [reply, status, code] of answers) expect([reply.status, reply.body.error?.code], JSON.stringify(reply.body)).to.deep.equal([status, code]);

    expect(await a.store.readStream(accountStream(owner.accountId))).to.have.length(eventsBefore);
    expect(await a.store.readStream(accountStream(other.accountId))).to.have.length(otherBefore);
    for (const secret of [key, owner.key, other.key]) expect((await a.api(secret, 'GET', '/v1/account')).status).to.equal(200);
  });

  it('lets a key with a budget regenerate itself only: another key, even one no wider, is 403 and keeps its secret', async () => {
    const { owner, keyId, key } = await accountWithSpentKey();
    const twin = await a.admin('POST', `/admin/v1/accounts/${owner.accountId}/keys`, {
      name: 'twin',
      allowed_models: ['chat-fast'],
      budget: { amount: 100 * FIXED_CHARGE, period: 'total' },
      rate_limit_per_minute: 500,
      tokens_per_minute: 1_000_000,
    });
    expect(twin.status).to.equal(201);
    const eventsBefore = (await a.store.readStream(accountStream(owner.accountId))).length;

    const refused = await a.api(key, 'POST', `/v1/account/keys/${twin.body.id}/regenerate`);
    expect([refused.status, refused.body.error?.code, refused.body.error?.type], JSON.stringify(refused.body)).to.deep.equal([403, 'key_scope_exceeded', 'permission_error']);
    expect(refused.body).to.not.have.property('key');
    expect(await a.store.readStream(accountStream(owner.accountId))).to.have.length(eventsBefore);
    expect((await a.api(twin.body.key, 'GET', '/v1/account')).status).to.equal(200);

    const own = await a.api(key, 'POST', `/v1/account/keys/${keyId}/regenerate`);
    expect(own.status, JSON.stringify(own.body)).to.equal(200);
    expect((await a.api(own.body.key, 'GET', '/v1/account')).status).to.equal(200);
    expect((await a.api(key, 'GET', '/v1/account')).status).to.equal(401);
  });
});

/**
 * A funded account and its key, made through a gateway on `gw`'s database with the usual
 * PROJECTION_WAIT_MS: with 200 ms a loaded machine answers a write before its view has it, and the
 * next step of the set-up is refused (a key for an account the accounts view does not show yet).
 */
async function fundedWithUsualWait(gw: TestGateway, amount: number): Promise<{ accountId: string; key: string; keyId: string }> {
  const setup = await startTestGateway({}, { reuseDatabaseOf: gw });
  try {
    return await setup.fundedAccount(amount);
  } finally {
    await setup.close();
  }
}

describe('a regenerated key’s old secret while the keys read model lags @integration', () => {
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    a = await startTestGateway({ PROJECTION_WAIT_MS: '200' });
    b = await startTestGateway({ PROJECTION_WAIT_MS: '200' }, { reuseDatabaseOf: a });
    // Each gateway caches once it follows the log and its read model has the log's head.
    await waitFor('both key caches to follow the log', async () => {
      const { key } = await fundedWithUsualWait(a, 0);
      return (await Promise.all([a, b].map((gw) => servedFromMemory(gw, key)))).every(Boolean);
    });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it('refuses the old secret in both processes although the api_keys view still holds its hash', async () => {
    const { accountId, key, keyId } = await fundedWithUsualWait(a, 1_000_000);
    await waitFor('both gateways to serve the key from memory', async () => (await servedFromMemory(a, key)) && servedFromMemory(b, key));
    // Neither process folds key events any more: the view keeps the old hash.
    await Promise.all([a, b].map((gw) => gw.runners.get('api_keys')!.stop()));
    const invalidations = b.keyCache.stats().invalidations;

    const regenerated = await a.admin('POST', `/admin/v1/accounts/${accountId}/keys/${keyId}/regenerate`);
    expect(regenerated.status, JSON.stringify(regenerated.body)).to.equal(200);
    const fresh = regenerated.body.key as string;
    // Answered with the new secret's prefix even though the view has not folded it.
    expect(regenerated.body.prefix).to.equal(fresh.slice(0, 9));
    expect((await keyRow(a, keyId)).key_hash).to.equal(hashApiKey(key));

    const here = await a.api(key, 'GET', '/v1/account');
    expect([here.status, here.body.error.code]).to.deep.equal([401, 'invalid_api_key']);
    await waitFor('the regeneration to reach the other gateway', async () => b.keyCache.stats().invalidations > invalidations);
    const there = await b.api(key, 'POST', '/v1/chat/completions', FIXED_CALL);
    expect([there.status, there.body.error.code]).to.deep.equal([401, 'invalid_api_key']);
    expect((await keyRow(b, keyId)).key_hash).to.equal(hashApiKey(key));
  });
});
