import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Database } from '../../src/db/database';
import { TestClock } from '../support/clock';
import { createTestDatabase } from '../support/database';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { callJson, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { startObjectStore, storedKeys, type RunningObjectStore } from '../support/object-store';
import { testTempDir } from '../support/temp-dirs';

const MiB = 1_048_576;

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A POST /v1/files body sent as a stream of 64 KiB chunks with no Content-Length, as a large upload arrives. */
function streamedUpload(file: Buffer, filename: string): { body: ReadableStream<Uint8Array>; type: string } {
  const boundary = 'object-store-boundary';
  const parts = [
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ];
  const whole = Buffer.concat(parts);
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= whole.length) return controller.close();
      controller.enqueue(new Uint8Array(whole.subarray(offset, offset + 65_536)));
      offset += 65_536;
    },
  });
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

function upload(url: string, key: string, file: Buffer, filename: string): Promise<Response> {
  const { body, type } = streamedUpload(file, filename);
  return fetch(`${url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': type }, body, duplex: 'half' } as RequestInit);
}

describe('files on an S3-compatible store (s3rver) @integration', () => {
  const clock = new TestClock();
  let objects: RunningObjectStore;
  let gw: TestGateway;
  let key: string;

  before(async () => {
    objects = await startObjectStore(['gateway-files']);
    gw = await startTestGateway({ ...objects.env('gateway-files'), S3_KEY_PREFIX: 'deployment-a', UPLOAD_MAX_BYTES: String(9 * MiB) }, { clock: clock.now });
    ({ key } = await gw.fundedAccount(0));
  });
  afterEach(async () => gw.expectAuditClean());
  after(async () => {
    await gw?.close();
    await objects?.close();
  });

  it('streams an upload of several parts into the bucket and serves it back byte-identical by its signed link', async () => {
    const file = randomBytes(8 * MiB + 12_345);
    const res = await upload(gw.url, key, file, 'recording.bin');
    expect(res.status).to.equal(200);
    const uploaded = (await res.json()) as { url: string; bytes: number; id: string };
    expect(uploaded.bytes).to.equal(file.length);

    const objectKey = decodeURIComponent(new URL(uploaded.url).pathname.slice('/files/'.length));
    expect(await storedKeys(gw.config, 'uploads/'), 'in the bucket, under the prefix').to.deep.equal([objectKey]);
    expect(fs.existsSync(path.join(gw.config.dataDir, 'files')), 'nothing on the local disk').to.equal(false);
    expect(objects.unfinishedUploads('gateway-files'), 'the multipart upload completed').to.deep.equal([]);
    // The prefix is where s3rver keeps the object: deployment-a/uploads/...
    expect(fs.existsSync(path.join(objects.dir, 'gateway-files', 'deployment-a', 'uploads'))).to.equal(true);

    const download = await fetch(uploaded.url);
    expect(download.status).to.equal(200);
    expect(download.headers.get('content-length')).to.equal(String(file.length));
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).to.equal(sha256(file));
    const head = await fetch(uploaded.url, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(head.headers.get('content-length')).to.equal(String(file.length));

    const content = await fetch(`${gw.url}/v1/files/${uploaded.id}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(sha256(new Uint8Array(await content.arrayBuffer()))).to.equal(sha256(file));
  });

  it('refuses an upload that runs past the cap in its second part with 413, leaving no object and no unfinished upload', async () => {
    const before = await storedKeys(gw.config, 'uploads/');
    const res = await upload(gw.url, key, randomBytes(12 * MiB), 'too-big.bin');
    expect(res.status).to.equal(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('file_too_large');
    expect(await storedKeys(gw.config, 'uploads/')).to.deep.equal(before);
    expect(objects.unfinishedUploads('gateway-files'), 'the multipart upload was aborted').to.deep.equal([]);
  });

  it('keeps the gateway\'s link rules: expired and tampered links are refused with 403, a deleted file is 404', async () => {
    const stored = await gw.files.put('links/report.json', (async function* () {
      yield Buffer.from('{"ok":true}');
    })());
    expect(stored.sha256).to.equal(sha256(Buffer.from('{"ok":true}')));
    const link = gw.signer.url('links/report.json', 60_000);
    const fresh = await fetch(link.url);
    expect(fresh.status).to.equal(200);
    expect(fresh.headers.get('content-type')).to.match(/^application\/json/);
    expect(await fresh.text()).to.equal('{"ok":true}');

    const url = new URL(link.url);
    const flipped = url.searchParams.get('sig')!.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    const tampered = [
      link.url.replace(/sig=[0-9a-f]+/, `sig=${flipped}`),
      link.url.replace(/expires=\d+/, `expires=${Number(url.searchParams.get('expires')) + 3600}`),
      link.url.replace('report.json', 'other.json'),
    ];
    for (const bad of tampered) {
      const res = await fetch(bad);
      expect(res.status, bad).to.equal(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('invalid_signature');
    }

    clock.setOffset(61_000);
    try {
      const expired = await fetch(link.url);
      expect(expired.status).to.equal(403);
      expect(((await expired.json()) as { error: { code: string } }).error.code).to.equal('link_expired');
    } finally {
      clock.setOffset(0);
    }

    await gw.files.delete('links/report.json');
    const gone = await fetch(gw.signer.url('links/report.json', 60_000).url);
    expect(gone.status).to.equal(404);
    expect(((await gone.json()) as { error: { code: string } }).error.code).to.equal('file_not_found');
  });

  it('answers 503 file_store_unavailable, not 500, while the object store cannot be reached, and records no upload', async () => {
    const stopped = await startObjectStore(['gateway-files']);
    await stopped.close();
    const elsewhere = await startTestGateway({ ...stopped.env('gateway-files') });
    try {
      const res = await fetch(elsewhere.signer.url('uploads/anything.bin', 60_000).url);
      expect(res.status).to.equal(503);
      expect(res.headers.get('retry-after')).to.equal('5');
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('file_store_unavailable');
      const { key: uploader } = await elsewhere.fundedAccount(0);
      const refused = await upload(elsewhere.url, uploader, randomBytes(1000), 'small.bin');
      expect(refused.status).to.equal(503);
      expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('file_store_unavailable');
      expect((await elsewhere.api(uploader, 'GET', '/v1/files')).body.data).to.deep.equal([]);
      await elsewhere.expectAuditClean();
    } finally {
      await elsewhere.close();
    }
  });
});

