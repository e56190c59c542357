import { expect } from 'chai';
import { MultipartError, readMultipart } from '../../src/uploads/multipart';

async function* once(body: Buffer): AsyncGenerator<Buffer> {
  yield body;
}

function form(parts: string[]): Buffer {
  return Buffer.from(parts.map((p) => `--B\r\n${p}\r\n`).join('') + '--B--\r\n');
}

async function read(source: AsyncIterable<Buffer>) {
  const parts: { name: string; filename: string | null; contentType: string | null; data: string }[] = [];
  for await (const part of readMultipart(source, 'B')) {
    const chunks: Buffer[] = [];
    for await (const c of part.body) chunks.push(c);
    parts.push({ name: part.name, filename: part.filename, contentType: part.contentType, data: Buffer.concat(chunks).toString() });
  }
  return parts;
}

async function failure(source: AsyncIterable<Buffer>): Promise<unknown> {
  try {
    await read(source);
  } catch (err) {
    return err;
  }
  return null;
}

describe('multipart/form-data through busboy: limits, names and failures', () => {
  it('strips paths from file names, reads UTF-8 names, and gives a typeless file part RFC 7578\'s text/plain', async () => {
    const parts = await read(
      once(form(['Content-Disposition: form-data; name="file"; filename="C:\\\\recordings\\\\周会.wav"\r\n\r\nabc', 'Content-Disposition: form-data; name="f2"; filename="../../etc/passwd"\r\n\r\nx'])),
    );
    expect(parts).to.deep.equal([
      { name: 'file', filename: '周会.wav', contentType: 'text/plain', data: 'abc' },
      { name: 'f2', filename: 'passwd', contentType: 'text/plain', data: 'x' },
    ]);
  });

  it('skips a part that is not form-data beside form-data parts', async () => {
    const parts = await read(once(form(['Content-Type: text/plain\r\n\r\nstray', 'Content-Disposition: form-data; name="purpose"\r\n\r\nminutes'])));
    expect(parts.map((p) => p.name)).to.deep.equal(['purpose']);
  });

  it('refuses a field over 64 KiB and more than 64 parts', async () => {
    const big = await failure(once(form([`Content-Disposition: form-data; name="purpose"\r\n\r\n${'x'.repeat(64 * 1024 + 1)}`])));
    expect(big).to.be.instanceOf(MultipartError);
    expect((big as Error).message).to.match(/purpose is larger than 65536 bytes/);
    const many = await failure(once(form(Array.from({ length: 65 }, (_, i) => `Content-Disposition: form-data; name="f${i}"\r\n\r\nv`))));
    expect(many).to.be.instanceOf(MultipartError);
    expect((many as Error).message).to.match(/at most 64 parts/);
  });

  it('passes the request\'s own error through untouched, even in the middle of a file', async () => {
    const aborted = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    const source = (async function* () {
      yield Buffer.from('--B\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n');
      yield Buffer.alloc(100_000, 1);
      throw aborted;
    })();
    expect(await failure(source)).to.equal(aborted);
  });

  it('pulls the request only as fast as the file body is read: a few chunks ahead at most', async () => {
    const CHUNK = 64 * 1024;
    let pulled = 0;
    const source = (async function* () {
      yield Buffer.from('--B\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n');
      for (let i = 0; i < 200; i++) {
        pulled += CHUNK;
        yield Buffer.alloc(CHUNK, 7);
      }
      yield Buffer.from('\r\n--B--\r\n');
    })();
    let read = 0;
    let ahead = 0;
    for await (const part of readMultipart(source, 'B')) {
      for await (const chunk of part.body) {
        read += chunk.length;
        ahead = Math.max(ahead, pulled - read);
        // A slow consumer: the parser must wait for it, not buffer the upload.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    expect(read).to.equal(200 * CHUNK);
    expect(ahead, 'bytes pulled from the request beyond those read').to.be.at.most(4 * CHUNK);
  });
});
