import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import axe from 'axe-core';
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { yuan } from '../../src/accounts/csv';
import { closeWhenRootSuiteEnds } from '../support/root-suite';

/**
 * CHROMIUM_PATH, else Debian's Chromium: its headless shell (`apt-get install
 * chromium-headless-shell`, the same Chromium build without the desktop browser around it, which
 * is what Playwright itself runs headless; .ci/run installs it), which used about a quarter less
 * CPU for the browser suite than the whole browser, else the whole browser (`chromium`). No
 * browser is downloaded; without one the browser suites fail, never skip.
 */
export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => !!p);
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`no Chromium found (looked at ${candidates.join(', ')}): install Debian's chromium-headless-shell or chromium package, or set CHROMIUM_PATH`);
  return found;
}

/** The web build the gateway serves at /dashboard (npm install builds it). */
export function requireWebBuild(): void {
  const index = path.resolve(__dirname, '../../web/dist/index.html');
  if (!existsSync(index)) throw new Error(`the dashboard is not built (${index} is missing): run npm run build:web`);
}

/**
 * Headless, with the flags this machine kind needs: no sandbox (CI runs as root), and no
 * background networking, which a closed network refuses. Playwright gives each launch a fresh
 * profile directory.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    chromiumSandbox: false,
    args: ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

let shared: Promise<Browser> | null = null;

/**
 * The one Chromium of this mocha process, launched at the first call and closed when mocha's root
 * suite ends (test/support/root-suite.ts): a serial run of the browser files launches it once,
 * not once per file (the browser suite's CPU is budgeted: docs/testing.md). Each file works in contexts of its own (`watchedPage`) and closes them
 * (`closeContexts`), so no cookie, storage or page carries from one file to the next.
 */
export function sharedBrowser(): Promise<Browser> {
  if (!shared) {
    const launching = launchBrowser();
    shared = launching;
    closeWhenRootSuiteEnds(async () => {
      shared = null;
      await (await launching).close();
    });
  }
  return shared;
}

/** Closes every context (and so every page) of the browser: the end of a test file. */
export async function closeContexts(browser: Browser | undefined): Promise<void> {
  await Promise.all((browser?.contexts() ?? []).map((context) => context.close()));
}

/** A page that records every console error and uncaught exception, for `expectNoConsoleErrors`. */
export interface WatchedPage {
  readonly page: Page;
  readonly context: BrowserContext;
  readonly consoleErrors: string[];
}

