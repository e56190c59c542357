import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { yuan } from '../../src/accounts/csv';
import { verifyWebhook } from '../../src/webhooks/signing';
import { FIXED_CALL, FIXED_CHARGE } from '../support/fixed-chat';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';
import { closeContexts, expectAccessible, nav, readDownload, requireWebBuild, sharedBrowser, shown, watchedPage, type WatchedPage } from './browser';

/** A webhook receiver on loopback. */
class Receiver {
  readonly received: { headers: IncomingMessage['headers']; body: string }[] = [];
  private server!: Server;
  url = '';
  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** RFC 4180 as src/accounts/csv.ts writes it: BOM, CRLF, quoted cells with doubled quotes. */
function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  const body = text.replace(/^\uFEFF/, '');
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(cell), (cell = '');
    else if (c === '\r' && body[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      (row = []), (cell = ''), i++;
    } else cell += c;
  }
  const [header, ...records] = rows;
  return records.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

describe('the dashboard in Chromium: owners and operators, end to end @e2e', function () {
  this.timeout(180_000);
  let gw: TestGateway;
  let browser: Browser;
  let receiver: Receiver;
  let account: { accountId: string; key: string; keyId: string };
  let owner: WatchedPage;
  const watched: WatchedPage[] = [];

  before(async () => {
    requireWebBuild();
    browser = await sharedBrowser();
    gw = await startTestGateway({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000' });
    receiver = await new Receiver().start();
    account = await gw.fundedAccount(10_000_000);
    owner = await watchedPage(browser);
    watched.push(owner);
  });
  after(async () => {
    await closeContexts(browser);
    await receiver?.close();
    await gw?.close();
  });

  const open = async (page: Page, path: string, heading: string) => {
    await page.goto(`${gw.url}/dashboard${path}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };
  it('signs an owner in with an API key and shows the balances', async () => {
    const { page } = owner;
    await page.goto(`${gw.url}/dashboard`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessible(page, 'the sign-in page');
    await page.getByLabel('API key or admin token').fill(account.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(await page.getByTestId('available').textContent()).to.equal('¥10.00');
    expect(await page.getByTestId('frozen').textContent()).to.equal('¥0.00');
    // The key never reaches the browser's storage; the cookie is HttpOnly.
    const cookies = await owner.context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.path])).to.deep.equal([['gw_dashboard', true, 'Strict', '/dashboard']]);
    const stored = await page.evaluate('JSON.stringify(Object.assign({}, localStorage)) + JSON.stringify(Object.assign({}, sessionStorage))');
    expect(String(stored)).to.not.include(account.key);
  });

  let createdKey = '';
  it('creates a key (shown once) that works through the openai SDK; the charge appears in the ledger and the chart', async () => {
    const { page } = owner;
    await nav(page, 'Keys');
    const form = page.getByTestId('create-key');
    await form.getByLabel('Name').fill('sdk key');
    await form.getByLabel('Allowed models (comma-separated; empty: all)').fill('chat-fast');
    await form.getByLabel('Budget (yuan)').fill('1.5');
    await form.getByRole('button', { name: 'Create key' }).click();
    createdKey = (await page.getByTestId('new-key').textContent())!;
    expect(createdKey).to.match(/^tr-/);
    const row = page.locator('[data-testid=keys-table] tbody tr', { hasText: 'sdk key' });
    await row.waitFor();
    expect(await row.textContent()).to.include('¥0.00 / ¥1.50 (month)');

    const client = new OpenAI({ apiKey: createdKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create(FIXED_CALL);
    expect(completion.choices[0]!.message.content).to.be.a('string');

    await nav(page, 'Ledger');
    const settlement = page.locator('[data-testid=ledger-table] tbody tr[data-type=settlement]');
    await settlement.waitFor();
    const text = (await settlement.textContent())!;
    expect(text).to.include(shown(FIXED_CHARGE)).and.include('chat-fast');

    await nav(page, 'Overview');
    const spend = page.locator('[data-testid=spend-table] tbody tr', { hasText: 'chat-fast' });
    await spend.waitFor();
    expect(await spend.textContent()).to.include(shown(FIXED_CHARGE));
    expect(await page.locator('.recharts-bar-rectangle').count()).to.be.greaterThan(0);

    await nav(page, 'Keys');
    const used = page.locator('[data-testid=keys-table] tbody tr', { hasText: 'sdk key' });
    await used.getByText(`${shown(FIXED_CHARGE)} / ¥1.50`).waitFor();
  });

  it('downloads the ledger as CSV, and it reconciles with the balance', async () => {
    const { page } = owner;
    await nav(page, 'Ledger');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    const rows = parseCsv(readDownload((await download.path())!));
    const sum = (type: string) => rows.filter((r) => r.type === type).reduce((total, r) => total + Number(r.amount_minor), 0);
    const balance = await gw.balance(account.key);
    expect(rows.length).to.equal((await gw.api(account.key, 'GET', '/v1/account/ledger?limit=100')).body.data.length);
    expect(sum('credit') - sum('settlement') + sum('refund')).to.equal(balance.available);
    expect(Number(rows[rows.length - 1]!.available_after_minor)).to.equal(balance.available);
    for (const r of rows) expect(r.amount_yuan).to.equal(yuan(Number(r.amount_minor)));
  });

  it('rotates the webhook secret, and a redelivered webhook verifies with the new one only', async () => {
    const { page } = owner;
    await nav(page, 'Webhooks & settings');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Rotate' }).click();
    // A secret shown whole: whsec_ and no mask.
    const whole = /^whsec_[^•]*$/;
    await page.getByTestId('webhook-secret').filter({ hasText: whole }).waitFor();
    const first = (await page.getByTestId('webhook-secret').textContent())!;

    const created = await gw.api(account.key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'waves' }], duration: 4, callback_url: receiver.url, video_url_mode: 'auto' });
    expect(created.status).to.equal(200);
    await waitFor('the first delivery', async () => receiver.received.length === 1, 60_000);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Rotate' }).click();
    await page.getByTestId('webhook-secret').filter({ hasText: whole }).filter({ hasNotText: first }).waitFor();
    const second = (await page.getByTestId('webhook-secret').textContent())!;

    await nav(page, 'Tasks');
    const row = page.locator(`tr[data-task-id="${created.body.id}"]`);
    await row.getByRole('button', { name: /Deliveries/ }).click();
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await waitFor('the redelivery', async () => receiver.received.length === 2, 60_000);
    const verify = (index: number, secret: string) => {
      const r = receiver.received[index]!;
      return verifyWebhook(secret, String(r.headers['x-service-timestamp']), r.body, String(r.headers['x-service-signature']), Math.floor(Date.now() / 1000));
    };
    expect([verify(0, first), verify(1, second), verify(1, first)]).to.deep.equal([true, true, false]);
    // The deliveries panel shows each attempt's signature, as the receiver got it.
    const toggle = row.getByRole('button', { name: /Deliveries/ });
    const sent = String(receiver.received[1]!.headers['x-service-signature']);
    await waitFor('the attempt in the panel', async () => {
      await toggle.click();
      await toggle.click();
      return (await page.getByTestId('deliveries').textContent())?.includes(sent);
    }, 30_000, 200);
    expect(JSON.parse(receiver.received[1]!.body).task_id).to.equal(created.body.id);
  });

  it('refuses a state-changing call without the CSRF header', async () => {
    const refused = await owner.page.request.post(`${gw.url}/dashboard/api/v1/account/keys`, { data: { name: 'forged' } });
    expect(refused.status()).to.equal(403);
    expect((await refused.json()).error.code).to.equal('csrf_token_invalid');
  });

  it('shows every owner page without console errors or serious accessibility violations, in English and Chinese', async () => {
    const { page } = owner;
    // Through the navigation, as a user goes: one page load for the whole tour.
    const pages = [
      ['Overview', '概览'],
      ['Ledger', '账本'],
      ['Usage', '用量'],
      ['Keys', '密钥'],
      ['Webhooks & settings', 'Webhook 与设置'],
      ['Tasks', '任务'],
      ['Gallery', '图库'],
    ] as const;
    for (const [heading] of pages) {
      await nav(page, heading);
      await page.waitForLoadState('networkidle');
      await expectAccessible(page, `the owner's ${heading} page`);
    }
    await page.getByLabel('Language').selectOption('zh');
    await page.getByRole('heading', { level: 1, name: '图库' }).waitFor();
    expect(await page.evaluate('document.documentElement.lang')).to.equal('zh-CN');
    for (const [english, heading] of pages) {
      await nav(page, heading);
      await page.waitForLoadState('networkidle');
      await expectAccessible(page, `the owner's ${english} page in Chinese`);
    }
    await page.getByLabel('语言').selectOption('en');
    expect(owner.consoleErrors).to.deep.equal([]);
  });

  it('signs the operator in: credits the account and refunds the charge', async () => {
    const operator = await watchedPage(browser);
    watched.push(operator);
    const { page } = operator;
    await page.goto(`${gw.url}/dashboard`);
    await page.getByLabel('API key or admin token').fill(TEST_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await page.waitForLoadState('networkidle');
    await expectAccessible(page, 'the operator\'s accounts page');
    const name = (await gw.api(account.key, 'GET', '/v1/account')).body.name as string;
    await page.getByLabel('Search by name').fill(name);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('[data-testid=accounts-table] tbody tr', { hasText: account.accountId }).getByRole('link').click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    await expectAccessible(page, 'the operator\'s account page');

    const before = await gw.balance(account.key);
    const credit = page.getByTestId('credit-form');
    await credit.getByLabel('Amount (yuan)').fill('5.000001');
    await credit.getByLabel(/^Reference/).fill('dashboard-top-up-1');
    await credit.getByRole('button', { name: 'Credit' }).click();
    await page.getByText('Credited.').waitFor();
    await page.getByTestId('available').getByText(shown(before.available + 5_000_001)).waitFor();

    await page.locator('[data-testid=ledger-table] tbody tr[data-type=settlement]', { hasText: 'chat-fast' }).getByRole('button', { name: 'Refund' }).click();
    const refund = page.getByTestId('refund-form');
    expect(await refund.getByLabel('Amount (yuan)').inputValue()).to.equal(shown(FIXED_CHARGE).slice(1));
    await refund.getByLabel('Reason').fill('goodwill');
    await refund.getByRole('button', { name: 'Refund' }).click();
    await page.getByText('Refunded.').waitFor();
    await page.locator('[data-testid=ledger-table] tbody tr[data-type=refund]').waitFor();
    expect((await gw.balance(account.key)).available).to.equal(before.available + 5_000_001 + FIXED_CHARGE);

    const ledger = (await gw.api(account.key, 'GET', '/v1/account/ledger?type=refund')).body.data;
    expect(ledger.map((e: { amount: number }) => e.amount)).to.deep.equal([FIXED_CHARGE]);

    await open(page, '/operations', 'Operations');
    await page.waitForLoadState('networkidle');
    await expectAccessible(page, 'the operations page');
    expect(await page.getByTestId('catalog-table').textContent()).to.include('chat-fast');
    await page.getByRole('button', { name: 'Run the audit' }).click();
    // The page follows a running audit by itself (dashboard-shell.test.ts): no reloads.
    await page.getByTestId('audit-last').getByText('passed', { exact: true }).waitFor({ timeout: 90_000 });
    await page.getByRole('button', { name: 'Reload the catalog' }).click();
    await page.getByText(/models in the catalog/).waitFor();

    // The operator's pages in Chinese (the operations page's is in dashboard-operator.test.ts).
    await page.getByLabel('Language').selectOption('zh');
    await nav(page, '账户');
    await page.locator('[data-testid=accounts-table] tbody tr', { hasText: account.accountId }).waitFor();
    await expectAccessible(page, 'the operator\'s accounts page in Chinese');
    await page.locator('[data-testid=accounts-table] tbody tr', { hasText: account.accountId }).getByRole('link').click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    await page.getByTestId('credit-form').waitFor();
    await page.waitForLoadState('networkidle');
    await expectAccessible(page, 'the operator\'s account page in Chinese');
    await page.getByLabel('语言').selectOption('en');
    expect(operator.consoleErrors).to.deep.equal([]);
  });

  it('ends the session on sign-out: the old cookie is refused', async () => {
    const { page, context } = owner;
    await open(page, '', 'Overview');
    const [cookie] = await context.cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await context.cookies()).to.deep.equal([]);
    await page.getByLabel('Language').selectOption('zh');
    await page.getByRole('heading', { name: '登录' }).waitFor();
    await expectAccessible(page, 'the sign-in page in Chinese');
    await page.getByLabel('语言').selectOption('en');
    const replayed = await fetch(`${gw.url}/dashboard/api/v1/account`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } });
    expect(replayed.status).to.equal(401);
    expect(owner.consoleErrors).to.deep.equal([]);
  });

  it('ends the session when its key is revoked', async () => {
    const other = await watchedPage(browser);
    const { page } = other;
    await page.goto(`${gw.url}/dashboard`);
    await page.getByLabel('API key or admin token').fill(createdKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const keyId = (await gw.api(account.key, 'GET', '/v1/account/keys')).body.data.find((k: { name: string }) => k.name === 'sdk key').id;
    expect((await gw.admin('DELETE', `/admin/v1/keys/${keyId}`)).status).to.equal(204);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await page.request.get(`${gw.url}/dashboard/api/v1/account`)).status()).to.equal(401);
  });
});
