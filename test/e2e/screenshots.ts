/**
 * `npm run screenshots`: the dashboard's main pages as PNG files in docs/screenshots/, each at a
 * desktop's 1280 px and a phone's 390×844 (`overview-1280.png`, `overview-390.png`), taken in
 * Chromium from a gateway on a scratch database (DATABASE_URL, or the embedded server) with a
 * little activity: credits, a chat call through the openai SDK, a second key.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { FIXED_CALL } from '../support/fixed-chat';
import { startTestGateway, TEST_ADMIN_TOKEN } from '../support/gateway';
import { mochaGlobalSetup, mochaGlobalTeardown } from '../support/global-fixture';
import type { Page } from 'playwright-core';
import { launchBrowser, requireWebBuild } from './browser';

const OUT = path.resolve(__dirname, '../../docs/screenshots');

/** The widths every page is taken at, named in the file: a desktop, and a phone (390×844). */
const VIEWPORTS = [
  { width: 1280, height: 860 },
  { width: 390, height: 844 },
] as const;

/** The page as it is now, at each width: `<name>-1280.png`, `<name>-390.png`. */
async function shootWidths(page: Page, name: string, fullPage = true): Promise<void> {
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    await page.waitForLoadState('networkidle');
    const file = `${name}-${viewport.width}.png`;
    await page.screenshot({ path: path.join(OUT, file), fullPage });
    console.log(`wrote docs/screenshots/${file}`);
  }
}

async function main(): Promise<void> {
  requireWebBuild();
  mkdirSync(OUT, { recursive: true });
  await mochaGlobalSetup();
  const gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
  const browser = await launchBrowser();
  try {
    const { key, accountId } = await gw.fundedAccount(125_000_000);
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.chat.completions.create(FIXED_CALL);
    await gw.api(key, 'POST', '/v1/account/keys', { name: 'reporting', allowed_models: ['chat-fast'], budget: { amount: 20_000_000, period: 'month' } });
    await gw.api(key, 'POST', '/v1/account/webhook-secret');

    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-GB' });
    const page = await context.newPage();
    const shoot = async (route: string, heading: string, name: string) => {
      await page.goto(`${gw.url}/dashboard${route}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await shootWidths(page, name);
    };
    await page.goto(`${gw.url}/dashboard`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shootWidths(page, 'sign-in', false);
    await page.setViewportSize(VIEWPORTS[0]);
    await page.getByLabel('API key or admin token').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await shoot('', 'Overview', 'overview');
    await shoot('/ledger', 'Ledger', 'ledger');
    await shoot('/usage', 'Usage', 'usage');
    await shoot('/keys', 'Keys', 'keys');
    await shoot('/settings', 'Webhooks & settings', 'settings');
    await shoot('/tasks', 'Tasks', 'tasks');
    await shoot('/playground', 'Playground', 'playground');
    // The phone's menu, open.
    await page.setViewportSize(VIEWPORTS[1]);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.screenshot({ path: path.join(OUT, 'menu-390.png') });
    console.log('wrote docs/screenshots/menu-390.png');

    const operator = await (await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-GB' })).newPage();
    await operator.goto(`${gw.url}/dashboard`);
    await operator.getByLabel('API key or admin token').fill(TEST_ADMIN_TOKEN);
    await operator.getByRole('button', { name: 'Sign in' }).click();
    await operator.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await operator.goto(`${gw.url}/dashboard/accounts/${accountId}`);
    await operator.getByTestId('credit-form').waitFor();
    await shootWidths(operator, 'operator-account');
    for (const [route, heading, name] of [
      ['/operations', 'Operations', 'operator-operations'],
      ['/revenue', 'Revenue & usage', 'operator-revenue'],
      ['/channels', 'Channels', 'operator-channels'],
      ['/requests', 'Request log', 'operator-requests'],
      ['/all-keys', 'All keys', 'operator-all-keys'],
    ] as const) {
      await operator.setViewportSize(VIEWPORTS[0]);
      await operator.goto(`${gw.url}/dashboard${route}`);
      await operator.getByRole('heading', { level: 1, name: heading }).waitFor();
      await shootWidths(operator, name);
    }
  } finally {
    await browser.close();
    await gw.close();
    await mochaGlobalTeardown();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
