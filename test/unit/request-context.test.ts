import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { RequestState, type GatewayState } from '../../src/http/context';
import { requestContext } from '../../src/http/middleware';
import { createLogger, type Logger } from '../../src/log';

/**
 * requestContext: every request gets an id and, when something logs for it, a child logger that
 * stamps the id on each line; the access line is written at info. The child is made on first use,
 * so a request that logs nothing (every request, at a level above info) costs none.
 */
describe('requestContext: request id, the request logger and the access line', () => {
  async function serve(level: string) {
    const lines: Record<string, unknown>[] = [];
    const logger: Logger = createLogger(level, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    let children = 0;
    const child = logger.child.bind(logger);
    logger.child = ((...args: Parameters<Logger['child']>) => {
      children++;
      return child(...args);
    }) as Logger['child'];
    const app = new Koa<GatewayState>();
    app.use(requestContext(logger));
    app.use((ctx) => {
      if (ctx.path === '/warns') ctx.state.logger.warn({ apiKey: 'tr-secret' }, 'something to see');
      if (ctx.path === '/replaces') {
        ctx.state.logger = child({ replaced: true });
        ctx.state.logger.warn('from the replacement');
      }
      ctx.body = { ok: true, requestState: ctx.state instanceof RequestState };
    });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url, lines, children: () => children, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it('at info: writes the access line with the request id, and stamps it on what the request logs', async () => {
    const s = await serve('info');
    try {
      const res = await fetch(`${s.url}/warns`, { headers: { 'x-request-id': 'client-id-1' } });
      expect(res.headers.get('x-request-id')).to.equal('client-id-1');
      // One class for every request's state (test/unit/hidden-classes.test.ts checks it has one hidden class).
      expect(await res.json()).to.deep.equal({ ok: true, requestState: true });
      const warned = s.lines.find((l) => l.msg === 'something to see');
      expect(warned).to.include({ requestId: 'client-id-1', apiKey: '[redacted]' });
      expect(s.lines.find((l) => l.msg === 'request')).to.include({ requestId: 'client-id-1', method: 'GET', path: '/warns', status: 200 });
    } finally {
      await s.close();
    }
  });

  it('above info: makes no child logger for a request that logs nothing, and one for a request that does', async () => {
    const s = await serve('warn');
    try {
      const quiet = await fetch(`${s.url}/quiet`);
      expect(quiet.headers.get('x-request-id')).to.match(/^req_[0-9a-f]{32}$/);
      await quiet.arrayBuffer();
      expect(s.children(), 'children after a quiet request').to.equal(0);
      expect(s.lines).to.deep.equal([]);

      const res = await fetch(`${s.url}/warns`);
      const requestId = res.headers.get('x-request-id');
      await res.arrayBuffer();
      expect(s.children(), 'children after a request that logged').to.equal(1);
      expect(s.lines.map((l) => [l.msg, l.requestId])).to.deep.equal([['something to see', requestId]]);

      // A handler may still put a logger of its own in the request's state.
      await (await fetch(`${s.url}/replaces`)).arrayBuffer();
      expect(s.lines.at(-1)).to.include({ msg: 'from the replacement', replaced: true });
    } finally {
      await s.close();
    }
  });
});
