import { expect } from 'chai';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { AUDIT_REPLAY_LOCK } from '../../src/audit/audit';
import { FIXED_CALL } from '../support/fixed-chat';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';
import { arkReleasePath } from '../support/simulated-ark';
import { waitFor } from '../support/wait';
import { closeContexts, expectAccessible, expectNoHorizontalOverflow, followNav, requireWebBuild, sharedBrowser, shown, type WatchedPage, watchedPage } from './browser';

/** The page's own scripts it fetched, by chunk name (`Operations` for /dashboard/assets/Operations-1a2B.js). */
function chunksOf(page: Page): Set<string> {
  const chunks = new Set<string>();
  page.on('request', (request) => {
    const name = /\/dashboard\/assets\/(.+)-[\w-]{8}\.js$/.exec(new URL(request.url()).pathname)?.[1];
    if (name) chunks.add(name);
  });
  return chunks;
}

const OWNER_PAGE_CHUNKS = ['Overview', 'Ledger', 'Usage', 'Keys', 'Settings', 'Tasks', 'Gallery', 'Playground'];
const OPERATOR_PAGE_CHUNKS = ['Accounts', 'AccountDetail', 'Revenue', 'Channels', 'Operations', 'Requests', 'AllKeys'];

/** The description next to a term of a `<dl>`. */
function described(page: Page, testId: string, term: string) {
  return page.locator(`[data-testid=${testId}] dt:text-is("${term}") + dd`);
}

/** Marks the document, so a later check tells that the page was never reloaded meanwhile. */
async function markDocument(page: Page): Promise<void> {
  await page.evaluate("document.documentElement.setAttribute('data-test-mark', 'kept')");
}
async function expectSameDocument(page: Page): Promise<void> {
  expect(await page.evaluate("document.documentElement.getAttribute('data-test-mark')")).to.equal('kept');
}

/**
 * The dashboard's shell: screens that follow what changed without a reload (the operator's credit
 * and refund, an audit, a task, a key made in another tab), the navigation on a phone, and pages
 * loaded as chunks of their own.
 *
 * axe runs on what this file adds to the pages: the menu, open, in both languages, and the audit's
 * result in place of its progress. The pages themselves are scanned by dashboard.test.ts with the
 * same markup (a phone's width changes only the CSS, whose layout the overflow check covers); a
 * scan costs about a third of a CPU second, and the browser suite's CPU is budgeted (docs/testing.md).
 */
/** Credits of one minor unit that take the account's ledger past its first page. */
const FILLER_CREDITS = 48;

