import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { chooseEncoding, StaticFiles, type Encoding } from '../../src/dashboard/static-files';

describe('the dashboard\'s static files: compressed once per version, encoding by Accept-Encoding', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'static-files-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads and compresses a file once for each version, and again when its version changes', async () => {
    const file = path.join(dir, 'app.js');
    fs.writeFileSync(file, 'console.log("a");\n'.repeat(200));
    const files = new StaticFiles();
    const first = files.get(file, 'v1', true);
    // The same promise: a second request, even a concurrent one, neither reads nor compresses again.
    expect(files.get(file, 'v1', true)).to.equal(first);
    const built = await first;
    expect([...built.variants.keys()]).to.deep.equal(['identity', 'br', 'gzip']);
    expect(brotliDecompressSync(built.variants.get('br')!.body).equals(fs.readFileSync(file))).to.equal(true);
    expect(gunzipSync(built.variants.get('gzip')!.body).equals(fs.readFileSync(file))).to.equal(true);

    fs.writeFileSync(file, 'console.log("b");\n'.repeat(200));
    const rebuilt = await files.get(file, 'v2', true);
    expect(rebuilt).to.not.equal(built);
    expect(rebuilt.variants.get('identity')!.body.toString()).to.include('"b"');
    expect(rebuilt.variants.get('br')!.etag).to.not.equal(built.variants.get('br')!.etag);
  });

  it('leaves small and already compressed files as they are, and forgets a failed read', async () => {
    const small = path.join(dir, 'index.html');
    fs.writeFileSync(small, '<!doctype html>');
    const files = new StaticFiles();
    expect([...(await files.get(small, 'v1', true)).variants.keys()]).to.deep.equal(['identity']);
    const png = path.join(dir, 'a.png');
    fs.writeFileSync(png, Buffer.alloc(4096, 1));
    expect([...(await files.get(png, 'v1', false)).variants.keys()]).to.deep.equal(['identity']);

    const missing = path.join(dir, 'later.js');
    let failure: unknown = null;
    await files.get(missing, 'v1', true).catch((err: unknown) => (failure = err));
    expect(failure).to.be.instanceOf(Error);
    fs.writeFileSync(missing, 'void 0;');
    expect((await files.get(missing, 'v1', true)).variants.get('identity')!.body.toString()).to.equal('void 0;');
  });

  it('chooses brotli, then gzip, then the bytes as they are, as Accept-Encoding allows', () => {
    const all = new Set<Encoding>(['identity', 'br', 'gzip']);
    const cases: [string | undefined, Encoding][] = [
      [undefined, 'identity'],
      ['', 'identity'],
      ['identity', 'identity'],
      ['gzip, deflate, br, zstd', 'br'],
      ['gzip', 'gzip'],
      ['GZIP;Q=0.5', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['br;q=0, gzip;q=0', 'identity'],
      ['*', 'br'],
      ['br;q=0, *', 'gzip'],
      ['*;q=0', 'identity'],
      ['deflate', 'identity'],
    ];
    for (const [header, expected] of cases) expect(chooseEncoding(header, all), String(header)).to.equal(expected);
    expect(chooseEncoding('gzip, br', new Set<Encoding>(['identity']))).to.equal('identity');
  });
});
