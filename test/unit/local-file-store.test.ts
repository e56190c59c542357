import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FileTooLargeError, LocalFileStore } from '../../src/files/store';

describe('local file store', () => {
  let root: string;
  let store: LocalFileStore;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'file-store-'));
    store = new LocalFileStore(root);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const filesUnder = (dir: string) => fs.readdirSync(path.join(root, dir));
  const rejection = (promise: Promise<unknown>) => promise.then(
    () => expect.fail('expected a rejection'),
    (e: unknown) => e as Error,
  );

  it('stores the bytes under the key with their size and sha256', async () => {
    const stored = await store.put('a/b.bin', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    expect(stored).to.deep.equal({
      key: 'a/b.bin',
      bytes: 11,
      sha256: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9',
    });
    expect(fs.readFileSync(path.join(root, 'a/b.bin'), 'utf8')).to.equal('hello world');
    expect(filesUnder('a')).to.deep.equal(['b.bin']);
  });

  it('leaves nothing behind when the body fails before its first byte', async () => {
    // Twenty times: a stray `.part` once survived a failed upload in CI, depending on timing.
    async function* failing(): AsyncGenerator<Buffer> {
      throw new Error('client went away');
    }
    for (let i = 0; i < 20; i++) {
      expect((await rejection(store.put(`up/f${i}.bin`, failing()))).message).to.equal('client went away');
    }
    expect(filesUnder('up')).to.deep.equal([]);
  });

  it('stops at the cap with FileTooLargeError and leaves nothing behind', async () => {
    expect(await rejection(store.put('up/big.bin', Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), { maxBytes: 1000 }))).to.be.instanceOf(FileTooLargeError);
    expect(filesUnder('up')).to.deep.equal([]);
  });

  it('has no file under a key that names a directory (the prefix of another key)', async () => {
    await store.put('a/b/c.bin', Readable.from([Buffer.from('x')]));
    for (const key of ['a', 'a/b']) {
      expect(await store.stat(key), key).to.equal(null);
      expect(await store.open(key), key).to.equal(null);
    }
    expect(await store.stat('a/b/c.bin')).to.deep.equal({ bytes: 1 });
  });

  it('refuses keys that could leave its root', async () => {
    for (const key of ['../x', 'a/../../x', '/etc/passwd', '.hidden']) {
      expect((await rejection(store.put(key, Readable.from([Buffer.from('x')])))).message).to.match(/^unsafe file key/);
    }
  });
});