describe('two gateway processes with their own DATA_DIRs on one bucket @integration', function () {
  this.timeout(180_000);
  const ADMIN_TOKEN = 'object-store-admin-token';
  let objects: RunningObjectStore;
  let database: Database;
  let gateways: GatewayProcess[] = [];

  before(async () => {
    objects = await startObjectStore(['shared-files']);
    database = await createTestDatabase(20, { withSchema: true });
    const env = (name: string) => ({
      ...objects.env('shared-files'),
      DATABASE_URL: database.url,
      DATA_DIR: testTempDir(`object-store-${name}-`),
      ADMIN_TOKEN,
      // Shared, as docs/operations.md asks: a link signed by one gateway is checked by another.
      URL_SIGNING_SECRET: 'object-store-signing-secret',
    });
    gateways = await Promise.all(['a', 'b'].map((name) => startGatewayProcess(name, env(name))));
  });
  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await database?.close();
    await objects?.close();
  });

  it('serves a file uploaded through one gateway from the other, and a delete through the other removes it for both', async () => {
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const account = await callJson(`${a.url}/admin/v1/accounts`, ADMIN_TOKEN, 'POST', { name: 'two processes' });
    const apiKey = (await callJson(`${a.url}/admin/v1/accounts/${account.body.id}/keys`, ADMIN_TOKEN, 'POST', {})).body.key as string;
    const file = randomBytes(6 * MiB);
    const res = await upload(a.url, apiKey, file, 'shared.bin');
    expect(res.status, a.output.slice(-5).join('\n')).to.equal(200);
    const uploaded = (await res.json()) as { id: string; url: string };

    // The link names gateway a (its listening URL): the same path and query at gateway b.
    const atB = new URL(uploaded.url);
    const linkAtB = `${b.url}${atB.pathname}${atB.search}`;
    const served = await fetch(linkAtB);
    expect(served.status).to.equal(200);
    expect(sha256(new Uint8Array(await served.arrayBuffer()))).to.equal(sha256(file));
    const content = await fetch(`${b.url}/v1/files/${uploaded.id}/content`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(content.status).to.equal(200);
    expect(sha256(new Uint8Array(await content.arrayBuffer()))).to.equal(sha256(file));

    expect((await callJson(`${b.url}/v1/files/${uploaded.id}`, apiKey, 'DELETE')).status).to.equal(200);
    expect((await fetch(uploaded.url)).status, 'gone at gateway a too').to.equal(404);
    for (const g of gateways) {
      const log = g.output.join('\n');
      expect(log, `${g.name} logs where its files are`).to.include('files are kept in an S3 bucket');
      expect(log, `${g.name} never logs the S3 secret`).to.not.include(objects.credentials.secretAccessKey);
    }
  });
});
