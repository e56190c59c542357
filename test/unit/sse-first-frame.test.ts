import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { expect } from 'chai';
import Koa from 'koa';
import type { GatewayState } from '../../src/http/context';
import { SseResponse } from '../../src/http/sse';

/**
 * Node corks a response's socket on every write until the end of the tick (process.nextTick), which
 * inside a chain of promise continuations comes only once the chain has run out. An event stream's
 * first frame is the client's first byte, so SseResponse sends it at once; later frames of the
 * same tick still go out together.
 */
describe('SseResponse: the first frame leaves at once', () => {
  let server: http.Server;
  let url: string;
  let seen: { afterFirst: { corked: number; pending: number }; afterSecond: { corked: number; pending: number } } | null;

  before(async () => {
    const app = new Koa<GatewayState>();
    app.use(async (ctx) => {
      const sse = new SseResponse(ctx, 60_000);
      const socket = ctx.res.socket!;
      // From here on, a chain of promise continuations, as a relay of upstream chunks already
      // received runs: Node's end-of-tick uncork waits until the chain has run out.
      await Promise.resolve();
      await sse.data({ n: 1 });
      const afterFirst = { corked: socket.writableCorked, pending: socket.writableLength };
      await sse.data({ n: 2 });
      const afterSecond = { corked: socket.writableCorked, pending: socket.writableLength };
      seen = { afterFirst, afterSecond };
      sse.end();
    });
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('hands the first frame to the socket in the tick it is written, and leaves later frames to the end-of-tick batch', async () => {
    seen = null;
    const res = await fetch(url);
    expect(await res.text()).to.equal('data: {"n":1}\n\ndata: {"n":2}\n\n');
    expect(seen!.afterFirst).to.deep.equal({ corked: 0, pending: 0 });
    expect(seen!.afterSecond.corked).to.equal(1);
    expect(seen!.afterSecond.pending).to.be.greaterThan(0);
  });
});
