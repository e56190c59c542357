import { expect } from 'chai';
import { OpenApiUtil, $OpenApiUtil } from '@alicloud/openapi-core';
import Tingwu, { CreateTaskRequest } from '@alicloud/tingwu20230930';
import { acs3Date, signAcs3, verifyAcs3, type Acs3Credentials } from '../../src/upstreams/auth/acs3-signature';
import type { SignableRequest } from '../../src/upstreams/auth/signing';
import { recordingServer, type RecordingServer } from '../support/recording-server';
import { seededRandom as random } from '../support/seeded-random';

const ALPHABET = "abcXYZ019-_.~ !'()*&=+/?%#:;,@$\t 中文é😀";

/** A request, credentials, clock and nonce, generated from a seed. */
function generated(seed: number): { request: SignableRequest; credentials: Acs3Credentials; now: Date; nonce: string } {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const text = (max: number) => Array.from({ length: Math.floor(next() * max) }, () => pick([...ALPHABET])).join('');
  const query: Record<string, string> = {};
  for (let i = Math.floor(next() * 5); i > 0; i--) query[`${pick(['type', 'operation', 'A', 'b', 'Z.1'])}${text(3).replace(/[^A-Za-z]/g, '')}`] = text(12);
  const headers: Record<string, string> = { host: pick(['tingwu.cn-beijing.aliyuncs.com', '127.0.0.1:8090']), 'x-acs-action': pick(['CreateTask', 'GetTaskInfo']), 'x-acs-version': '2023-09-30' };
  for (let i = Math.floor(next() * 5); i > 0; i--) {
    // Unsigned ones, signed ones, and names told apart by case alone (the SDK joins their values).
    headers[pick(['content-type', 'Content-Type', 'accept', 'user-agent', 'x-acs-trace', 'X-Acs-Trace', 'x-acs-credentials-provider'])] = `${pick(['', ' ', '  '])}${text(10).replace(/[^\x20-\x7e]/g, 'x')}${pick(['', ' '])}`;
  }
  const body = pick([undefined, '', JSON.stringify({ AppKey: text(8), Input: { FileUrl: `https://x.example/${text(6)}`, SourceLanguage: 'cn' } }), text(30)]);
  return {
    request: { method: pick(['GET', 'PUT', 'POST', 'DELETE']), pathname: pick(['/openapi/tingwu/v2/tasks', '/openapi/tingwu/v2/tasks/c5394c6e%2Bx*y%7Ez', '/a+b/c']), query, headers, ...(body === undefined ? {} : { body }) },
    credentials: { accessKeyId: `LTAI${Math.floor(next() * 1e9)}`, accessKeySecret: `${text(8)}secret${Math.floor(next() * 1e6)}` },
    now: new Date(Date.UTC(2020, 0, 1) + Math.floor(next() * 2e11)),
    nonce: Math.floor(next() * 1e15).toString(16),
  };
}

/** A request body's bytes, as the SDK hashes them. */
const bytesOf = (body: string | Uint8Array | undefined): Buffer => (typeof body === 'string' || body === undefined ? Buffer.from(body ?? '', 'utf8') : Buffer.from(body));

/** The official SDK core's Authorization for the same request, with the headers the signature adds. */
function officialAuthorization(request: SignableRequest, added: Record<string, string>, credentials: Acs3Credentials): string {
  const { authorization: _own, ...signing } = added;
  const sdkRequest = { method: request.method, pathname: request.pathname, query: { ...request.query }, headers: { ...request.headers, ...signing } };
  const payload = OpenApiUtil.hash(bytesOf(request.body), 'ACS3-HMAC-SHA256').toString('hex');
  return OpenApiUtil.getAuthorization(sdkRequest as never, 'ACS3-HMAC-SHA256', payload, credentials.accessKeyId, credentials.accessKeySecret);
}