export async function watchedPage(browser: Browser, options: { acceptDownloads?: boolean; locale?: string } = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ acceptDownloads: options.acceptDownloads ?? true, locale: options.locale ?? 'en-GB' });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: uncaught ${error.message}`));
  return { page, context, consoleErrors };
}

/** What `axe._audit.rules` holds of a rule: its id, and the impact every violation of it reports. */
interface AuditedRule {
  readonly id: string;
  readonly impact?: string;
}
function isAuditedRule(value: unknown): value is AuditedRule {
  return typeof value === 'object' && value !== null && typeof Reflect.get(value, 'id') === 'string' && ['undefined', 'string'].includes(typeof Reflect.get(value, 'impact'));
}

/**
 * The rules that can only report a minor or moderate violation, which the standard (no serious or
 * critical violation) does not look at: scans leave them out, which saves their time and nothing
 * else. A violation's impact is the highest of its failing nodes', and a node's is its rule's
 * `impact` when the rule has one (axe-core's _finalizeRuleResult overrides its checks' impacts
 * with it); in axe-core 4.13 every rule has one. A rule without it (a later axe-core) keeps
 * running, as does any rule whose impact is serious or critical. The rules are axe-core's own
 * metadata (`_audit`, not in its typings) of the very axe-core `injectAxeOnce` puts in the page.
 */
const MINOR_OR_MODERATE_RULES: readonly string[] = (() => {
  const audit: unknown = Reflect.get(axe, '_audit');
  const rules: unknown = typeof audit === 'object' && audit !== null ? Reflect.get(audit, 'rules') : undefined;
  if (!Array.isArray(rules) || !rules.every(isAuditedRule)) throw new Error('axe-core no longer lists its rules in _audit.rules: review MINOR_OR_MODERATE_RULES');
  return rules.filter((rule) => rule.impact === 'minor' || rule.impact === 'moderate').map((rule) => rule.id);
})();

/**
 * axe-core in the page's document, injected once: scans after a navigation inside the dashboard
 * (no new document) reuse it. @axe-core/playwright would inject its 550 KB source twice per scan
 * (it evaluates it, and again into each frame in legacy mode), which the test process writes to
 * Chromium and Chromium compiles each time; so the builder gets a no-op in its place. axe then
 * runs in the top document only, which is all a page under test has (`expectAccessible` checks).
 */
async function injectAxeOnce(page: Page): Promise<void> {
  if (await page.evaluate('typeof window.axe === "object" && typeof window.axe.run === "function"')) return;
  await page.evaluate(axe.source);
}
const AXE_ALREADY_INJECTED = 'void 0';

/**
 * axe-core on the page as it is now: no violation of serious or critical impact (the rules that
 * cannot report one are left out: MINOR_OR_MODERATE_RULES). Legacy mode runs axe in the page
 * itself: the default opens a blank page to merge the frames' partial results, which here doubled
 * a scan's time (Swagger UI: 9.5–10.5 s against 4.7–4.8 s, the same results) and only matters for
 * cross-origin frames, which no page under test has.
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  expect(page.frames().map((frame) => frame.url()), `${what}: a page with frames, which the scan would not enter`).to.have.length(1);
  await injectAxeOnce(page);
  // Only the violations are read: `resultTypes` keeps axe from writing out every node that passed
  // (HTML and selectors of each, which the page serializes and the test process parses); the
  // violations come whole as before. (`options` replaces what the builder holds, so it comes
  // before `disableRules`, which adds to it.)
  const results = await new AxeBuilder({ page, axeSource: AXE_ALREADY_INJECTED })
    .setLegacyMode(true)
    .options({ resultTypes: ['violations'] })
    .disableRules([...MINOR_OR_MODERATE_RULES])
    .analyze();
  const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    serious.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`),
    `serious or critical accessibility violations on ${what}`,
  ).to.deep.equal([]);
}

export function readDownload(file: string): string {
  return readFileSync(file, 'utf8');
}

/** The display of an amount, as the dashboard formats it: yuan, all non-zero decimals, at least two. */
export function shown(minor: number): string {
  const [whole, fraction] = yuan(minor).split('.');
  const kept = fraction!.replace(/0+$/, '').padEnd(2, '0');
  return `${minor < 0 ? '-' : ''}¥${whole!.replace(/^-/, '').replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${kept}`;
}

/** The page does not scroll sideways: its document is no wider than its window (the failure names what sticks out). */
export async function expectNoHorizontalOverflow(page: Page, what: string): Promise<void> {
  const [scrollWidth, innerWidth, wide] = await page.evaluate<[number, number, string[]]>(`[
    document.documentElement.scrollWidth,
    window.innerWidth,
    [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && e.closest('.table-wrap') === null)
      .slice(0, 5)
      .map((e) => e.tagName.toLowerCase() + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().replace(/\\s+/g, '.') : '') + ' ' + Math.round(e.getBoundingClientRect().right) + 'px'),
  ]`);
  expect(scrollWidth, `${what}: the page is wider than its ${innerWidth} px window (outside scrolling tables: ${wide.join(', ')})`).to.be.at.most(innerWidth);
}

/**
 * Follows a link of the dashboard's navigation as a user would: on a narrow screen (720 px and
 * less) the links are folded behind the menu button, which is opened first.
 */
export async function followNav(page: Page, link: string): Promise<void> {
  const navigation = page.getByRole('navigation');
  const menu = navigation.locator('button[aria-controls="nav-pages"]');
  if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  await navigation.getByRole('link', { name: link, exact: true }).click();
}

/** Follows a navigation link and waits for the page it opens, whose heading is the link's name. */
export async function nav(page: Page, link: string): Promise<void> {
  await followNav(page, link);
  await page.getByRole('heading', { level: 1, name: link }).waitFor();
}
