import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { FIXED_CALL, FIXED_CHARGE } from '../support/fixed-chat';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';
import { expectSettledAndAuditClean } from '../support/wait';
import { closeContexts, expectAccessible, nav, requireWebBuild, sharedBrowser, shown, watchedPage, type WatchedPage } from './browser';

/** Whether the page scrolls sideways (its content wider than the viewport). */
async function pageOverflows(page: Page): Promise<boolean> {
  return (await page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth')) === true;
}

/** The operator's request log and key search in Chromium, at 1280 px and 390×844, in English and Chinese. */
describe('the dashboard in Chromium: the operator’s request log and keys @e2e', function () {
  this.timeout(180_000);
  let gw: TestGateway;
  let browser: Browser;
  let operator: WatchedPage;
  let accountId: string;
  const accountName = 'Request log e2e Ltd';
  const keyName = 'e2e sdk key';
  let keyId: string;

  before(async () => {
    requireWebBuild();
    browser = await sharedBrowser();
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    accountId = (await gw.admin('POST', '/admin/v1/accounts', { name: accountName })).body.id;
    expect((await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 10_000_000, reference: 'fund' })).status).to.equal(201);
    const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: keyName });
    keyId = issued.body.id;
    // One call settled through the openai SDK, one the upstream fails (released).
    const client = new OpenAI({ apiKey: issued.body.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await client.chat.completions.create(FIXED_CALL);
    const failed = await gw.api(issued.body.key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'no [sim:status=400]' }] });
    expect(failed.status).to.equal(400);
    await expectSettledAndAuditClean(gw, [issued.body.key]);
    operator = await watchedPage(browser);
    await operator.page.setViewportSize({ width: 1280, height: 900 });
  });
  after(async () => {
    await closeContexts(browser);
    await gw?.close();
  });

  it('shows the call made through the openai SDK with its key name, channel and amount; refused requests are said to be absent', async () => {
    const { page } = operator;
    await page.goto(`${gw.url}/dashboard`);
    await page.getByLabel('API key or admin token').fill(TEST_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await nav(page, 'Request log');
    const settled = page.locator('[data-testid=requests-table] tbody tr[data-outcome=settled]');
    await settled.waitFor();
    const cells = await settled.locator('td').allTextContents();
    expect(cells[1]).to.equal(accountName);
    expect(cells[2]).to.equal(`${keyName}${keyId}`);
    expect(cells.slice(3, 6)).to.deep.equal(['chat-fast', 'POST /v1/chat/completions', 'default']);
    expect(cells[6]).to.match(/^\d+ input tokens · 5 output tokens$/);
    expect(cells[7]).to.equal(shown(FIXED_CHARGE));
    expect(cells[8]).to.equal('settled');
    expect(await page.locator('[data-testid=requests-table] thead th').first().textContent()).to.equal('Time (UTC)');
    const released = page.locator('[data-testid=requests-table] tbody tr[data-outcome=released]');
    expect(await released.locator('td').nth(7).textContent()).to.equal('—');
    await page.getByText('Requests refused before they reserved anything (invalid input, insufficient balance, rate limits) are not listed.', { exact: false }).waitFor();
    await page.waitForLoadState('networkidle');
    await expectAccessible(page, 'the request log');
  });

  it('keeps a filter through a reload, and downloads byte for byte the CSV the API answers', async () => {
    const { page } = operator;
    await page.getByLabel('Outcome').selectOption('released');
    await page.getByLabel('Model').fill('chat-fast');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/outcome=released/);
    await page.locator('[data-testid=requests-table] tbody tr[data-outcome=settled]').waitFor({ state: 'detached' });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Request log' }).waitFor();
    await page.locator('[data-testid=requests-table] tbody tr[data-outcome=released]').waitFor();
    expect(await page.getByLabel('Outcome').inputValue()).to.equal('released');
    expect(await page.getByLabel('Model').inputValue()).to.equal('chat-fast');
    expect(await page.locator('[data-testid=requests-table] tbody tr').count()).to.equal(1);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    const downloaded = readFileSync((await download.path())!);
    const res = await fetch(`${gw.url}/admin/v1/requests?format=csv&model=chat-fast&outcome=released`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    const answered = Buffer.from(await res.arrayBuffer());
    expect(downloaded.equals(answered), `${downloaded.toString('utf8')}\n≠\n${answered.toString('utf8')}`).to.equal(true);
    expect(answered.toString('utf8').split('\r\n').filter((l) => l !== '')).to.have.length(2);
    expect(download.suggestedFilename()).to.equal('requests.csv');
  });

  it('finds a key by its name on the All keys page, linking to its account', async () => {
    const { page } = operator;
    await nav(page, 'All keys');
    await page.getByLabel('Name, prefix or key id').fill('E2E SDK');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=E2E/);
    const rows = page.locator('[data-testid=all-keys-table] tbody tr');
    await rows.filter({ hasText: keyName }).waitFor();
    expect(await rows.count()).to.equal(1);
    const cells = await rows.first().locator('td').allTextContents();
    expect(cells.slice(0, 3)).to.deep.equal([accountName, keyName, keyId]);
    expect(cells[4]).to.equal('active');
    expect(cells[5]).to.equal(shown(FIXED_CHARGE));
    expect(await page.locator('main').textContent()).to.not.match(/tr-[A-Za-z0-9_-]{20,}/);
    await page.waitForLoadState('networkidle');
    await expectAccessible(page, 'the All keys page');
    await rows.first().getByRole('link', { name: accountName }).click();
    await page.getByRole('heading', { level: 1, name: accountName }).waitFor();
  });

  it('reads in Chinese, and at 390×844 the tables scroll inside their cards with no sideways page scroll', async () => {
    const { page } = operator;
    await page.goto(`${gw.url}/dashboard/requests`);
    await page.getByRole('heading', { level: 1, name: 'Request log' }).waitFor();
    await page.getByLabel('Language').selectOption('zh');
    await page.getByRole('heading', { level: 1, name: '请求日志' }).waitFor();
    await page.locator('[data-testid=requests-table] tbody tr[data-outcome=settled]').getByText('已结算').waitFor();
    expect(await page.locator('[data-testid=requests-table] thead th').first().textContent()).to.equal('时间（UTC）');
    await expectAccessible(page, 'the request log in Chinese');

    await page.setViewportSize({ width: 390, height: 844 });
    // Filters in the address that are none (a day written 05/12/2026, an unknown outcome or status) are dropped, not
    // sent for the API's 400; the "to" day is included: the calls were made on it.
    // axe: the request log in Chinese was scanned above; the All keys page is scanned here.
    const callDay = ((await gw.admin('GET', '/admin/v1/requests?limit=1')).body.data[0].reserved_at as string).slice(0, 10);
    for (const [path, heading, table, filters, scan] of [
      [`/requests?from=05%2F12%2F2026&outcome=x&to=${callDay}`, '请求日志', 'requests-table', { from: '', outcome: '', to: callDay }, false],
      ['/all-keys?status=bogus', '全部密钥', 'all-keys-table', { status: '' }, true],
    ] as const) {
      await page.goto(`${gw.url}/dashboard${path}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await page.locator(`[data-testid=${table}] tbody tr:not(:has(td[colspan]))`).first().waitFor();
      for (const [name, value] of Object.entries(filters)) expect(await page.locator(`[name=${name}]`).inputValue(), name).to.equal(value);
      expect(await pageOverflows(page), `${path} at 390 px`).to.equal(false);
      const wrap = page.locator('.table-wrap', { has: page.getByTestId(table) });
      expect(await wrap.evaluate((el) => el.scrollWidth > el.clientWidth), `${path}: the table scrolls inside its card`).to.equal(true);
      if (scan) {
        await page.waitForLoadState('networkidle');
        await expectAccessible(page, `${path} at 390 px in Chinese`);
      }
    }
    await page.getByLabel('语言').selectOption('en');
    expect(operator.consoleErrors).to.deep.equal([]);
  });
});
