import { units } from '../support/pricing';
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { accountDecider, RECENT_GENERATION } from '../../src/domain/account/decider';
import { accountStream } from '../../src/domain/account/events';
import { CommandHandler } from '../../src/domain/command-handler';
import { PostgresSnapshotStore } from '../../src/eventstore/postgres/snapshots';
import { DomainError } from '../../src/domain/decider';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { secondWriter } from '../support/second-writer';
import { waitFor } from '../support/wait';

const purpose = (ref: string) => ({ kind: 'request' as const, ref, description: 'test', actor: 'system', model: 'test', endpoint: 'test' });

describe('prepaid ledger @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  afterEach(async () => gw.expectAuditClean());
  after(async () => gw.close());

  it('credits idempotently by reference: 201, then 200 with the same entry and no second credit', async () => {
    const { accountId } = await gw.fundedAccount(0);
    const first = await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 500, reference: 'invoice-7' });
    const again = await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 500, reference: 'invoice-7' });
    expect(first.status).to.equal(201);
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    const other = await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 9, reference: 'invoice-7' });
    expect(other.status).to.equal(409);
    const account = await gw.admin('GET', `/admin/v1/accounts/${accountId}`);
    expect(account.body.balance).to.deep.equal({ available: 500, frozen: 0, currency: 'CNY' });
  });

  it('gives exactly 10 of 50 parallel reservations of 10 against 100, across two writers', async () => {
    const { accountId } = await gw.fundedAccount(100);
    const other = secondWriter(gw);
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? gw.accounts : other).reserve({ accountId, amount: 10, purpose: purpose(`req-${i}`), ttlMs: 60_000 })),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).to.have.length(10);
    expect(refused.every((r) => r.reason instanceof DomainError && r.reason.code === 'insufficient_balance')).to.equal(true);
    const view = await gw.accounts.get(accountId);
    expect(view!.balance).to.deep.equal({ available: 0, frozen: 100, currency: 'CNY' });
    for (const r of ok) await gw.accounts.release(accountId, (r as PromiseFulfilledResult<string>).value, 'test done');
  });

  it('settles by actual usage, charges an overrun, and answers a repeated close with the first outcome', async () => {
    const { accountId, key } = await gw.fundedAccount(1000);
    const r1 = await gw.accounts.reserve({ accountId, amount: 300, purpose: purpose('a'), ttlMs: 60_000 });
    expect(await gw.accounts.settle(accountId, r1, units(120), { tokens: 120 })).to.deep.equal({ kind: 'settled', amount: 120, reservedAmount: 300, refunded: 0 });
    expect(await gw.accounts.release(accountId, r1, 'late failure')).to.deep.include({ kind: 'settled', amount: 120 });
    expect(await gw.accounts.settle(accountId, r1, units(999), {})).to.deep.include({ kind: 'settled', amount: 120 });

    const r2 = await gw.accounts.reserve({ accountId, amount: 100, purpose: purpose('b'), ttlMs: 60_000 });
    await gw.accounts.settle(accountId, r2, units(150), {});
    const me = await gw.api(key, 'GET', '/v1/account');
    expect(me.body.balance).to.deep.equal({ available: 1000 - 120 - 150, frozen: 0, currency: 'CNY' });
    const ledger = await gw.api(key, 'GET', '/v1/account/ledger');
    const settlement = ledger.body.data.find((e: { type: string; reservation_id: string }) => e.type === 'settlement' && e.reservation_id === r2);
    expect(settlement).to.deep.include({ amount: 150, available_delta: -50, frozen_delta: -100, description: 'overrun of 50' });
  });

  it('answers a close long after the first one with the first outcome, from the ledger', async () => {
    const { accountId } = await gw.fundedAccount(1_000_000);
    const first = await gw.accounts.reserve({ accountId, amount: 50, purpose: purpose('old'), ttlMs: 60_000 });
    await gw.accounts.settle(accountId, first, units(40), { tokens: 4 });
    // Enough later closes that the account state no longer remembers the first one.
    for (let i = 0; i < 2 * RECENT_GENERATION + 1; i++) {
      const r = await gw.accounts.reserve({ accountId, amount: 1, purpose: purpose(`later-${i}`), ttlMs: 60_000 });
      await gw.accounts.release(accountId, r, 'done');
    }
    expect(await gw.accounts.settle(accountId, first, units(50), {})).to.deep.equal({ kind: 'settled', amount: 40, reservedAmount: 50, refunded: 0 });
    expect(await gw.accounts.release(accountId, first, 'late')).to.deep.include({ kind: 'settled', amount: 40 });
    expect((await gw.accounts.get(accountId))!.balance).to.deep.include({ available: 1_000_000 - 40, frozen: 0 });
  });

  it('shows a reservation in the balance at once (read your writes, reading side)', async () => {
    const { accountId, key } = await gw.fundedAccount(1000);
    const r = await gw.accounts.reserve({ accountId, amount: 250, purpose: purpose('c'), ttlMs: 60_000 });
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance).to.deep.equal({ available: 750, frozen: 250, currency: 'CNY' });
    await gw.accounts.release(accountId, r, 'done');
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance).to.deep.equal({ available: 1000, frozen: 0, currency: 'CNY' });
  });

  it('pages the ledger oldest first with a cursor', async () => {
    const { accountId } = await gw.fundedAccount(0);
    for (let i = 0; i < 5; i++) await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 10 + i, reference: `p-${i}` });
    const first = await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger?limit=2`);
    expect(first.body.data.map((e: { amount: number }) => e.amount)).to.deep.equal([10, 11]);
    expect(first.body.has_more).to.equal(true);
    const second = await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger?limit=10&after=${first.body.next_after}`);
    expect(second.body.data.map((e: { amount: number }) => e.amount)).to.deep.equal([12, 13, 14]);
    expect(second.body.data.map((e: { available_after: number }) => e.available_after)).to.deep.equal([33, 46, 60]);
    expect(second.body.has_more).to.equal(false);
  });

  it('loads a long account from its snapshot to the same state as a full replay', async () => {
    const { accountId } = await gw.fundedAccount(1_000_000);
    const commands = new CommandHandler(gw.store, new PostgresSnapshotStore(gw.pool), accountDecider, gw.logger, { snapshotEvery: 50 });
    for (let i = 0; i < 60; i++) {
      await commands.handle(accountStream(accountId), { type: 'Reserve', reservationId: `s${i}`, amount: 7, purpose: purpose(`s${i}`), expiresAt: new Date(Date.now() + 60_000).toISOString(), now: new Date().toISOString() });
      await commands.handle(accountStream(accountId), { type: 'Settle', reservationId: `s${i}`, pricing: units(5), usage: {}, now: new Date().toISOString() });
    }
    // Snapshot writes are asynchronous: wait for the one past revision 50.
    await waitFor('the snapshot', async () => {
      const { rows } = await gw.pool.query('SELECT revision FROM es_snapshots WHERE stream_id = $1', [accountStream(accountId)]);
      return rows.length === 1 && Number(rows[0].revision) > 50;
    });
    const fromSnapshot = await new CommandHandler(gw.store, new PostgresSnapshotStore(gw.pool), accountDecider, gw.logger).load(accountStream(accountId));
    let replayed = accountDecider.initialState();
    for (const e of await gw.store.readStream(accountStream(accountId))) replayed = accountDecider.evolve(replayed, e as never);
    expect(fromSnapshot.state).to.deep.equal(replayed);
    expect(replayed.settled).to.equal(300);
  });

  it('stores only the hash of a key, shows it once, and refuses a revoked key from the next request on', async () => {
    const { accountId, key, keyId } = await gw.fundedAccount(0);
    expect(key).to.match(/^tr-[A-Za-z0-9_-]{32,}$/);
    const { rows } = await gw.pool.query('SELECT * FROM rm.api_keys WHERE key_id = $1', [keyId]);
    expect(rows[0].key_hash).to.equal(createHash('sha256').update(key).digest('hex'));
    const stored = JSON.stringify(rows[0]) + JSON.stringify((await gw.store.readStream(accountStream(accountId))).map((e) => e.data));
    expect(stored).not.to.include(key);
    expect((await gw.api(key, 'GET', '/v1/account')).status).to.equal(200);
    expect((await gw.admin('DELETE', `/admin/v1/keys/${keyId}`)).status).to.equal(204);
    const after = await gw.api(key, 'GET', '/v1/account');
    expect(after.status).to.equal(401);
    expect(after.body.error.message).to.equal('invalid or missing API key');
    expect((await gw.admin('DELETE', '/admin/v1/keys/key_unknown')).status).to.equal(404);
  });

  it('stores the allowed models of a restricted key', async () => {
    const { keyId, key } = await gw.fundedAccount(0, ['chat-fast', 'model-b']);
    const { rows } = await gw.pool.query('SELECT allowed_models FROM rm.api_keys WHERE key_id = $1', [keyId]);
    expect(rows[0].allowed_models).to.deep.equal(['chat-fast', 'model-b']);
    // The stored restriction is the one in force: the key sees only the listed models that exist.
    const models = await gw.api(key, 'GET', '/v1/models');
    expect(models.body.data.map((m: { id: string }) => m.id)).to.deep.equal(['chat-fast']);
  });

  it('refuses missing, malformed and unknown keys and a wrong admin token with 401', async () => {
    expect((await gw.api(null, 'GET', '/v1/account')).status).to.equal(401);
    expect((await gw.api('tr-short', 'GET', '/v1/account')).status).to.equal(401);
    expect((await gw.api('tr-' + 'x'.repeat(43), 'GET', '/v1/account')).status).to.equal(401);
    expect((await gw.api('wrong', 'POST', '/admin/v1/accounts', { name: 'x' })).status).to.equal(401);
  });

  it('rotates the webhook secret for the admin and for the key holder', async () => {
    const { accountId, key } = await gw.fundedAccount(0);
    expect((await gw.api(key, 'GET', '/v1/account/webhook-secret')).body).to.deep.equal({ secret: null });
    const admin = await gw.admin('POST', `/admin/v1/accounts/${accountId}/webhook-secret`);
    expect(admin.status).to.equal(201);
    expect(admin.body.secret).to.match(/^whsec_/);
    expect((await gw.api(key, 'GET', '/v1/account/webhook-secret')).body.secret).to.equal(admin.body.secret);
    const rotated = await gw.api(key, 'POST', '/v1/account/webhook-secret');
    expect(rotated.body.secret).to.match(/^whsec_/).and.not.equal(admin.body.secret);
    expect((await gw.api(key, 'GET', '/v1/account/webhook-secret')).body.secret).to.equal(rotated.body.secret);
  });

  it('answers bad input with 400 naming the field, 404 for unknown routes and accounts, 400 payload_too_large for huge bodies, and changes nothing', async () => {
    const { accountId } = await gw.fundedAccount(100);
    const before = (await gw.store.streamHead(accountStream(accountId)))!.revision;
    const cases: [unknown, string][] = [
      [{ amount: 1.5, reference: 'x' }, 'amount'],
      [{ amount: -4, reference: 'x' }, 'amount'],
      [{ amount: 10 }, 'reference'],
      [{ amount: 10, reference: 'x', extra: true }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.param).to.equal(field);
      expect(res.body.error.message).to.include(field);
    }
    expect((await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, '{"amount":')).status).to.equal(400);
    const huge = await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 1, reference: 'big', note: 'x'.repeat(2_000_000) });
    expect([huge.status, huge.body.error.code]).to.deep.equal([400, 'payload_too_large']);
    expect((await gw.admin('GET', '/admin/v1/accounts/acct_missing')).status).to.equal(404);
    expect((await gw.admin('POST', '/admin/v1/accounts/acct_missing/credits', { amount: 1, reference: 'r' })).status).to.equal(404);
    expect((await gw.admin('GET', '/admin/v1/nothing-here')).status).to.equal(404);
    expect((await gw.store.streamHead(accountStream(accountId)))!.revision).to.equal(before);
  });

  it('answers /healthz once ready', async () => {
    const res = await fetch(`${gw.url}/healthz`);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ status: 'ok' });
  });
});
