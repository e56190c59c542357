import { expect } from 'chai';
import OpenAI, { APIError } from 'openai';
import type { Browser, Page } from 'playwright-core';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { FIXED_CALL, FIXED_CHARGE } from '../support/fixed-chat';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';
import { closeContexts, expectAccessible, expectNoHorizontalOverflow, nav, requireWebBuild, sharedBrowser, shown, watchedPage, type WatchedPage } from './browser';

/** The new credentials the test rotates in: never to be found in a page. */
const ROTATED_KEY = 'sk-e2e-rotated-0123456789abcdefghijklmnop';

/**
 * The operator's revenue, catalog and channels pages in Chromium (docs/dashboard.md): a charge made
 * through the openai SDK under its account's name and its channel, prices in yuan with their units,
 * and a channel's health, test, disable, enable and credential rotation, in English and Chinese, at
 * 1280 px and 390×844.
 */
describe('the dashboard in Chromium: the operator’s revenue, catalog and channels pages @e2e', function () {
  this.timeout(180_000);
  let simulator: RunningSimulator;
  let gw: TestGateway;
  let browser: Browser;
  let operator: WatchedPage;
  let account: { accountId: string; key: string; keyId: string };
  const ACCOUNT_NAME = 'Acme Studio 艺';

  before(async () => {
    requireWebBuild();
    simulator = await startSimulator();
    // The simulator's channels recorded in the log, so that the channels API manages them.
    const channels = channelsServedBy(simulator.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 16 });
    [browser, gw] = await Promise.all([sharedBrowser(), startTestGateway({ CHANNELS: JSON.stringify(channels), RATE_LIMIT_PER_MINUTE: '100000' })]);
    const opened = await gw.admin('POST', '/admin/v1/accounts', { name: ACCOUNT_NAME });
    expect(opened.status).to.equal(201);
    expect((await gw.admin('POST', `/admin/v1/accounts/${opened.body.id}/credits`, { amount: 10_000_000, reference: 'e2e-operator' })).status).to.equal(201);
    const key = await gw.admin('POST', `/admin/v1/accounts/${opened.body.id}/keys`, {});
    account = { accountId: opened.body.id as string, key: key.body.key as string, keyId: key.body.id as string };
    operator = await watchedPage(browser);
  });
  after(async () => {
    await closeContexts(browser);
    await gw?.close();
    await simulator?.close();
  });

  const client = () => new OpenAI({ apiKey: account.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const cellTexts = (row: ReturnType<Page['locator']>) => row.locator('th, td').allTextContents();

  it('shows a charge made through the openai SDK under its account’s name and its channel, with the API’s totals', async () => {
    const completion = await client().chat.completions.create(FIXED_CALL);
    expect(completion.choices[0]!.message.content).to.be.a('string');

    const { page } = operator;
    await page.goto(`${gw.url}/dashboard`);
    await page.getByLabel('API key or admin token').fill(TEST_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await nav(page, 'Revenue & usage');

    await page.getByLabel('Group by').selectOption('account_id');
    const accountRow = page.locator(`[data-testid=revenue-table] tbody tr[data-group="${account.accountId}"]`);
    await accountRow.waitFor();
    const cells = await cellTexts(accountRow);
    expect(cells[0]).to.include(ACCOUNT_NAME);
    expect(cells.slice(1, 5)).to.deep.equal(['1', shown(FIXED_CHARGE), shown(0), shown(FIXED_CHARGE)]);
    expect(cells[5]).to.match(/^\d+ input tokens · 5 output tokens$/);
    // The table's header names the group in words, not the API's field.
    expect(await page.locator('[data-testid=revenue-table] thead th').allTextContents()).to.deep.equal(['Account', 'Requests', 'Charged', 'Refunded', 'Amount', 'Units']);
    await expectAccessible(page, 'the revenue page by account');

    await page.getByLabel('Group by').selectOption('channel');
    const channelRow = page.locator('[data-testid=revenue-table] tbody tr[data-group="default"]');
    await channelRow.waitFor();
    expect((await cellTexts(channelRow))[0]).to.equal('default');

    // The totals are the API's for the very query the page made.
    const query = (await page.getByTestId('revenue-table').getAttribute('data-query'))!;
    expect(query).to.match(/^\/admin\/v1\/usage\?group_by=channel&from=.+&to=.+$/);
    const api = (await gw.admin('GET', query)).body as { total: { requests: number; charged: number; refunded: number; amount: number } };
    expect(api.total.requests).to.equal(1);
    const total = await cellTexts(page.getByTestId('revenue-total'));
    expect(total.slice(0, 5)).to.deep.equal(['Total', String(api.total.requests), shown(api.total.charged), shown(api.total.refunded), shown(api.total.amount)]);
    expect(operator.consoleErrors).to.deep.equal([]);
  });

  it('shows the catalog with each model’s prices in yuan, their units, and its channels', async () => {
    const { page } = operator;
    await nav(page, 'Operations');
    const chat = page.locator('[data-testid=catalog-table] tbody tr[data-model="chat-fast"]');
    await chat.waitFor();
    const text = (await chat.textContent())!;
    expect(text).to.include('¥1.00 per 1M input tokens');
    expect(text).to.include('¥4.00 per 1M output tokens');
    expect(text).to.include('¥0.25 per 1M cached input tokens');
    expect(text).to.include('default');
    expect(await page.locator('[data-testid=catalog-table] tbody tr[data-model="image-5.0"]').textContent()).to.include('¥0.20 per image');
    expect(await page.locator('[data-testid=catalog-table] tbody tr[data-model="video-2.5"]').textContent()).to.include('¥0.25 per second at 720p');
    // axe: the operations page, its catalog included, is scanned in dashboard.test.ts (English) and below (Chinese).
    expect(operator.consoleErrors).to.deep.equal([]);
  });

  it('shows a channel’s health and recent calls, tests it, disables it with a reason (its model then fails as documented) and enables it again', async () => {
    const { page } = operator;
    await nav(page, 'Channels');
    const row = page.locator('[data-testid=channels-table] tbody tr[data-channel="default"]');
    await row.waitFor();
    expect(await row.getByTestId('channel-health').getAttribute('data-state')).to.equal('closed');
    expect(await row.getByTestId('channel-health').textContent()).to.equal('Healthy (circuit closed)');
    const cells = await cellTexts(row);
    // The SDK's call above went through this process: one call, no error.
    expect(cells[3]).to.equal('1');
    expect(cells[4]).to.equal('0%');
    expect(cells[5]).to.match(/^\d+ \/ \d+ ms$/);
    expect(cells[6]).to.include('chat-fast');
    await expectAccessible(page, 'the channels page');

    await row.getByRole('button', { name: 'default' }).click();
    const panel = page.getByRole('region', { name: 'Channel default' });
    await panel.getByRole('button', { name: 'Test the channel' }).click();
    const tested = panel.getByTestId('channel-test');
    await tested.waitFor();
    expect(await tested.textContent()).to.match(/^Outcome: \S.* · \d+ ms/);
    const probe = (await gw.admin('POST', '/admin/v1/channels/default/test')).body as { outcome: string };
    expect(await tested.getAttribute('data-outcome')).to.equal(probe.outcome);
    await expectAccessible(page, 'the channel panel');

    await panel.getByLabel('Reason (recorded in the history)').fill('provider maintenance');
    await panel.getByRole('button', { name: 'Disable' }).click();
    await row.locator('[data-testid=channel-health][data-state=disabled]').waitFor();
    expect(await row.getByTestId('channel-health').textContent()).to.equal('Disabledprovider maintenance');
    await panel.locator('[data-testid=channel-history] tbody tr[data-type=ChannelDisabled]', { hasText: 'reason: provider maintenance' }).waitFor();
    // chat-fast's only channel is disabled: 502 upstream_unavailable, before anything is reserved (docs/operations.md).
    const refused = await client().chat.completions.create(FIXED_CALL).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).to.be.instanceOf(APIError);
    expect((refused as APIError).status).to.equal(502);
    expect((refused as APIError).code).to.equal('upstream_unavailable');

    await panel.getByRole('button', { name: 'Enable' }).click();
    await row.locator('[data-testid=channel-health][data-state=closed]').waitFor();
    await panel.locator('[data-testid=channel-history] tbody tr[data-type=ChannelEnabled]').waitFor();
    const served = await client().chat.completions.create(FIXED_CALL);
    expect(served.choices[0]!.message.content).to.be.a('string');
    expect(operator.consoleErrors).to.deep.equal([]);
  });

  it('rotates the channel’s credentials (the history lists the change, no page holds the credential) and shows why it cannot be deleted', async () => {
    const { page } = operator;
    const panel = page.getByRole('region', { name: 'Channel default' });
    const form = panel.getByTestId('rotate-credentials');
    await form.getByLabel('New API key').fill(ROTATED_KEY);
    await form.getByRole('button', { name: 'Rotate' }).click();
    await panel.getByText('Credentials rotated.').waitFor();
    expect(await form.getByLabel('New API key').inputValue()).to.equal('');
    const entry = panel.locator('[data-testid=channel-history] tbody tr[data-type=ChannelCredentialsRotated]');
    await entry.waitFor();
    const cells = await cellTexts(entry);
    expect(cells.slice(1)).to.deep.equal(['Credentials rotated', 'admin-token', 'auth_kind: bearer; credentials: rotated']);
    // The panel, the table and the history as they stand after the rotation, reloaded from the API.
    await page.getByRole('region', { name: 'All channels' }).getByRole('button', { name: 'Refresh' }).click();
    await page.locator('[data-testid=channels-table] tbody tr[data-channel="default"] [data-testid=channel-health][data-state=closed]').waitFor();
    expect(await page.content()).to.not.include(ROTATED_KEY);

    // A channel the catalog names is not deleted: the page shows the API's 409 and its reasons.
    await panel.getByRole('button', { name: 'Delete the channel' }).click();
    await panel.getByRole('button', { name: 'Delete channel default for good' }).click();
    const refusal = panel.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).to.match(/serves catalog models chat-fast, chat-pro, image-tokens.*\(channel_in_use\)$/);
    expect((await gw.admin('GET', '/admin/v1/channels/default')).status).to.equal(200);
    // Chromium logs the refused DELETE itself (the 409 the page shows): that line, and no other.
    expect(operator.consoleErrors.splice(0)).to.deep.equal([`${gw.url}/dashboard/channels: Failed to load resource: the server responded with a status of 409 (Conflict)`]);
  });

  it('reads in Chinese, and fits 390×844 with only the tables scrolling', async () => {
    const { page } = operator;
    await page.getByLabel('Language').selectOption('zh');
    await page.getByRole('heading', { level: 1, name: '通道' }).waitFor();
    expect(await page.locator('[data-testid=channels-table] thead th').allTextContents()).to.deep.equal(['通道', '协议', '健康状态', '调用数', '错误率', '延迟（平均 / 最大）', '模型']);
    await expectAccessible(page, 'the channels page in Chinese');
    await nav(page, '收入与用量');
    await page.getByLabel('分组').selectOption('account_id');
    await page.locator(`[data-testid=revenue-table] tbody tr[data-group="${account.accountId}"]`, { hasText: ACCOUNT_NAME }).waitFor();
    expect(await page.locator('[data-testid=revenue-table] thead th').allTextContents()).to.deep.equal(['账户', '请求数', '已扣费', '已退款', '金额', '计量单位']);
    expect(await page.locator(`[data-testid=revenue-table] tbody tr[data-group="${account.accountId}"] td`).last().textContent()).to.match(/^\d+ 输入 token · 10 输出 token$/);
    await expectAccessible(page, 'the revenue page in Chinese');
    await nav(page, '运维');
    expect(await page.locator('[data-testid=catalog-table] tbody tr[data-model="chat-fast"]').textContent()).to.include('¥1.00 / 百万输入 token');
    await expectAccessible(page, 'the operations page in Chinese');

    // axe scanned these pages' markup above; a phone's width changes only the CSS, whose layout the overflow checks cover.
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoHorizontalOverflow(page, 'the operations page at 390 px');
    await nav(page, '通道');
    await page.locator('[data-testid=channels-table] tbody tr[data-channel="default"]').getByRole('button', { name: 'default' }).click();
    await page.getByTestId('channel-history').waitFor();
    await expectNoHorizontalOverflow(page, 'the channels page at 390 px');
    await page.getByLabel('语言').selectOption('en');
    await nav(page, 'Revenue & usage');
    await page.getByTestId('revenue-table').waitFor();
    await expectNoHorizontalOverflow(page, 'the revenue page at 390 px');
    expect(operator.consoleErrors).to.deep.equal([]);
  });
});
