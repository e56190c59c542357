import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import Koa from 'koa';
import { dashboardPages } from '../../src/dashboard/pages';
import { errorMiddleware } from '../../src/http/errors';
import { RequestState, type GatewayState } from '../../src/http/context';
import { createLogger } from '../../src/log';

/**
 * The dashboard's pages, a middleware every request passes through: what is not a page goes on,
 * a page is a built file or index.html, and a dashboard that was not built is a 503 in the
 * gateway's error shape (thrown without an async function of its own, it still reaches the error
 * middleware).
 */
describe('the dashboard pages middleware', () => {
  async function serve(webRoot: string) {
    const app = new Koa<GatewayState>();
    app.use((ctx, next) => {
      ctx.state = new RequestState('req_test', createLogger('silent'));
      return next();
    });
    app.use(errorMiddleware);
    app.use(dashboardPages(webRoot));
    app.use((ctx) => void (ctx.body = { passed: ctx.path }));
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it('serves a built dashboard\'s files and index.html, and lets every other request go on', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-pages-'));
    fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>x</title>');
    fs.mkdirSync(path.join(root, 'assets'));
    fs.writeFileSync(path.join(root, 'assets', 'app-1a2b3c.js'), 'void 0;');
    fs.writeFileSync(path.join(root, 'robots.txt'), 'User-agent: *');
    const s = await serve(root);
    try {
      const page = await fetch(`${s.url}/dashboard/accounts`);
      expect(page.status).to.equal(200);
      expect(await page.text()).to.equal('<!doctype html><title>x</title>');
      const script = await fetch(`${s.url}/dashboard/assets/app-1a2b3c.js`);
      expect(script.headers.get('content-type')).to.include('text/javascript');
      expect(script.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(await script.text()).to.equal('void 0;');
      // Only Vite's hashed assets keep a name for good; any other file is revalidated.
      const robots = await fetch(`${s.url}/dashboard/robots.txt`);
      expect([await robots.text(), robots.headers.get('cache-control')]).to.deep.equal(['User-agent: *', 'no-cache']);
      expect(await (await fetch(`${s.url}/v1/models`)).json()).to.deep.equal({ passed: '/v1/models' });
      expect(await (await fetch(`${s.url}/dashboard`, { method: 'POST' })).json()).to.deep.equal({ passed: '/dashboard' });
    } finally {
      await s.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('answers 503 dashboard_not_built in the error shape when there is no build, and still lets the API through', async () => {
    // A directory of this test's own, so the build it names surely does not exist.
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-pages-'));
    const s = await serve(path.join(parent, 'not-built'));
    try {
      const res = await fetch(`${s.url}/dashboard`);
      expect(res.status).to.equal(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('dashboard_not_built');
      expect(await (await fetch(`${s.url}/v1/models`)).json()).to.deep.equal({ passed: '/v1/models' });
    } finally {
      await s.close();
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });
});
