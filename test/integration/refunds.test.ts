import { units } from '../support/pricing';
import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';

describe('operator refunds of settled charges @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => gw.close());

  const refund = (accountId: string, body: Record<string, unknown>) => gw.admin('POST', `/admin/v1/accounts/${accountId}/refunds`, body);
  const balanceOf = async (key: string) => (await gw.api(key, 'GET', '/v1/account')).body.balance;

  it('refunds part of a charge once per reference, as a ledger entry, and never more than was charged', async () => {
    const { accountId, key } = await gw.fundedAccount(1000);
    const charged = await gw.accounts.reserve({ accountId, amount: 300, purpose: { kind: 'request', ref: 'req_refund', description: 'chat-fast', actor: 'system', model: 'chat-fast', endpoint: 'test' }, ttlMs: 60_000 });
    await gw.accounts.settle(accountId, charged, units(250), { completion_tokens: 25 });
    expect(await balanceOf(key)).to.deep.equal({ available: 750, frozen: 0, currency: 'CNY' });

    const first = await refund(accountId, { reservation_id: charged, amount: 100, reference: 'rf-1', reason: 'answer was cut off' });
    expect(first.status).to.equal(201);
    expect(first.body).to.deep.include({
      type: 'refund',
      amount: 100,
      available_delta: 100,
      frozen_delta: 0,
      available_after: 850,
      frozen_after: 0,
      reservation_id: charged,
      reference: 'rf-1',
      description: 'answer was cut off',
    });
    const again = await refund(accountId, { reservation_id: charged, amount: 100, reference: 'rf-1', reason: 'answer was cut off' });
    expect(again.status, 'the same refund again').to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    expect(await balanceOf(key)).to.deep.equal({ available: 850, frozen: 0, currency: 'CNY' });

    const conflict = await refund(accountId, { reservation_id: charged, amount: 99, reference: 'rf-1', reason: 'x' });
    expect([conflict.status, conflict.body.error.code]).to.deep.equal([409, 'refund_reference_conflict']);
    const tooMuch = await refund(accountId, { reservation_id: charged, amount: 151, reference: 'rf-2', reason: 'x' });
    expect([tooMuch.status, tooMuch.body.error.code, tooMuch.body.error.message]).to.deep.equal([400, 'refund_exceeds_charge', 'at most 150 can be refunded']);
    const rest = await refund(accountId, { reservation_id: charged, amount: 150, reference: 'rf-2', reason: 'the rest' });
    expect(rest.status).to.equal(201);
    expect(await balanceOf(key)).to.deep.equal({ available: 1000, frozen: 0, currency: 'CNY' });

    const ledger = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).body;
    const entries = (ledger.data ?? ledger.entries) as { type: string; amount: number }[];
    expect(entries.map((e) => [e.type, e.amount])).to.deep.equal([
      ['credit', 1000],
      ['reservation', 300],
      ['settlement', 250],
      ['refund', 100],
      ['refund', 150],
    ]);
    await gw.expectAuditClean();
  });

  it('refuses what is not a settled charge of this account, changing nothing', async () => {
    const mine = await gw.fundedAccount(1000);
    const other = await gw.fundedAccount(1000);
    const open = await gw.accounts.reserve({ accountId: mine.accountId, amount: 100, purpose: { kind: 'request', ref: 'req_open', description: 'chat-fast', actor: 'system', model: 'chat-fast', endpoint: 'test' }, ttlMs: 60_000 });
    const released = await gw.accounts.reserve({ accountId: mine.accountId, amount: 100, purpose: { kind: 'request', ref: 'req_rel', description: 'chat-fast', actor: 'system', model: 'chat-fast', endpoint: 'test' }, ttlMs: 60_000 });
    await gw.accounts.release(mine.accountId, released, 'upstream failed');
    const theirs = await gw.accounts.reserve({ accountId: other.accountId, amount: 100, purpose: { kind: 'request', ref: 'req_theirs', description: 'chat-fast', actor: 'system', model: 'chat-fast', endpoint: 'test' }, ttlMs: 60_000 });
    await gw.accounts.settle(other.accountId, theirs, units(100), {});

    const cases: [string, Record<string, unknown>, number, string][] = [
      [mine.accountId, { reservation_id: open, amount: 1, reference: 'a', reason: 'x' }, 400, 'refund_not_allowed'],
      [mine.accountId, { reservation_id: released, amount: 1, reference: 'b', reason: 'x' }, 400, 'refund_not_allowed'],
      [mine.accountId, { reservation_id: theirs, amount: 1, reference: 'c', reason: 'x' }, 404, 'reservation_not_found'],
      [mine.accountId, { reservation_id: 'res_unknown', amount: 1, reference: 'd', reason: 'x' }, 404, 'reservation_not_found'],
      ['acct_unknown', { reservation_id: theirs, amount: 1, reference: 'e', reason: 'x' }, 404, 'account_not_found'],
      [mine.accountId, { reservation_id: open, amount: 0, reference: 'f', reason: 'x' }, 400, 'invalid_request'],
      [mine.accountId, { reservation_id: open, amount: 1, reference: 'g' }, 400, 'invalid_request'],
    ];
    for (const [accountId, body, status, code] of cases) {
      const res = await refund(accountId, body);
      expect([res.status, res.body.error?.code], JSON.stringify(body)).to.deep.equal([status, code]);
    }
    const noToken = await fetch(`${gw.url}/admin/v1/accounts/${mine.accountId}/refunds`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(noToken.status).to.equal(401);
    expect(await balanceOf(mine.key)).to.deep.equal({ available: 900, frozen: 100, currency: 'CNY' });
    await gw.accounts.release(mine.accountId, open, 'test done');
    await gw.expectAuditClean();
  });

  it('refunds a charge settled so long ago that the account no longer remembers it', async function () {
    this.timeout(120_000);
    const { accountId, key } = await gw.fundedAccount(1000);
    const old = await gw.accounts.reserve({ accountId, amount: 100, purpose: { kind: 'request', ref: 'req_old', description: 'chat-fast', actor: 'system', model: 'chat-fast', endpoint: 'test' }, ttlMs: 60_000 });
    await gw.accounts.settle(accountId, old, units(80), {});
    expect((await refund(accountId, { reservation_id: old, amount: 30, reference: 'early', reason: 'first' })).status).to.equal(201);
    // 300 later requests close after it: more than the account state keeps (two generations of 128).
    for (let i = 0; i < 300; i++) {
      const r = await gw.accounts.reserve({ accountId, amount: 1, purpose: { kind: 'request', ref: `req_${i}`, description: 'chat-fast', actor: 'system', model: 'chat-fast', endpoint: 'test' }, ttlMs: 60_000 });
      await gw.accounts.release(accountId, r, 'x');
    }
    const late = await refund(accountId, { reservation_id: old, amount: 51, reference: 'late', reason: 'x' });
    expect([late.status, late.body.error?.code], 'the first refund still counts').to.deep.equal([400, 'refund_exceeds_charge']);
    expect((await refund(accountId, { reservation_id: old, amount: 50, reference: 'late', reason: 'the rest' })).status).to.equal(201);
    expect(await balanceOf(key)).to.deep.equal({ available: 1000, frozen: 0, currency: 'CNY' });
    await gw.expectAuditClean();
  });
});
