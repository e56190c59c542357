import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import Koa from 'koa';
import { readJson } from '../../src/http/body';

/**
 * readJson takes a body whose declared bytes are all buffered at once (Node ends the message only
 * later), and waits for one still on its way; both give the same body, and the connection goes on.
 */
describe('readJson: a body already buffered, and one still on its way', () => {
  let server: http.Server;
  let port: number;
  /** What the handler saw: the bytes buffered when it asked, the body read, and whether the message had ended by then. */
  let seen: { buffered: number; body: unknown; ended: boolean }[];
  /** Resolved when a handler is about to read its body. */
  let reading: () => void = () => undefined;

  before(async () => {
    const app = new Koa();
    app.use(async (ctx) => {
      // As in the gateway, the body is read after the middleware before the handler awaited something.
      await Promise.resolve();
      const buffered = ctx.req.readableLength;
      reading();
      const body = await readJson(ctx);
      seen.push({ buffered, body, ended: ctx.req.readableEnded });
      ctx.body = { ok: true };
    });
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    seen = [];
  });

  const body = { model: 'chat-fast', messages: [{ role: 'user', content: 'héllo' }] };
  const text = JSON.stringify(body);

  it('reads a body buffered with its headers at once, and keeps the connection for the next request', async () => {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    let received = '';
    let answered: (() => void) | null = null;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (/\r\n\r\n\{"ok":true\}$/.test(received)) answered?.();
    });
    try {
      for (let i = 0; i < 2; i++) {
        received = '';
        const answer = new Promise<void>((resolve) => (answered = resolve));
        // Headers and body in one write, as autocannon, curl and undici send a small request.
        socket.write(`POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
        await answer;
        expect(received).to.match(/^HTTP\/1\.1 200 /);
      }
    } finally {
      socket.destroy();
    }
    // Read before Node ended the message: nothing waited for its end.
    expect(seen).to.deep.equal([
      { buffered: Buffer.byteLength(text), body, ended: false },
      { buffered: Buffer.byteLength(text), body, ended: false },
    ]);
  });

  it('waits for a body that comes after its headers', async () => {
    const socket = net.connect(port, '127.0.0.1');
    const answer = new Promise<string>((resolve, reject) => {
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1'))).on('end', () => resolve(received)).on('error', reject);
    });
    const handlerReading = new Promise<void>((resolve) => (reading = resolve));
    socket.write(`POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n`);
    await handlerReading;
    socket.end(text);
    expect(await answer).to.match(/^HTTP\/1\.1 200 /);
    expect(seen).to.deep.equal([{ buffered: 0, body, ended: true }]);
  });
});
