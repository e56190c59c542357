import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { storedKeys } from '../support/object-store';

const MAX = 256 * 1024;

function sha256(bytes: Buffer | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A multipart body built by hand, so a test controls its framing. */
function multipart(boundary: string, parts: { name: string; filename?: string; type?: string; body: Buffer | string }[]): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`));
    chunks.push(Buffer.isBuffer(p.body) ? p.body : Buffer.from(p.body));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** Sends `body` as a chunked stream of `chunkSize`-byte pieces (no Content-Length). */
function streamed(body: Buffer, chunkSize: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= body.length) return controller.close();
      controller.enqueue(new Uint8Array(body.subarray(offset, offset + chunkSize)));
      offset += chunkSize;
    },
  });
}

describe('files: POST /v1/files and the owner\'s reads @integration', () => {
  let gw: TestGateway;
  let key: string;
  let other: string;

  before(async () => {
    gw = await startTestGateway({ UPLOAD_MAX_BYTES: String(MAX), UPLOAD_URL_TTL_MS: '600000' });
    ({ key } = await gw.fundedAccount(0));
    ({ key: other } = await gw.fundedAccount(0));
  });
  afterEach(async () => gw.expectAuditClean());
  after(async () => gw.close());

  const upload = (body: RequestInit['body'], headers: Record<string, string>, k = key) =>
    fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${k}`, ...headers }, body, duplex: 'half' } as RequestInit);
  const uploadsStored = () => storedKeys(gw.config, 'uploads/');

  it('uploads a file, lists it, serves it by signed link and to its owner, and deletes it', async () => {
    const bytes = randomBytes(100_000);
    const form = new FormData();
    form.append('purpose', 'minutes');
    form.append('file', new Blob([bytes], { type: 'audio/mpeg' }), 'team sync.mp3');
    const sentAt = Date.now();
    const res = await upload(form, {});
    expect(res.status).to.equal(200);
    const answeredAt = Date.now();
    const file = (await res.json()) as any;
    expect(file).to.have.keys(['id', 'object', 'bytes', 'filename', 'purpose', 'content_type', 'status', 'created_at', 'url', 'url_expires_at']);
    expect(file).to.deep.include({ object: 'file', bytes: 100_000, filename: 'team sync.mp3', purpose: 'minutes', content_type: 'audio/mpeg', status: 'processed' });
    expect(file.id).to.match(/^file_[0-9a-f]{28}$/);
    expect(Math.abs(file.created_at - Date.now() / 1000)).to.be.lessThan(60);
    // The link lives UPLOAD_URL_TTL_MS from when the answer signed it, which a busy machine may
    // reach a few seconds after the upload was recorded.
    expect(file.url_expires_at).to.be.within(Math.floor(sentAt / 1000) + 600, Math.ceil(answeredAt / 1000) + 600);

    // The signed link needs no API key: an upstream can fetch it.
    const download = await fetch(file.url);
    expect(download.status).to.equal(200);
    expect(sha256(Buffer.from(await download.arrayBuffer()))).to.equal(sha256(bytes));
    const forged = await fetch(file.url.replace(/sig=[0-9a-f]{4}/, 'sig=0000'));
    expect(forged.status).to.equal(403);

    const got = await gw.api(key, 'GET', `/v1/files/${file.id}`);
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.include({ id: file.id, bytes: 100_000, filename: 'team sync.mp3' });
    const content = await fetch(`${gw.url}/v1/files/${file.id}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(content.status).to.equal(200);
    expect(content.headers.get('content-type')).to.equal('audio/mpeg');
    expect(sha256(Buffer.from(await content.arrayBuffer()))).to.equal(sha256(bytes));
    const list = await gw.api(key, 'GET', '/v1/files?purpose=minutes');
    expect(list.body.object).to.equal('list');
    expect(list.body.data.map((f: any) => f.id)).to.include(file.id);
    expect((await gw.api(key, 'GET', '/v1/files?purpose=user_data')).body.data.map((f: any) => f.id)).not.to.include(file.id);

    // Another account sees nothing of it.
    expect((await gw.api(other, 'GET', `/v1/files/${file.id}`)).status).to.equal(404);
    expect((await fetch(`${gw.url}/v1/files/${file.id}/content`, { headers: { authorization: `Bearer ${other}` } })).status).to.equal(404);
    expect((await gw.api(other, 'GET', '/v1/files')).body.data).to.deep.equal([]);
    expect((await gw.api(other, 'DELETE', `/v1/files/${file.id}`)).status).to.equal(404);
    expect((await gw.api(null, 'GET', `/v1/files/${file.id}`)).status).to.equal(401);

    const deleted = await gw.api(key, 'DELETE', `/v1/files/${file.id}`);
    expect(deleted.status).to.equal(200);
    expect(deleted.body).to.deep.equal({ id: file.id, object: 'file', deleted: true });
    expect((await gw.api(key, 'GET', `/v1/files/${file.id}`)).status).to.equal(404);
    expect((await gw.api(key, 'DELETE', `/v1/files/${file.id}`)).status).to.equal(404);
    expect((await fetch(file.url)).status, 'the bytes are gone').to.equal(404);
    expect((await gw.api(key, 'GET', '/v1/files')).body.data.map((f: any) => f.id)).not.to.include(file.id);

    const events = (await gw.store.readStream(`file-${file.id}`)).map((e) => e.type);
    expect(events).to.deep.equal(['FileUploaded', 'FileDeleted']);
  });

  it('streams a chunked upload whose boundaries fall across network chunks', async () => {
    const boundary = '----gateway-test-boundary-7';
    const bytes = randomBytes(150_000);
    // A file that contains the delimiter without its leading CRLF must survive intact.
    bytes.set(Buffer.from(`--${boundary}`), 5_000);
    const body = multipart(boundary, [
      { name: 'file', filename: 'notes.bin', type: 'application/octet-stream', body: bytes },
      { name: 'purpose', body: 'user_data' },
    ]);
    for (const chunkSize of [1_021, 7, 65_536]) {
      const res = await upload(streamed(body, chunkSize), { 'content-type': `multipart/form-data; boundary="${boundary}"` });
      expect(res.status, `chunks of ${chunkSize}`).to.equal(200);
      const file = (await res.json()) as any;
      expect(file).to.deep.include({ bytes: 150_000, filename: 'notes.bin', purpose: 'user_data' });
      expect(sha256(Buffer.from(await (await fetch(file.url)).arrayBuffer()))).to.equal(sha256(bytes));
    }
  });

  it('refuses files over the cap with 413, streamed or announced, and keeps nothing', async () => {
    const before = await uploadsStored();
    const listed = (await gw.api(key, 'GET', '/v1/files?limit=100')).body.data.length;
    const boundary = 'cap-boundary';
    const body = multipart(boundary, [
      { name: 'purpose', body: 'minutes' },
      { name: 'file', filename: 'big.wav', type: 'audio/wav', body: randomBytes(MAX + 1) },
    ]);
    const streamedRes = await upload(streamed(body, 16_384), { 'content-type': `multipart/form-data; boundary=${boundary}` });
    expect(streamedRes.status).to.equal(413);
    expect(((await streamedRes.json()) as any).error).to.deep.include({ code: 'file_too_large', message: `the file exceeds the upload limit of ${MAX} bytes` });

    const huge = multipart(boundary, [
      { name: 'purpose', body: 'minutes' },
      { name: 'file', filename: 'huge.wav', body: randomBytes(MAX + 200_000) },
    ]);
    const announced = await upload(huge, { 'content-type': `multipart/form-data; boundary=${boundary}` });
    expect(announced.status).to.equal(413);

    // Exactly at the cap is fine.
    const exact = await upload(multipart(boundary, [{ name: 'purpose', body: 'minutes' }, { name: 'file', filename: 'exact.bin', body: randomBytes(MAX) }]), {
      'content-type': `multipart/form-data; boundary=${boundary}`,
    });
    expect(exact.status).to.equal(200);
    const exactFile = (await exact.json()) as any;
    expect(exactFile.bytes).to.equal(MAX);

    const after = await uploadsStored();
    expect(after.filter((f) => !before.includes(f))).to.deep.equal([`uploads/${path.basename(new URL(exactFile.url).pathname)}`]);
    expect((await gw.api(key, 'GET', '/v1/files?limit=100')).body.data.length).to.equal(listed + 1);
  });

  it('refuses malformed uploads with 400 or 415 and keeps nothing', async () => {
    const before = await uploadsStored();
    const boundary = 'b0undary';
    const type = { 'content-type': `multipart/form-data; boundary=${boundary}` };
    const cases: [Buffer, number, RegExp][] = [
      [multipart(boundary, [{ name: 'file', filename: 'a.mp3', body: 'abc' }]), 400, /^purpose is required$/],
      [multipart(boundary, [{ name: 'purpose', body: 'minutes' }]), 400, /^file is required$/],
      [multipart(boundary, [{ name: 'purpose', body: 'fine-tune' }, { name: 'file', filename: 'a.mp3', body: 'abc' }]), 400, /^purpose must be one of minutes, user_data$/],
      [multipart(boundary, [{ name: 'purpose', body: 'minutes' }, { name: 'file', filename: 'a.mp3', body: '' }]), 400, /^the file is empty$/],
      [multipart(boundary, [{ name: 'purpose', body: 'minutes' }, { name: 'file', body: 'abc' }]), 400, /^the file part needs a filename$/],
      [multipart(boundary, [{ name: 'purpose', body: 'minutes' }, { name: 'file', filename: 'a.mp3', body: 'a' }, { name: 'file', filename: 'b.mp3', body: 'b' }]), 400, /^an upload carries exactly one file$/],
      [multipart(boundary, [{ name: 'purpose', body: 'minutes' }, { name: 'colour', body: 'blue' }]), 400, /^colour is not a recognised field/],
      [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\n\r\nabc`), 400, /^malformed multipart body: unexpected end/],
    ];
    for (const [body, status, message] of cases) {
      const res = await upload(body, type);
      expect(res.status, String(message)).to.equal(status);
      expect(((await res.json()) as any).error.message).to.match(message);
    }
    const json = await upload(JSON.stringify({ purpose: 'minutes' }), { 'content-type': 'application/json' });
    expect(json.status).to.equal(415);
    expect(await uploadsStored()).to.deep.equal(before);
  });

  it('answers a signed link whose key names a directory 404 file_not_found, as it answers a missing file', async () => {
    // Every prefix of a stored key is a directory of the store: its link began an answer and then
    // reset the connection with EISDIR.
    await gw.files.put('probe/dir/file.bin', (async function* () {
      yield Buffer.from('x');
    })());
    for (const key of ['probe', 'probe/dir']) {
      for (const method of ['GET', 'HEAD']) {
        const res = await fetch(gw.signer.url(key, 60_000).url, { method });
        expect(res.status, `${method} ${key}`).to.equal(404);
        if (method === 'GET') expect(((await res.json()) as any).error.code).to.equal('file_not_found');
      }
    }
    expect((await fetch(gw.signer.url('probe/dir/file.bin', 60_000).url)).status).to.equal(200);
  });
});
