import { expect } from 'chai';
import Signer from '@volcengine/openapi/lib/base/sign';
import { signVolcengine, verifyVolcengine, type SignableRequest, type VolcengineCredentials } from '../../src/upstreams/auth/volcengine-signature';
import { seededRandom as random } from '../support/seeded-random';

const ALPHABET = "abcXYZ019-_.~ !'()*&=+/?%#:;,@$\t 中文é😀";

function generated(seed: number): { request: SignableRequest; credentials: VolcengineCredentials; now: Date } {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const text = (max: number) => Array.from({ length: Math.floor(next() * max) }, () => pick([...ALPHABET])).join('');
  // Query keys start with a letter: the SDK keeps them in a plain object, which orders integer-like keys first.
  const query: Record<string, string> = {};
  for (let i = Math.floor(next() * 6); i > 0; i--) query[`${pick(['Action', 'Version', 'a', 'B', 'z', 'Filter.1'])}${text(4)}`] = text(12);
  const headers: Record<string, string> = {};
  for (let i = Math.floor(next() * 5); i > 0; i--) {
    headers[pick(['Content-Type', 'Host', 'X-Custom', 'x-trace-id', 'Accept', 'User-Agent'])] = `${pick(['', ' ', '  '])}${text(10).replace(/[^\x20-\x7e]/g, 'x')}${pick(['', ' '])}`;
  }
  const body = pick([undefined, '', JSON.stringify({ Name: text(20), Tags: [text(5)], n: Math.floor(next() * 1000) }), text(30)]);
  const credentials: VolcengineCredentials = {
    accessKeyId: `AKLT${Math.floor(next() * 1e9)}`,
    secretAccessKey: `${text(8)}secret${Math.floor(next() * 1e6)}`,
    region: pick(['cn-beijing', 'cn-north-1', 'ap-southeast-1']),
    service: pick(['ark', 'iam', 'vod']),
    ...(next() < 0.3 ? { sessionToken: `STS${Math.floor(next() * 1e9)}` } : {}),
  };
  const request: SignableRequest = {
    method: pick(['GET', 'POST', 'DELETE']),
    pathname: pick(['/', '/api/v3/contents/generations/tasks', '/path with space/and%20escapes']),
    query,
    headers,
    ...(body === undefined ? {} : { body }),
  };
  return { request, credentials, now: new Date(Date.UTC(2020, 0, 1) + Math.floor(next() * 2e11)) };
}

/** The headers the official Signer adds to the same request. */
function official(request: SignableRequest, credentials: VolcengineCredentials, now: Date): Record<string, string> {
  const sdkRequest = { region: credentials.region, method: request.method, pathname: request.pathname, params: { ...request.query }, headers: { ...request.headers }, body: request.body };
  new Signer(sdkRequest, credentials.service).addAuthorization({ accessKeyId: credentials.accessKeyId, secretKey: credentials.secretAccessKey, sessionToken: credentials.sessionToken }, now);
  const added: Record<string, string> = {};
  for (const [name, value] of Object.entries(sdkRequest.headers as Record<string, string>)) if (!(name in (request.headers ?? {}))) added[name] = String(value);
  return added;
}

describe('Volcengine request signature', () => {
  it('adds byte-identical headers (Authorization, X-Date, X-Content-Sha256, X-Security-Token) to the official Signer of @volcengine/openapi over 2000 generated requests', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const { request, credentials, now } = generated(seed);
      expect(signVolcengine(request, credentials, now), `seed ${seed}`).to.deep.equal(official(request, credentials, now));
    }
  });

  it('signs a body given as bytes like the same body as text', () => {
    const { credentials, now } = generated(7);
    const text = JSON.stringify({ Name: '资产组', Description: 'x' });
    const request = { method: 'POST', pathname: '/', query: { Action: 'CreateAssetGroup', Version: '2024-01-01' } };
    expect(signVolcengine({ ...request, body: new TextEncoder().encode(text) }, credentials, now)).to.deep.equal(signVolcengine({ ...request, body: text }, credentials, now));
  });

  describe('verifyVolcengine (the simulated provider’s check)', () => {
    const credentials: VolcengineCredentials = { accessKeyId: 'AKLTsim', secretAccessKey: 'sim-secret', region: 'cn-beijing', service: 'ark' };
    const now = new Date('2026-12-05T17:00:00Z');
    const base: SignableRequest = { method: 'POST', pathname: '/', query: { Action: 'GetAsset', Version: '2024-01-01' }, headers: { 'content-type': 'application/json' }, body: '{"Id":"a-1"}' };
    const received = (request: SignableRequest, signedAt = now): SignableRequest => ({
      ...request,
      headers: Object.fromEntries(Object.entries({ ...request.headers, ...signVolcengine(request, credentials, signedAt) }).map(([k, v]) => [k.toLowerCase(), v])),
    });
    const secretOf = (id: string) => (id === credentials.accessKeyId ? credentials.secretAccessKey : undefined);

    it('accepts a request signed with a known key, and tells the region and service it is signed for', () => {
      expect(verifyVolcengine(received(base), { secretOf, now })).to.deep.equal({ ok: true, accessKeyId: 'AKLTsim', region: 'cn-beijing', service: 'ark' });
    });

    it('refuses a changed body, query, method or signed header, an unknown key, a stale date and a missing signature', () => {
      const signed = received(base);
      const code = (request: SignableRequest, at = now) => {
        const result = verifyVolcengine(request, { secretOf, now: at });
        return result.ok ? 'accepted' : result.code;
      };
      expect(code({ ...signed, body: '{"Id":"a-2"}' })).to.equal('SignatureDoesNotMatch');
      expect(code({ ...signed, query: { Action: 'DeleteAsset', Version: '2024-01-01' } })).to.equal('SignatureDoesNotMatch');
      expect(code({ ...signed, method: 'GET' })).to.equal('SignatureDoesNotMatch');
      expect(code({ ...signed, headers: { ...signed.headers, 'x-date': '20261205T170001Z' } })).to.equal('SignatureDoesNotMatch');
      expect(code(received(base), new Date('2026-12-05T18:00:00Z'))).to.equal('InvalidTimestamp');
      expect(code({ ...signed, headers: { ...signed.headers, authorization: signed.headers!.authorization!.replace('AKLTsim', 'AKLTother') } })).to.equal('InvalidAccessKey');
      expect(code({ ...signed, headers: { ...signed.headers, authorization: 'Bearer x' } })).to.equal('InvalidAuthorization');
      expect(code({ ...base, headers: {} })).to.equal('MissingAuthenticationToken');
      // The unsigned content-type may change on the way (a proxy's charset), as the provider allows.
      expect(code({ ...signed, headers: { ...signed.headers, 'content-type': 'application/json; charset=utf-8' } })).to.equal('accepted');
    });
  });
});
