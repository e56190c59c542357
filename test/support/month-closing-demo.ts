/**
 * Generates the month-closing example of docs/auditing.md from a real run: a gateway on a test
 * database with an injected clock, a little traffic in October, a late refund in November.
 * Run: TEST_ADMIN_DATABASE_URL=postgres://… npx tsx test/support/month-closing-demo.ts
 */
import OpenAI from 'openai';
import { startTestGateway } from './gateway';

async function main(): Promise<void> {
  let now = new Date('2026-10-30T02:00:00Z');
  const gw = await startTestGateway({}, { clock: () => now });
  try {
    const account = await gw.admin('POST', '/admin/v1/accounts', { name: '杭州示例科技有限公司' });
    const id = account.body.id as string;
    await gw.admin('POST', `/admin/v1/accounts/${id}/credits`, { amount: 100_000_000, reference: 'bank-2026-10-30', note: '对公转账' });
    const web = await gw.admin('POST', `/admin/v1/accounts/${id}/keys`, { name: 'web' });
    const batch = await gw.admin('POST', `/admin/v1/accounts/${id}/keys`, { name: 'batch' });
    const client = new OpenAI({ apiKey: web.body.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: '你好 [sim:tokens=40]' }] });
    now = new Date('2026-10-31T10:00:00Z');
    const images = new OpenAI({ apiKey: batch.body.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await images.images.generate({ model: 'image-5.0', prompt: '西湖日出', n: 2, size: '2048x2048' });
    now = new Date('2026-10-31T15:59:00Z'); // 23:59 in Shanghai
    await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'last one [sim:tokens=25]' }] });
    while ((await gw.balance(web.body.key)).frozen !== 0) await new Promise((r) => setTimeout(r, 50));

    now = new Date('2026-11-02T01:00:00Z');
    const october = await gw.api(web.body.key, 'GET', '/v1/account/statements/2026-10');
    const csv = await gw.api(web.body.key, 'GET', '/v1/account/statements/2026-10?format=csv');
    const ledger = await gw.api(web.body.key, 'GET', '/v1/account/ledger?type=settlement');
    const charge = ledger.body.data[0];
    await gw.admin('POST', `/admin/v1/accounts/${id}/refunds`, { reservation_id: charge.reservation_id, amount: 100, reference: 'ticket-481', reason: 'reply cut short' });
    const octoberAgain = await gw.api(web.body.key, 'GET', '/v1/account/statements/2026-10');
    const november = await gw.api(web.body.key, 'GET', '/v1/account/statements/2026-11');
    const usage = await gw.api(web.body.key, 'GET', '/v1/usage?group_by=day,model');
    const ledgerCsv = await gw.api(web.body.key, 'GET', '/v1/account/ledger?format=csv&type=settlement');
    await gw.expectAuditClean();
    const out = { october: october.body, csv: csv.body, settlement: charge, octoberUnchanged: JSON.stringify(octoberAgain.body) === JSON.stringify(october.body), november: november.body, usage: usage.body, ledgerCsv: ledgerCsv.body };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } finally {
    await gw.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
