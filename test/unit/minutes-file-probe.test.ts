import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UrlSigner } from '../../src/files/signed-urls';
import type { FileStore } from '../../src/files/store';
import { FileProbe } from '../../src/minutes/file-probe';

/**
 * The size probe of POST /v1/audio/minutes against a small local server: HEAD, redirects (each
 * hop checked), and the one-byte ranged GET when HEAD gives no usable answer.
 */
describe('minutes file probe: HEAD, redirects and the ranged GET', () => {
  let server: http.Server;
  let base: string;
  /** Every request the server saw: method, path and Range header. */
  let seen: { method: string; path: string; range: string | null }[];
  /** Resolves when the response of the never-ending GET is closed by the client. */
  let endlessClosed: Promise<void>;
  let closeEndless: () => void;

  before(async () => {
    server = http.createServer((req, res) => {
      const path = req.url!;
      seen.push({ method: req.method!, path, range: (req.headers.range as string | undefined) ?? null });
      const hop = /^\/hop\/(\d+)\/(.+)$/.exec(path);
      if (hop) {
        const n = Number(hop[1]);
        res.writeHead(n === 1 ? 307 : 302, { location: n > 1 ? `/hop/${n - 1}/${hop[2]}` : `/${hop[2]}` });
        return res.end();
      }
      switch (path) {
        case '/sized.mp3':
          res.writeHead(200, { 'content-length': '2000000000' });
          return req.method === 'HEAD' ? res.end() : res.destroy();
        case '/typed/recording':
          res.writeHead(200, { 'content-length': '4096', 'content-type': 'Audio/MPEG; charset=binary' });
          return req.method === 'HEAD' ? res.end() : res.destroy();
        case '/typed-by-get/recording':
          if (req.method === 'HEAD') {
            res.writeHead(405, { allow: 'GET', 'content-type': 'text/html' });
            return res.end();
          }
          res.writeHead(206, { 'content-range': 'bytes 0-0/5000', 'content-length': '1', 'content-type': 'video/mp4' });
          return res.end('x');
        case '/relative.mp3':
          res.writeHead(301, { location: 'sized.mp3' });
          return res.end();
        case '/private/secret.mp3':
          res.writeHead(200, { 'content-length': '5' });
          return res.end(req.method === 'HEAD' ? undefined : 'hello');
        case '/to-private.mp3':
          res.writeHead(302, { location: `${base}/private/secret.mp3` });
          return res.end();
        case '/to-ftp.mp3':
          res.writeHead(302, { location: 'ftp://files.example/a.mp3' });
          return res.end();
        case '/ranged.mp3':
          if (req.method === 'HEAD') {
            res.writeHead(403);
            return res.end();
          }
          res.writeHead(206, { 'content-range': 'bytes 0-0/1073741824', 'content-length': '1' });
          return res.end('x');
        case '/moved-ranged.mp3':
          res.writeHead(302, { location: '/ranged.mp3' });
          return res.end();
        case '/endless.mp3':
          if (req.method === 'HEAD') {
            res.writeHead(405, { allow: 'GET' });
            return res.end();
          }
          // A server that ignores Range: the whole file announced, and a body that never ends.
          res.writeHead(200, { 'content-length': '900000000' });
          res.write(Buffer.alloc(64 * 1024, 1));
          res.on('close', () => closeEndless());
          return;
        case '/unknown.mp3':
          if (req.method === 'HEAD') {
            res.writeHead(404);
            return res.end();
          }
          res.writeHead(404);
          return res.end('no');
        default:
          res.writeHead(404);
          return res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    seen = [];
    endlessClosed = new Promise<void>((resolve) => (closeEndless = resolve));
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Loopback is allowed (it is the test's server); URLs under /private/ are refused as forbidden targets. */
  async function probe<T>(run: (p: FileProbe) => Promise<T>): Promise<T> {
    const p = new FileProbe({
      files: {} as FileStore,
      signer: {} as UrlSigner,
      allowPrivateTargets: true,
      checkTarget: async (url) => (new URL(url).pathname.startsWith('/private/') ? 'a private address' : null),
    });
    try {
      return await run(p);
    } finally {
      await p.close();
    }
  }
  const inspect = (path: string) => probe((p) => p.inspect(`${base}${path}`));
  const size = async (path: string) => (await inspect(path)).bytes;

  it('reads the size from HEAD', async () => {
    expect(await size('/sized.mp3')).to.equal(2_000_000_000);
    expect(seen).to.deep.equal([{ method: 'HEAD', path: '/sized.mp3', range: null }]);
  });

  it('follows up to 3 redirects (relative ones too), and gives up beyond', async () => {
    expect(await size('/relative.mp3')).to.equal(2_000_000_000);
    seen = [];
    expect(await size('/hop/3/sized.mp3')).to.equal(2_000_000_000);
    expect(seen.map((s) => s.path)).to.deep.equal(['/hop/3/sized.mp3', '/hop/2/sized.mp3', '/hop/1/sized.mp3', '/sized.mp3']);
    seen = [];
    expect(await size('/hop/4/sized.mp3'), 'a fourth redirect is not followed').to.equal(null);
    expect(seen.map((s) => s.path)).not.to.include('/sized.mp3');
    expect(seen.every((s) => s.method === 'HEAD'), 'no GET after too many redirects').to.equal(true);
  });

  it('runs the target check on every hop: a redirect to a forbidden target is never requested', async () => {
    expect(await size('/to-private.mp3')).to.equal(null);
    expect(seen.map((s) => s.path)).to.deep.equal(['/to-private.mp3']);
    seen = [];
    expect(await size('/private/secret.mp3')).to.equal(null);
    expect(seen).to.deep.equal([]);
    expect(await size('/to-ftp.mp3'), 'only http(s) hops').to.equal(null);
  });

  it('asks for one byte with GET when HEAD is refused, and reads the total from Content-Range (through redirects too)', async () => {
    expect(await size('/ranged.mp3')).to.equal(1_073_741_824);
    expect(seen).to.deep.equal([
      { method: 'HEAD', path: '/ranged.mp3', range: null },
      { method: 'GET', path: '/ranged.mp3', range: 'bytes=0-0' },
    ]);
    seen = [];
    expect(await size('/moved-ranged.mp3')).to.equal(1_073_741_824);
    expect(seen.map((s) => `${s.method} ${s.path}`)).to.deep.equal(['HEAD /moved-ranged.mp3', 'HEAD /ranged.mp3', 'GET /moved-ranged.mp3', 'GET /ranged.mp3']);
  });

  it('takes the whole Content-Length of a server that ignores Range, without reading the body', async () => {
    // The body never ends: a probe that read it would only return at its time limit, with null.
    expect(await size('/endless.mp3')).to.equal(900_000_000);
    await endlessClosed;
  });

  it('reads the media type from HEAD (lower-cased, without parameters), else from the ranged GET, never from an error answer', async () => {
    expect(await inspect('/typed/recording')).to.deep.equal({ bytes: 4096, mediaType: 'audio/mpeg' });
    expect(seen.map((s) => s.method)).to.deep.equal(['HEAD']);
    seen = [];
    expect(await inspect('/typed-by-get/recording')).to.deep.equal({ bytes: 5000, mediaType: 'video/mp4' });
    expect(seen.map((s) => s.method)).to.deep.equal(['HEAD', 'GET']);
    expect(await inspect('/sized.mp3')).to.deep.equal({ bytes: 2_000_000_000, mediaType: null });
  });

  it('answers null (unknown) when neither HEAD nor GET tells the size, or nothing answers', async () => {
    expect(await size('/unknown.mp3')).to.equal(null);
    expect(seen.map((s) => s.method)).to.deep.equal(['HEAD', 'GET']);
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await probe((p) => p.inspect(`http://127.0.0.1:${port}/a.mp3`))).to.deep.equal({ bytes: null, mediaType: null });
  });
});