describe('the dashboard shell in Chromium: fresh data, small screens, a chunk per page @e2e', function () {
  this.timeout(180_000);
  let gw: TestGateway;
  let browser: Browser;
  let account: { accountId: string; key: string; keyId: string };
  let operator: WatchedPage;
  let owner: WatchedPage;
  let operatorChunks: Set<string>;
  let ownerChunks: Set<string>;

  const signIn = async (page: Page, secret: string, heading: string) => {
    await page.goto(`${gw.url}/dashboard`);
    await page.getByLabel('API key or admin token').fill(secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };
  const open = async (page: Page, path: string, heading: string) => {
    await page.goto(`${gw.url}/dashboard${path}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };

  before(async () => {
    requireWebBuild();
    browser = await sharedBrowser();
    gw = await startTestGateway({ TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000' });
    account = await gw.fundedAccount(10_000_000);
    const client = new OpenAI({ apiKey: account.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await client.chat.completions.create(FIXED_CALL);
    // More ledger entries than a page (50): the funding credit, the call's reservation and settlement, and these.
    for (let i = 0; i < FILLER_CREDITS; i++) expect((await gw.admin('POST', `/admin/v1/accounts/${account.accountId}/credits`, { amount: 1, reference: `filler-${i}` })).status).to.equal(201);
    operator = await watchedPage(browser);
    operatorChunks = chunksOf(operator.page);
    owner = await watchedPage(browser);
    ownerChunks = chunksOf(owner.page);
  });
  after(async () => {
    await closeContexts(browser);
    await gw?.close();
  });

  it('updates the operator\'s account page after a credit and a refund: balances, statement and the ledger\'s later page, without a reload', async () => {
    const { page } = operator;
    await signIn(page, TEST_ADMIN_TOKEN, 'Accounts');
    await open(page, `/accounts/${account.accountId}`, (await gw.admin('GET', `/admin/v1/accounts/${account.accountId}`)).body.name);
    await page.getByTestId('statement').waitFor();
    await page.locator('[data-testid=ledger-table] tbody tr[data-type=settlement]').waitFor();
    // The ledger is oldest first: the credit and the refund land on its second page, loaded here to its end.
    const loadMore = page.getByRole('button', { name: 'Load more' });
    await loadMore.click();
    await loadMore.waitFor({ state: 'detached' });
    await markDocument(page);
    const month = new Date().toISOString().slice(0, 7);
    const statementShown = async () => {
      const s = (await gw.admin('GET', `/admin/v1/accounts/${account.accountId}/statements/${month}`)).body;
      return { Credits: shown(s.credits), Refunds: shown(s.refunds), 'Closing balance': shown(s.closing_balance) };
    };
    const expectPageShows = async (entry: string) => {
      const expected = await statementShown();
      const balance = await gw.balance(account.key);
      await page.getByTestId('available').getByText(shown(balance.available), { exact: true }).waitFor();
      for (const [term, value] of Object.entries(expected)) await described(page, 'statement', term).getByText(value, { exact: true }).waitFor();
      await page.locator(entry).waitFor();
    };

    const credit = page.getByTestId('credit-form');
    await credit.getByLabel('Amount (yuan)').fill('2.5');
    await credit.getByLabel(/^Reference/).fill('shell-top-up');
    await credit.getByRole('button', { name: 'Credit' }).click();
    await page.getByText('Credited.').waitFor();
    expect((await statementShown()).Credits).to.equal(shown(10_000_000 + FILLER_CREDITS + 2_500_000));
    await expectPageShows('[data-testid=ledger-table] tbody tr[data-type=credit]:has-text("shell-top-up")');

    await page.locator('[data-testid=ledger-table] tbody tr[data-type=settlement]').getByRole('button', { name: 'Refund' }).click();
    const refund = page.getByTestId('refund-form');
    await refund.getByLabel('Reason').fill('shell test');
    await refund.getByRole('button', { name: 'Refund' }).click();
    await page.getByText('Refunded.').waitFor();
    expect((await statementShown()).Refunds).to.not.equal(shown(0));
    await expectPageShows('[data-testid=ledger-table] tbody tr[data-type=refund]');
    // Still the whole ledger, each entry once: 51 entries before, as 50 lines (the call's two are one), and the two new ones.
    expect(await page.locator('[data-testid=ledger-table] > tbody > tr[data-kind]').count()).to.equal(52);
    expect(await loadMore.count()).to.equal(0);
    await expectSameDocument(page);
  });

  it('turns a running audit into its result by itself', async () => {
    const { page } = operator;
    // The audit's replay waits for this lock: the run stays "running" until the test lets it go.
    const holder = await gw.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1, $2)', [...AUDIT_REPLAY_LOCK]);
      await page.locator('nav a', { hasText: 'Operations' }).click();
      await page.getByRole('heading', { level: 1, name: 'Operations' }).waitFor();
      await markDocument(page);
      await page.getByRole('button', { name: 'Run the audit' }).click();
      await page.getByRole('status').filter({ hasText: 'Running since' }).waitFor();
      expect(await page.getByRole('button', { name: 'Run the audit' }).isDisabled()).to.equal(true);
      await holder.query('SELECT pg_advisory_unlock($1, $2)', [...AUDIT_REPLAY_LOCK]);
    } finally {
      holder.release();
    }
    await page.getByTestId('audit-last').getByText('passed', { exact: true }).waitFor({ timeout: 90_000 });
    await page.getByRole('status').filter({ hasText: 'Running since' }).waitFor({ state: 'detached' });
    await expectSameDocument(page);
    await expectAccessible(page, 'the operations page after an audit');
    // Each page came with its own chunk; the owner's pages and the charts never came.
    expect([...operatorChunks]).to.include.members(['index', 'Accounts', 'AccountDetail', 'Operations']);
    expect([...operatorChunks]).to.not.include.any.members([...OWNER_PAGE_CHUNKS, 'charts']);
    expect(operator.consoleErrors).to.deep.equal([]);
  });

  it('loads each owner page as its own chunk, the charts only with the pages that chart', async () => {
    const { page } = owner;
    await signIn(page, account.key, 'Overview');
    await page.getByTestId('spend-table').waitFor();
    expect([...ownerChunks]).to.include.members(['index', 'Overview', 'charts']);
    expect([...ownerChunks]).to.not.include.any.members([...OWNER_PAGE_CHUNKS.filter((c) => c !== 'Overview'), ...OPERATOR_PAGE_CHUNKS]);
    await page.locator('nav a', { hasText: 'Keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
    expect([...ownerChunks]).to.include('Keys');
    expect([...ownerChunks]).to.not.include.any.members(['Ledger', 'Usage', 'Tasks', ...OPERATOR_PAGE_CHUNKS]);

    // A chunk that does not come (a newer build has other names) leaves the shell standing, with a way out.
    await page.route('**/dashboard/assets/Gallery-*.js', (route) => route.abort());
    await page.locator('nav a', { hasText: 'Gallery' }).click();
    await page.getByRole('alert').getByRole('button', { name: 'Reload the dashboard' }).waitFor();
    await page.unroute('**/dashboard/assets/Gallery-*.js');
    const failures = owner.consoleErrors.splice(0);
    expect(failures.some((e) => e.includes('dynamically imported module')), failures.join('\n')).to.equal(true);
    // Only the refused chunk: its request, and the import that needed it.
    expect(failures.filter((e) => !/Failed to load resource: net::ERR_FAILED$|Failed to fetch dynamically imported module: \S+\/Gallery-[\w-]{8}\.js$/.test(e)), 'other console errors').to.deep.equal([]);
    await page.locator('nav a', { hasText: 'Keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
  });

  it('updates a video task\'s status and cost by itself, and a key made in another tab', async () => {
    const { page } = owner;
    const created = await gw.api(account.key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a held wave [sim:hold] [sim:fail]' }], duration: 4 });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    await page.locator('nav a', { hasText: 'Tasks' }).click();
    const row = page.locator(`tr[data-task-id="${created.body.id}"]`);
    await row.getByText('(reserved)').waitFor();
    await markDocument(page);
    expect((await fetch(gw.simulator.url + arkReleasePath(created.body.upstream_id), { method: 'POST' })).status).to.equal(200);
    const task = await waitFor('the task billed', async () => {
      const t = (await gw.api(account.key, 'GET', `/v1/videos/generations/${created.body.id}`)).body;
      return t.billing.status !== 'reserved' ? t : null;
    }, 60_000, 200);
    expect([task.status, task.billing.status]).to.deep.equal(['failed', 'released']);
    await row.locator('td[data-label="Status"]', { hasText: /^failed/ }).waitFor();
    await row.getByTestId('task-cost').getByText(shown(task.billing.amount), { exact: true }).waitFor();
    expect(await row.textContent()).to.not.include('(reserved)');
    await expectSameDocument(page);

    // A second tab of the same browser follows a key made in the first.
    const other = await owner.context.newPage();
    other.on('console', (message) => message.type() === 'error' && owner.consoleErrors.push(`second tab: ${message.text()}`));
    await other.goto(`${gw.url}/dashboard/keys`);
    await other.getByTestId('keys-table').waitFor();
    await page.locator('nav a', { hasText: 'Keys' }).click();
    const form = page.getByTestId('create-key');
    await form.getByLabel('Name').fill('made in the first tab');
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-key').waitFor();
    await other.locator('[data-testid=keys-table] tbody tr', { hasText: 'made in the first tab' }).waitFor();
    await other.close();
    expect(owner.consoleErrors).to.deep.equal([]);
  });

  it('fits a 390 px phone: the navigation folds behind a keyboard-operable menu, in English and Chinese, and no page is wider than the screen', async () => {
    const { page } = owner;
    await page.setViewportSize({ width: 390, height: 844 });
    await open(page, '', 'Overview');
    const menu = page.getByRole('button', { name: 'Menu' });
    const ledgerLink = page.getByRole('navigation').getByRole('link', { name: 'Ledger', exact: true });
    expect([await menu.getAttribute('aria-expanded'), await ledgerLink.isVisible()]).to.deep.equal(['false', false]);
    await menu.focus();
    await page.keyboard.press('Enter');
    await ledgerLink.waitFor();
    expect(await menu.getAttribute('aria-expanded')).to.equal('true');
    await expectAccessible(page, 'the open menu at 390 px');
    await page.keyboard.press('Escape');
    await ledgerLink.waitFor({ state: 'hidden' });
    // Focus is back on the menu button.
    expect([await menu.getAttribute('aria-expanded'), await page.evaluate("document.activeElement.getAttribute('aria-controls')")]).to.deep.equal(['false', 'nav-pages']);
    // Space opens it too; a page chosen by keyboard closes it.
    await page.keyboard.press(' ');
    await ledgerLink.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Ledger' }).waitFor();
    expect([await menu.getAttribute('aria-expanded'), await ledgerLink.isVisible()]).to.deep.equal(['false', false]);

    // Every page, reached through the menu as a phone user would (followNav opens it).
    const visit = async (p: Page, link: string, heading: string, ready: string | null) => {
      await followNav(p, link);
      await p.getByRole('heading', { level: 1, name: heading }).waitFor();
      if (ready) await p.getByTestId(ready).waitFor();
      await expectNoHorizontalOverflow(p, `the ${heading} page`);
    };
    for (const [link, ready] of [
      ['Overview', 'spend-table'],
      ['Ledger', 'ledger-table'],
      ['Usage', 'usage-table'],
      ['Keys', 'keys-table'],
      ['Webhooks & settings', 'webhook-secret'],
      ['Tasks', 'tasks-table'],
      ['Gallery', null],
    ] as const) {
      await visit(page, link, link, ready);
    }

    await page.getByLabel('Language').selectOption('zh');
    const zhMenu = page.getByRole('button', { name: '菜单' });
    await zhMenu.click();
    await page.getByRole('navigation', { name: '页面' }).getByRole('link', { name: '概览', exact: true }).waitFor();
    expect(await zhMenu.getAttribute('aria-expanded')).to.equal('true');
    await expectAccessible(page, 'the open menu in Chinese at 390 px');
    await page.keyboard.press('Escape');
    await page.getByLabel('语言').selectOption('en');
    expect(owner.consoleErrors).to.deep.equal([]);

    const { page: op } = operator;
    await op.setViewportSize({ width: 390, height: 844 });
    await visit(op, 'Accounts', 'Accounts', 'accounts-table');
    await op.locator('[data-testid=accounts-table] tbody tr', { hasText: account.accountId }).getByRole('link').click();
    await op.getByTestId('ledger-table').waitFor();
    await expectNoHorizontalOverflow(op, 'the operator\'s account page');
    await visit(op, 'Operations', 'Operations', 'catalog-table');
    expect(operator.consoleErrors).to.deep.equal([]);
  });
});