describe('Alibaba Cloud ACS3-HMAC-SHA256 request signature', () => {
  it("signs byte-identically to @alicloud/openapi-core's getAuthorization over 2000 generated requests (body hash, date, nonce, Authorization)", () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const { request, credentials, now, nonce } = generated(seed);
      const added = signAcs3(request, credentials, now, nonce);
      expect(Object.keys(added), `seed ${seed}`).to.deep.equal(['x-acs-date', 'x-acs-signature-nonce', 'x-acs-content-sha256', 'authorization']);
      expect(added['x-acs-content-sha256'], `seed ${seed}`).to.equal(OpenApiUtil.hash(bytesOf(request.body), 'ACS3-HMAC-SHA256').toString('hex'));
      expect([added['x-acs-date'], added['x-acs-signature-nonce']]).to.deep.equal([acs3Date(now), nonce]);
      expect(added.authorization, `seed ${seed}`).to.equal(officialAuthorization(request, added, credentials));
    }
  });

  it('writes x-acs-date as the SDK does: the UTC second, no milliseconds', () => {
    expect(acs3Date(new Date('2026-12-05T17:00:09.999Z'))).to.equal('2026-12-05T17:00:09Z');
  });

  describe('the official Tingwu SDK, clock and nonce pinned, against the gateway signer', () => {
    const credentials: Acs3Credentials = { accessKeyId: 'LTAI5tSimulatedKey', accessKeySecret: 'simulated-secret' };
    let server: RecordingServer;
    const restore: (() => void)[] = [];

    before(async () => {
      server = await recordingServer((_request, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ RequestId: 'r-1', Code: '0', Message: 'success', Data: { TaskId: 'c5394c6ee0fb474899d42215a3925c7e', TaskStatus: 'ONGOING' } }));
      });
      // The SDK reads the clock and draws the nonce through these two: pinned, its request is reproducible.
      const utils = OpenApiUtil as unknown as { getTimestamp: () => string; getNonce: () => string };
      const { getTimestamp, getNonce } = utils;
      utils.getTimestamp = () => '2026-12-05T17:00:00Z';
      utils.getNonce = () => '3f1c0e5ad0b94c9a8d6e2b7f41a0c9d2';
      restore.push(() => Object.assign(utils, { getTimestamp, getNonce }));
    });
    after(async () => {
      for (const undo of restore) undo();
      await server.close();
    });

    it('adds the same x-acs-date, nonce, body hash and Authorization to CreateTask and GetTaskInfo as the SDK sent', async () => {
      const client = new Tingwu(new $OpenApiUtil.Config({ ...credentials, endpoint: new URL(server.url).host, protocol: 'http' }));
      await client.createTask(
        new CreateTaskRequest({
          type: 'offline',
          appKey: 'your-tingwu-app-key',
          input: { sourceLanguage: 'cn', fileUrl: 'https://media.example.com/会议 1.mp3?x=1&y=(2)', taskKey: 'mins_01' },
          parameters: { transcription: { diarizationEnabled: true, diarization: { speakerCount: 2 } }, summarizationEnabled: true, summarization: { types: ['Paragraph'] } },
        }),
      );
      await client.getTaskInfo('c5394c6ee0fb474899d42215a3925c7e');
      expect(server.seen.map((s) => `${s.method} ${s.url}`)).to.deep.equal(['PUT /openapi/tingwu/v2/tasks?type=offline', 'GET /openapi/tingwu/v2/tasks/c5394c6ee0fb474899d42215a3925c7e']);
      for (const request of server.seen) {
        const url = new URL(request.url, 'http://sdk');
        const sent = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
        const { authorization, 'x-acs-date': date, 'x-acs-signature-nonce': nonce, 'x-acs-content-sha256': hash, ...rest } = sent;
        const ours = signAcs3(
          { method: request.method, pathname: url.pathname, query: Object.fromEntries(url.searchParams), headers: rest, ...(request.body.length > 0 ? { body: request.body } : {}) },
          credentials,
          new Date('2026-12-05T17:00:00Z'),
          '3f1c0e5ad0b94c9a8d6e2b7f41a0c9d2',
        );
        expect(ours, `${request.method} ${request.url}`).to.deep.equal({ 'x-acs-date': date, 'x-acs-signature-nonce': nonce, 'x-acs-content-sha256': hash, authorization });
        expect(rest['x-acs-version']).to.equal('2023-09-30');
      }
      expect(server.seen.map((s) => s.headers['x-acs-action'])).to.deep.equal(['CreateTask', 'GetTaskInfo']);
    });
  });

  describe('verifyAcs3 (the simulated provider’s check)', () => {
    const credentials: Acs3Credentials = { accessKeyId: 'LTAIsim', accessKeySecret: 'sim-secret' };
    const now = new Date('2026-12-05T17:00:00Z');
    const base: SignableRequest = {
      method: 'PUT',
      pathname: '/openapi/tingwu/v2/tasks',
      query: { type: 'offline' },
      headers: { host: 'tingwu.cn-beijing.aliyuncs.com', 'x-acs-action': 'CreateTask', 'x-acs-version': '2023-09-30', 'content-type': 'application/json' },
      body: '{"AppKey":"k"}',
    };
    const received = (request: SignableRequest, nonce = 'n-1', signedAt = now): SignableRequest => ({
      ...request,
      headers: Object.fromEntries(Object.entries({ ...request.headers, ...signAcs3(request, credentials, signedAt, nonce) }).map(([k, v]) => [k.toLowerCase(), v])),
    });
    const secretOf = (id: string) => (id === credentials.accessKeyId ? credentials.accessKeySecret : undefined);
    const verdict = (request: SignableRequest, options: { at?: Date; nonceSeen?: (n: string) => boolean } = {}) => {
      const result = verifyAcs3(request, { secretOf, now: options.at ?? now, ...(options.nonceSeen ? { nonceSeen: options.nonceSeen } : {}) });
      return result.ok ? 'accepted' : result.code;
    };

    it('accepts a request signed with a known key', () => {
      expect(verifyAcs3(received(base), { secretOf, now })).to.deep.equal({ ok: true, accessKeyId: 'LTAIsim' });
    });

    it('refuses a changed body, query, path, method or signed header, an unknown key, a stale date, an unsigned x-acs header, a replayed nonce and no signature', () => {
      const signed = received(base);
      expect(verdict({ ...signed, body: '{"AppKey":"j"}' })).to.equal('IncompleteSignature');
      expect(verdict({ ...signed, body: '{"AppKey":"j"}', headers: { ...signed.headers, 'x-acs-content-sha256': signAcs3({ ...base, body: '{"AppKey":"j"}' }, credentials, now, 'x')['x-acs-content-sha256']! } })).to.equal('SignatureDoesNotMatch');
      expect(verdict({ ...signed, query: { type: 'realtime' } })).to.equal('SignatureDoesNotMatch');
      expect(verdict({ ...signed, pathname: '/openapi/tingwu/v2/tasks/x' })).to.equal('SignatureDoesNotMatch');
      expect(verdict({ ...signed, method: 'POST' })).to.equal('SignatureDoesNotMatch');
      expect(verdict({ ...signed, headers: { ...signed.headers, 'x-acs-action': 'GetTaskInfo' } })).to.equal('SignatureDoesNotMatch');
      expect(verdict({ ...signed, headers: { ...signed.headers, 'x-acs-extra': '1' } })).to.equal('IncompleteSignature');
      expect(verdict(received(base, 'n-2', new Date('2026-12-05T16:30:00Z')))).to.equal('InvalidTimeStamp.Expired');
      expect(verdict({ ...signed, headers: { ...signed.headers, authorization: signed.headers!.authorization!.replace('LTAIsim', 'LTAIother') } })).to.equal('InvalidAccessKeyId.NotFound');
      expect(verdict({ ...signed, headers: { ...signed.headers, authorization: 'Bearer x' } })).to.equal('IncompleteSignature');
      expect(verdict(base)).to.equal('IncompleteSignature');
      const nonces = new Set<string>();
      const nonceSeen = (n: string) => nonces.has(n) || (nonces.add(n), false);
      expect([verdict(signed, { nonceSeen }), verdict(signed, { nonceSeen }), verdict(received(base, 'n-3'), { nonceSeen })]).to.deep.equal(['accepted', 'SignatureNonceUsed', 'accepted']);
      // An unsigned header may change on the way (a proxy's user-agent), as the provider allows.
      expect(verdict({ ...signed, headers: { ...signed.headers, 'user-agent': 'proxy/1.0' } })).to.equal('accepted');
    });
  });
});
