import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { signedYuanText, yuanText } from '../../web/src/format';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';
import { closeContexts, expectAccessible, nav, requireWebBuild, sharedBrowser, watchedPage, type WatchedPage } from './browser';

/** Whether the page is wider than its viewport (a horizontal scroll of the whole page). */
async function overflowsHorizontally(page: Page): Promise<boolean> {
  return Boolean(await page.evaluate('document.documentElement.scrollWidth > window.innerWidth'));
}

/** The owner's tools in Chromium: editing and regenerating keys, the playground, the task list. */
describe('the dashboard in Chromium: the owner’s tools @e2e', function () {
  this.timeout(180_000);
  let gw: TestGateway;
  let browser: Browser;
  let owner: WatchedPage;
  let account: { accountId: string; key: string; keyId: string };
  let ci: { id: string; key: string };
  const failedTasks: string[] = [];
  let refundedTask = '';

  before(async () => {
    requireWebBuild();
    browser = await sharedBrowser();
    gw = await startTestGateway({ TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000' });
    account = await gw.fundedAccount(10_000_000);
    const issued = await gw.admin('POST', `/admin/v1/accounts/${account.accountId}/keys`, { name: 'ci', allowed_models: ['chat-fast', 'image-4.0'], budget: { amount: 5_000_000, period: 'month' }, expires_at: '2030-06-01T00:00:30+08:00' });
    ci = { id: issued.body.id, key: issued.body.key };

    // A task that succeeds and whose charge is refunded, then 21 that fail at once: two pages and a bit.
    const done = await gw.api(account.key, 'POST', '/v1/images/async', { model: 'image-4.0', prompt: 'a kept image [sim:count=1]' });
    refundedTask = done.body.id;
    const settled = await waitFor('the kept image billed', async () => {
      const settlement = ((await gw.api(account.key, 'GET', '/v1/account/ledger?type=settlement&limit=100')).body.data as { task_id: string | null; reservation_id: string; amount: number }[]).find((e) => e.task_id === refundedTask);
      return settlement ?? null;
    });
    const refund = await gw.admin('POST', `/admin/v1/accounts/${account.accountId}/refunds`, { reservation_id: settled.reservation_id, amount: settled.amount, reference: 'e2e-refund', reason: 'goodwill' });
    expect(refund.status).to.equal(201);
    for (let i = 0; i < 21; i++) {
      const failed = await gw.api(account.key, 'POST', '/v1/images/async', { model: 'image-4.0', prompt: `unlucky ${i} [sim:refuse=0]` });
      expect(failed.status, JSON.stringify(failed.body)).to.equal(200);
      failedTasks.push(failed.body.id);
    }
    await waitFor('every task failed', async () => {
      const list = (await gw.api(account.key, 'GET', '/v1/tasks?kind=image&status=failed&limit=100')).body.data as unknown[];
      return list.length === 21;
    });

    owner = await watchedPage(browser);
    await owner.page.setViewportSize({ width: 1280, height: 800 });
  });
  after(async () => {
    await closeContexts(browser);
    await gw?.close();
  });

  it('marks the session’s key, edits a key and shows the change', async () => {
    const { page } = owner;
    await page.goto(`${gw.url}/dashboard`);
    await page.getByLabel('API key or admin token').fill(account.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await nav(page, 'Keys');
    const mine = page.locator(`tr[data-key-id="${account.keyId}"]`);
    await mine.getByText('this session').waitFor();
    expect(await page.getByText('this session').count()).to.equal(1);
    // The session's own key is not regenerated from its session.
    expect(await mine.getByRole('button', { name: /^Regenerate/ }).count()).to.equal(0);

    await page.getByRole('button', { name: 'Edit key ci' }).click();
    const form = page.getByTestId('edit-key');
    expect(await form.getByLabel('Budget (yuan)').inputValue()).to.equal('5.00');
    // The expiry is edited on the account's clock (Asia/Shanghai), the zone named, whatever the browser's.
    expect(await form.getByLabel('Expires (Asia/Shanghai)').inputValue()).to.equal('2030-06-01T00:00');
    await form.getByLabel('Requests per minute').fill('7');
    await form.getByLabel('Budget (yuan)').fill('4.5');
    await form.getByRole('button', { name: 'Save changes' }).click();
    const row = page.locator(`tr[data-key-id="${ci.id}"]`);
    await waitFor('the changed key shown', async () => (await row.textContent())?.includes('¥4.50'));
    expect(await row.locator('td').nth(5).textContent()).to.equal('7');
    const [key] = ((await gw.api(account.key, 'GET', '/v1/account/keys')).body.data as { id: string; rate_limit_per_minute: number; budget: { amount: number }; expires_at: string }[]).filter((k) => k.id === ci.id);
    // The expiry, not edited, was not sent back: it keeps its seconds.
    expect([key!.rate_limit_per_minute, key!.budget.amount, key!.expires_at]).to.deep.equal([7, 4_500_000, '2030-05-31T16:00:30.000Z']);
    await expectAccessible(page, 'the keys page while editing');
  });

  it('regenerates a key: the new secret shown once, the old one refused by /v1', async () => {
    const { page } = owner;
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Regenerate key ci' }).click();
    const shown = page.getByTestId('regenerated-key');
    await shown.waitFor();
    const fresh = (await shown.textContent())!;
    expect(fresh).to.match(/^tr-/);
    expect(fresh).to.not.equal(ci.key);
    const old = await gw.api(ci.key, 'GET', '/v1/account');
    expect([old.status, old.body.error.code]).to.deep.equal([401, 'invalid_api_key']);
    expect((await gw.api(fresh, 'GET', '/v1/account')).status).to.equal(200);
    // Same key: the row is still ci's, with its changed limits.
    await waitFor('the new prefix in the row', async () => (await page.locator(`tr[data-key-id="${ci.id}"]`).textContent())?.includes(fresh.slice(0, 9)));
    ci = { id: ci.id, key: fresh };
    // Shown once: gone when the page is visited again.
    await nav(page, 'Overview');
    await nav(page, 'Keys');
    await page.locator(`tr[data-key-id="${ci.id}"]`).waitFor();
    expect(await page.getByTestId('regenerated-key').count()).to.equal(0);
  });

  it('runs a chat in the playground with the chosen key: the answer, its usage and its charge in the ledger entries shown', async () => {
    const { page } = owner;
    await nav(page, 'Playground');
    await page.getByLabel('Key').selectOption({ label: 'ci' });
    await page.getByLabel('Kind').selectOption('chat');
    // Only the models the chosen key may use.
    expect(await page.getByLabel('Model').locator('option').allTextContents()).to.deep.equal(['chat-fast']);
    await page.getByLabel('Prompt').fill('Say hello [sim:tokens=5]');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.getByTestId('playground-answer');
    await answer.waitFor();
    expect((await answer.textContent())!.trim()).to.not.equal('');
    const usage = (await page.getByTestId('playground-usage').textContent())!;
    expect(usage).to.include('total tokens');

    const ledger = (await gw.api(account.key, 'GET', `/v1/account/ledger?key_id=${ci.id}`)).body.data as { type: string; amount: number; request_id: string }[];
    const settlement = ledger.find((e) => e.type === 'settlement')!;
    const reservation = ledger.find((e) => e.type === 'reservation')!;
    // As the ledger reads them: the call's reservation and settlement are one charge, signed, opening onto both, the hold as a hold.
    const rows = page.getByTestId('playground-ledger').locator(':scope > tbody > tr[data-kind]');
    expect(await rows.count()).to.equal(1);
    expect(await rows.first().getAttribute('data-kind')).to.equal('charge');
    expect(await rows.first().locator('td').nth(2).textContent()).to.equal(signedYuanText(-settlement.amount));
    await rows.first().getByRole('button', { name: 'Charge' }).click();
    const entries = page.getByTestId('line-entries').locator('tbody tr');
    expect(await entries.count()).to.equal(2);
    expect([await entries.nth(0).getAttribute('data-type'), await entries.nth(0).locator('td').nth(3).textContent()]).to.deep.equal(['reservation', `${yuanText(reservation.amount)} held`]);
    expect([await entries.nth(1).getAttribute('data-type'), await entries.nth(1).locator('td').nth(3).textContent()]).to.deep.equal(['settlement', signedYuanText(-settlement.amount)]);
    expect(await page.locator('main').textContent()).to.include(settlement.request_id);
    // The secret never reached the page.
    expect(await page.content()).to.not.include(ci.key);
    await expectAccessible(page, 'the playground with an answer');
  });

  it('shows a failed task’s reason, a refunded cost as refunded, and pages the list', async () => {
    const { page } = owner;
    await nav(page, 'Tasks');
    const rows = page.getByTestId('tasks-table').locator('tbody > tr[data-task-id]');
    await waitFor('the first page', async () => (await rows.count()) === 20);
    const newest = page.locator(`tr[data-task-id="${failedTasks[20]}"]`);
    const reason = (await newest.getByTestId('task-failure').textContent())!;
    const api = ((await gw.api(account.key, 'GET', '/v1/tasks?limit=1')).body.data as { error: { code: string; message: string } }[])[0]!.error;
    expect(reason).to.include(api.code);
    expect(reason).to.include(api.message);
    await page.getByRole('button', { name: 'Load more' }).click();
    await waitFor('the second page', async () => (await rows.count()) === 22);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).to.equal(0);
    const refunded = page.locator(`tr[data-task-id="${refundedTask}"]`);
    expect(await refunded.getByTestId('task-cost').textContent()).to.include('refunded');
    expect(await refunded.locator('s').count()).to.equal(1);
    await expectAccessible(page, 'the tasks page');
  });

  it('fits 390 × 844 without a page-wide scroll: tasks as cards, the playground', async () => {
    const { page } = owner;
    // axe scanned these pages' markup above; a phone's width changes only the CSS, whose layout the overflow checks cover.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Tasks' }).waitFor();
    const first = page.getByTestId('tasks-table').locator('tbody > tr[data-task-id]').first();
    await first.waitFor();
    expect(await overflowsHorizontally(page)).to.equal(false);
    // Every cell of a task is within the screen, the cost included.
    const cost = await first.getByTestId('task-cost').boundingBox();
    expect(cost!.x + cost!.width).to.be.at.most(390);
    await nav(page, 'Playground');
    await page.getByLabel('Prompt').waitFor();
    expect(await overflowsHorizontally(page)).to.equal(false);
  });

  it('shows the playground and the tasks in Chinese, without console errors', async () => {
    const { page } = owner;
    await page.getByLabel('Language').selectOption('zh');
    await page.getByRole('heading', { level: 1, name: '调试台' }).waitFor();
    await page.getByRole('button', { name: '发送' }).waitFor();
    await expectAccessible(page, 'the playground in Chinese');
    await nav(page, '任务');
    await page.getByTestId('task-failure').first().waitFor();
    await page.getByRole('button', { name: '加载更多' }).click();
    expect(await page.locator(`tr[data-task-id="${refundedTask}"]`).getByTestId('task-cost').textContent()).to.include('已退款');
    expect(await overflowsHorizontally(page)).to.equal(false);
    await expectAccessible(page, 'the tasks page in Chinese');
    expect(owner.consoleErrors).to.deep.equal([]);
  });
});
