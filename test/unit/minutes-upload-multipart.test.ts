import { expect } from 'chai';
import { boundaryOf, MultipartError, readMultipart } from '../../src/uploads/multipart';

async function* chunks(body: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < body.length; i += size) yield body.subarray(i, i + size);
}

async function collect(body: Buffer, boundary: string, size: number) {
  const parts: { name: string; filename: string | null; contentType: string | null; data: string }[] = [];
  for await (const part of readMultipart(chunks(body, size), boundary)) {
    const data: Buffer[] = [];
    for await (const c of part.body) data.push(c);
    parts.push({ name: part.name, filename: part.filename, contentType: part.contentType, data: Buffer.concat(data).toString('latin1') });
  }
  return parts;
}

const BODY = Buffer.from(
  [
    'preamble to ignore',
    '--XyZ',
    'Content-Disposition: form-data; name="purpose"',
    '',
    'minutes',
    '--XyZ',
    `Content-Disposition: form-data; name="file"; filename="a \\"b\\".wav"; filename*=UTF-8''%E4%BC%9A%E8%AE%AE.wav`,
    'Content-Type: audio/wav',
    '',
    'line one\r\n-- XyZ\r\nx--XyZ\r\n\r\nend',
    '--XyZ',
    'Content-Disposition: form-data; name="empty"',
    '',
    '',
    '--XyZ--',
    'epilogue',
  ].join('\r\n'),
  'latin1',
);

describe('multipart/form-data streaming reader', () => {
  it('reads the boundary from the Content-Type, quoted or not', () => {
    expect(boundaryOf('multipart/form-data; boundary=abc')).to.equal('abc');
    expect(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b:c"')).to.equal('a b:c');
    expect(boundaryOf('application/json')).to.equal(null);
    expect(boundaryOf('multipart/form-data')).to.equal(null);
  });

  it('yields the same parts whatever the chunking, down to one byte at a time', async () => {
    const expected = [
      { name: 'purpose', filename: null, contentType: null, data: 'minutes' },
      { name: 'file', filename: '会议.wav', contentType: 'audio/wav', data: 'line one\r\n-- XyZ\r\nx--XyZ\r\n\r\nend' },
      { name: 'empty', filename: null, contentType: null, data: '' },
    ];
    for (const size of [1, 2, 3, 5, 8, 13, 64, 4096]) expect(await collect(BODY, 'XyZ', size), `chunks of ${size}`).to.deep.equal(expected);
  });

  it('drains a part its consumer skipped', async () => {
    const names: string[] = [];
    for await (const part of readMultipart(chunks(BODY, 7), 'XyZ')) names.push(part.name);
    expect(names).to.deep.equal(['purpose', 'file', 'empty']);
  });

  it('refuses truncated and malformed bodies', async () => {
    const bad = [
      BODY.subarray(0, BODY.indexOf('line one') + 4),
      Buffer.from('no boundary at all'),
      Buffer.from('--XyZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XyZ--'),
      Buffer.from('--XyZ\r\nContent-Disposition: form-data\r\n\r\nx\r\n--XyZ--'),
    ];
    for (const body of bad) {
      let error: unknown = null;
      try {
        await collect(body, 'XyZ', 3);
      } catch (err) {
        error = err;
      }
      expect(error, body.toString('latin1').slice(0, 40)).to.be.instanceOf(MultipartError);
    }
  });
});
