import { get, request, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { requireWebBuild } from '../e2e/browser';
import { startTestGateway, type TestGateway } from '../support/gateway';

interface Raw {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The bytes as they came over the wire, not decoded (fetch would decode them). */
  readonly body: Buffer;
}

function fetchRaw(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = (method === 'GET' ? get : request)(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (method !== 'GET') req.end();
  });
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The built dashboard as a browser gets it from a running gateway: compressed, cached, the index never cached. */
describe('the dashboard\'s static files over HTTP: compression and caching @integration', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  let script = '';
  let style = '';

  before(async () => {
    requireWebBuild();
    gw = await startTestGateway();
    const index = (await fetchRaw(`${gw.url}/dashboard`)).body.toString('utf8');
    script = /<script[^>]+src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(index)![1]!;
    style = /<link[^>]+href="(\/dashboard\/assets\/[^"]+\.css)"/.exec(index)![1]!;
  });
  after(async () => {
    await gw?.close();
  });

  it('sends the hashed script as brotli or gzip as Accept-Encoding asks, the same bytes decoded, with Vary', async () => {
    const plain = await fetchRaw(gw.url + script, { 'accept-encoding': 'identity' });
    expect(plain.status).to.equal(200);
    expect(plain.headers['content-encoding']).to.equal(undefined);
    expect(plain.headers.vary).to.match(/accept-encoding/i);
    expect(plain.headers['content-type']).to.equal('text/javascript; charset=utf-8');
    expect(Number(plain.headers['content-length'])).to.equal(plain.body.length);

    const br = await fetchRaw(gw.url + script, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(br.headers['content-encoding']).to.equal('br');
    expect(br.headers.vary).to.match(/accept-encoding/i);
    expect(br.body.length).to.be.lessThan(plain.body.length / 2);
    expect(brotliDecompressSync(br.body).equals(plain.body)).to.equal(true);

    const gz = await fetchRaw(gw.url + script, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).to.equal('gzip');
    expect(gz.headers.vary).to.match(/accept-encoding/i);
    expect(gunzipSync(gz.body).equals(plain.body)).to.equal(true);

    // Refused codings are not sent; `*` stands for the ones not named; no header means the bytes as they are.
    expect((await fetchRaw(gw.url + script, { 'accept-encoding': 'br;q=0, gzip;q=0.5' })).headers['content-encoding']).to.equal('gzip');
    expect((await fetchRaw(gw.url + script, { 'accept-encoding': 'br;q=0, *' })).headers['content-encoding']).to.equal('gzip');
    expect((await fetchRaw(gw.url + script, { 'accept-encoding': '*' })).headers['content-encoding']).to.equal('br');
    expect((await fetchRaw(gw.url + script)).headers['content-encoding']).to.equal(undefined);

    const css = await fetchRaw(gw.url + style, { 'accept-encoding': 'br' });
    expect([css.headers['content-encoding'], css.headers['content-type']]).to.deep.equal(['br', 'text/css; charset=utf-8']);
  });

  it('gives each encoding of a file its own ETag, the same on every request', async () => {
    const first = await fetchRaw(gw.url + script, { 'accept-encoding': 'br' });
    const second = await fetchRaw(gw.url + script, { 'accept-encoding': 'br' });
    expect(second.body.equals(first.body)).to.equal(true);
    expect(second.headers.etag).to.equal(first.headers.etag);
    const gz = await fetchRaw(gw.url + script, { 'accept-encoding': 'gzip' });
    expect(gz.headers.etag).to.not.equal(first.headers.etag);
  });

  it('caches the hashed assets for a year, immutable', async () => {
    for (const asset of [script, style]) {
      const res = await fetchRaw(gw.url + asset, { 'accept-encoding': 'br' });
      expect(res.headers['cache-control'], asset).to.equal(IMMUTABLE);
    }
  });

  it('never caches the index: no-cache on every route that serves it, revalidated by ETag, with the CSP kept', async () => {
    for (const route of ['/dashboard', '/dashboard/', '/dashboard/ledger', '/dashboard/accounts/acc_1', '/dashboard/index.html', '/dashboard/assets']) {
      const res = await fetchRaw(gw.url + route, { 'accept-encoding': 'gzip, br' });
      expect(res.status, route).to.equal(200);
      expect(res.headers['cache-control'], route).to.equal('no-cache');
      expect(res.headers['content-type'], route).to.equal('text/html; charset=utf-8');
      expect(res.headers['content-security-policy'], route).to.include("script-src 'self'");
      const body = res.headers['content-encoding'] === 'br' ? brotliDecompressSync(res.body) : res.headers['content-encoding'] === 'gzip' ? gunzipSync(res.body) : res.body;
      expect(body.toString('utf8'), route).to.include('<div id="root">');
    }
    const index = await fetchRaw(`${gw.url}/dashboard/ledger`);
    const again = await fetchRaw(`${gw.url}/dashboard/ledger`, { 'if-none-match': String(index.headers.etag) });
    expect([again.status, again.body.length, again.headers['cache-control']]).to.deep.equal([304, 0, 'no-cache']);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const head = await fetchRaw(gw.url + script, { 'accept-encoding': 'br' }, 'HEAD');
    const full = await fetchRaw(gw.url + script, { 'accept-encoding': 'br' });
    expect([head.status, head.headers['content-encoding'], head.headers['cache-control'], head.headers['content-length'], head.body.length]).to.deep.equal([
      200,
      'br',
      IMMUTABLE,
      String(full.body.length),
      0,
    ]);
  });
});
