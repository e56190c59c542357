import { expect } from 'chai';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { FIXED_CALL, FIXED_CHARGE } from '../support/fixed-chat';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';
import { closeContexts, expectAccessible, expectNoHorizontalOverflow, followNav, requireWebBuild, sharedBrowser, shown, watchedPage, type WatchedPage } from './browser';

interface Entry {
  readonly type: string;
  readonly key_id: string | null;
  readonly reservation_id: string | null;
  readonly created_at: string;
  readonly pricing: { lines: { units: Record<string, number>; unit_prices: Record<string, number>; per: number }[] } | null;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');
/** An instant on a Shanghai clock (UTC+8 all year), as the test expects the dashboard to write it in each language. */
function shanghai(iso: string): { en: string; zh: string; day: string } {
  const d = new Date(new Date(iso).getTime() + 8 * 3_600_000);
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  return {
    en: `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${time}`,
    zh: `${d.getUTCFullYear()}年${d.getUTCMonth() + 1}月${d.getUTCDate()}日 ${time}`,
    day: `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`,
  };
}

/**
 * The ledger as a daily tool: keys by name, one line per call with its signed charge and its
 * units and prices, both entries a click away, filters that keep, dates in one format per language
 * in the account's zone (named on the page), at 1280 px and on a phone; and the operator's view of
 * the same account.
 */
describe('the dashboard\'s ledger and usage in Chromium: names, one line a charge, dates @e2e', function () {
  this.timeout(180_000);
  let gw: TestGateway;
  let browser: Browser;
  let account: { accountId: string; key: string; keyId: string };
  let owner: WatchedPage;
  let named: { id: string; prefix: string };
  let unnamedPrefix: string;
  let charge: Entry;
  const watched: WatchedPage[] = [];

  before(async () => {
    requireWebBuild();
    browser = await sharedBrowser();
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    account = await gw.fundedAccount(10_000_000);
    const created = await gw.api(account.key, 'POST', '/v1/account/keys', { name: 'reports bot' });
    expect(created.status).to.equal(201);
    named = { id: created.body.id as string, prefix: created.body.prefix as string };
    // One call with the named key, one with the (unnamed) key the account was opened with.
    await new OpenAI({ apiKey: created.body.key as string, baseURL: `${gw.url}/v1`, maxRetries: 0 }).chat.completions.create(FIXED_CALL);
    await new OpenAI({ apiKey: account.key, baseURL: `${gw.url}/v1`, maxRetries: 0 }).chat.completions.create(FIXED_CALL);
    const keys = (await gw.api(account.key, 'GET', '/v1/account/keys')).body.data as { id: string; prefix: string }[];
    unnamedPrefix = keys.find((k) => k.id === account.keyId)!.prefix;
    charge = await waitFor('both settlements in the ledger', async () => {
      const entries = (await gw.api(account.key, 'GET', '/v1/account/ledger?type=settlement')).body.data as Entry[];
      return entries.length === 2 ? entries.find((e) => e.key_id === named.id) : null;
    });
    owner = await watchedPage(browser);
    watched.push(owner);
  });
  after(async () => {
    await closeContexts(browser);
    await gw?.close();
  });

  const signIn = async (page: Page, secret: string, heading: string) => {
    await page.goto(`${gw.url}/dashboard`);
    await page.getByLabel('API key or admin token').fill(secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };
  const line = (page: Page, reservationId: string) => page.locator(`[data-testid=ledger-table] > tbody > tr[data-reservation-id="${reservationId}"]`);

  it('shows a call as one line: the key\'s name, a signed charge, its units and unit prices; it opens onto both entries', async () => {
    const { page } = owner;
    await signIn(page, account.key, 'Overview');
    await followNav(page, 'Ledger');
    await page.getByRole('heading', { level: 1, name: 'Ledger' }).waitFor();
    expect(await page.getByTestId('zone-note').first().textContent()).to.equal('Times and days in Asia/Shanghai');

    const call = line(page, charge.reservation_id!);
    await call.getByText('reports bot').waitFor();
    expect(await call.count(), 'the reservation and its settlement are one line').to.equal(1);
    expect(await call.getAttribute('data-kind')).to.equal('charge');
    const cells = await call.locator('> td').allTextContents();
    const [pricing] = charge.pricing!.lines;
    expect(pricing!.per).to.equal(1_000_000);
    const units = Object.keys(pricing!.units);
    expect(units).to.have.members(['input_tokens', 'output_tokens']);
    expect(cells.slice(0, 3)).to.deep.equal(['▸ Charge', shanghai(charge.created_at).en, `\u2212${shown(FIXED_CHARGE)}`]);
    expect(cells[6]).to.equal(
      `${pricing!.units.input_tokens} input tokens × ${shown(pricing!.unit_prices.input_tokens!)}/M + ${pricing!.units.output_tokens} output tokens × ${shown(pricing!.unit_prices.output_tokens!)}/M`,
    );
    // The account's own key has no name: it reads by its prefix, never as a dash.
    const other = page.locator('[data-testid=ledger-table] > tbody > tr[data-kind=charge]').filter({ hasNotText: 'reports bot' });
    expect(await other.locator('td.key .key-label').textContent()).to.equal(`Unnamed key · ${unnamedPrefix}…`);
    // The credit is money in.
    expect(await page.locator('[data-testid=ledger-table] > tbody > tr[data-kind=credit] td.num').first().textContent()).to.equal('+¥10.00');

    // The key's id is one click away.
    await call.getByRole('button', { name: 'Show the id of reports bot' }).click();
    expect(await call.getByTestId('full-id').textContent()).to.equal(named.id);

    await call.getByRole('button', { name: /Charge/ }).click();
    const entries = page.getByTestId('line-entries').locator('tbody tr');
    await entries.first().waitFor();
    expect(await entries.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-type')))).to.deep.equal(['reservation', 'settlement']);
    expect(await entries.nth(0).textContent()).to.include('held');
    expect(await entries.nth(1).textContent()).to.include(`\u2212${shown(FIXED_CHARGE)}`).and.include(charge.reservation_id!);
    expect(await call.getByRole('button', { name: /Charge/ }).getAttribute('aria-expanded')).to.equal('true');

    await expectNoHorizontalOverflow(page, 'the ledger at 1280 px');
    await expectAccessible(page, 'the ledger with a line opened');
  });

  it('filters by a key picked by name and by days in the account\'s zone, and keeps the filters over a reload', async () => {
    const { page } = owner;
    const today = shanghai(new Date().toISOString()).day;
    await page.locator('select[name=key]').selectOption({ label: 'reports bot' });
    await page.getByLabel('From day').fill(today);
    await page.getByLabel('To day (included)').fill(today);
    await page.getByRole('button', { name: 'Apply' }).click();
    const rows = page.locator('[data-testid=ledger-table] > tbody > tr[data-kind]');
    await waitFor('the filtered ledger', async () => (await rows.count()) === 1 && (await rows.first().getAttribute('data-kind')) === 'charge');
    expect(new URL(page.url()).searchParams.get('key')).to.equal(named.id);

    await page.reload();
    await line(page, charge.reservation_id!).getByText('reports bot').waitFor();
    expect(await rows.count()).to.equal(1);
    expect(await page.locator('select[name=key]').inputValue()).to.equal(named.id);
    expect(await page.getByLabel('From day').inputValue()).to.equal(today);

    // The day after today (in Shanghai) holds nothing yet.
    await page.getByLabel('From day').fill(new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10));
    await page.getByLabel('To day (included)').fill('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('[data-testid=ledger-table] > tbody > tr', { hasText: 'No entries.' }).waitFor();
  });

  it('names keys in usage, its table and its chart\'s legend, with human column headers', async () => {
    const { page } = owner;
    await page.goto(`${gw.url}/dashboard/usage?group=key`);
    await page.getByRole('heading', { level: 2, name: 'Usage by key' }).waitFor();
    const table = page.getByTestId('usage-table');
    await table.getByText('reports bot').waitFor();
    expect(await table.locator('thead th').allTextContents()).to.deep.equal(['Key', 'Requests', 'Charged', 'Refunded', 'Amount', 'Units']);
    expect(await table.locator('tbody tr', { hasText: 'Unnamed key' }).count()).to.equal(1);
    expect(await page.locator('.recharts-legend-item-text').allTextContents()).to.deep.equal(['Amount']);
    expect(await page.locator('.recharts-cartesian-axis-tick-value').allTextContents()).to.include('reports bot');
    expect(await page.getByTestId('zone-note').textContent()).to.equal('Times and days in Asia/Shanghai');
    await page.waitForLoadState('networkidle');
    await expectAccessible(page, 'usage by key');
  });

  it('writes dates the Chinese way in Chinese, and fits a 390 px phone', async () => {
    const { page } = owner;
    await page.getByLabel('Language').selectOption('zh');
    await page.getByRole('heading', { level: 2, name: '按密钥统计用量' }).waitFor();
    expect(await page.getByTestId('usage-table').locator('thead th').first().textContent()).to.equal('密钥');
    // A phone opens the page at its own width.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByTestId('usage-table').getByText('reports bot').waitFor();
    await expectNoHorizontalOverflow(page, 'usage at 390 px');
    await expectAccessible(page, 'usage in Chinese at 390 px');

    await page.goto(`${gw.url}/dashboard/ledger?key=${named.id}`);
    const call = line(page, charge.reservation_id!);
    await call.getByText('reports bot').waitFor();
    expect(await call.locator('td.time').textContent()).to.equal(shanghai(charge.created_at).zh);
    expect(await page.getByTestId('zone-note').first().textContent()).to.equal('时间与日期均按 Asia/Shanghai 时区');
    expect(await call.locator('td.pricing').textContent()).to.include('输入 token');
    await expectNoHorizontalOverflow(page, 'the ledger at 390 px');
    await expectAccessible(page, 'the ledger in Chinese at 390 px');
    await page.getByLabel('语言').selectOption('en');
    await page.setViewportSize({ width: 1280, height: 720 });
    expect(owner.consoleErrors).to.deep.equal([]);
  });

  it('names the keys in the operator\'s view of the account\'s ledger, with Refund in view at 1280 px', async () => {
    const operator = await watchedPage(browser);
    watched.push(operator);
    const { page } = operator;
    await signIn(page, TEST_ADMIN_TOKEN, 'Accounts');
    await page.goto(`${gw.url}/dashboard/accounts/${account.accountId}`);
    const call = line(page, charge.reservation_id!);
    await call.getByText('reports bot').waitFor();
    expect(await call.locator('td.time').textContent()).to.equal(shanghai(charge.created_at).en);
    const refund = call.getByRole('button', { name: 'Refund' });
    const box = (await refund.boundingBox())!;
    expect(box.x + box.width, 'the Refund button\'s right edge').to.be.at.most(1280);
    expect(await page.locator('.table-wrap:has([data-testid=ledger-table])').evaluate((wrap) => wrap.scrollWidth <= wrap.clientWidth), 'the ledger fits its card').to.equal(true);
    await expectNoHorizontalOverflow(page, 'the operator\'s account page at 1280 px');
    // axe: the operator's account page is scanned in dashboard.test.ts, in both languages.
    expect(operator.consoleErrors).to.deep.equal([]);
  });
});
