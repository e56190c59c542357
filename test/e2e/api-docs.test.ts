import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { closeContexts, expectAccessible, sharedBrowser, watchedPage } from './browser';

describe('/docs in Chromium: Swagger UI renders the OpenAPI document offline @e2e', function () {
  this.timeout(120_000);
  let gw: TestGateway;
  let browser: Browser;
  before(async () => {
    browser = await sharedBrowser();
    gw = await startTestGateway();
  });
  after(async () => {
    await closeContexts(browser);
    await gw?.close();
  });

  it('renders every operation from this gateway alone, with no console errors and no serious accessibility violations', async () => {
    const { page, consoleErrors, context } = await watchedPage(browser);
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(`${gw.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();
    await page.locator('.opblock-summary-path', { hasText: '/v1/chat/completions' }).first().waitFor();
    const document = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, object> };
    const documented = Object.values(document.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
    expect(await page.locator('.opblock').count()).to.equal(documented);
    await page.waitForLoadState('networkidle');
    expect(requested.filter((url) => !url.startsWith(gw.url) && !url.startsWith('data:'))).to.deep.equal([]);
    await expectAccessible(page, '/docs');
    expect(consoleErrors).to.deep.equal([]);
    await context.close();
  });
});
