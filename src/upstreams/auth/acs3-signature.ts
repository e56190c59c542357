/**
 * Alibaba Cloud's V3 request signature, ACS3-HMAC-SHA256, which every Alibaba Cloud OpenAPI takes
 * (Tingwu's among them): https://www.alibabacloud.com/help/en/sdk/product-overview/v3-request-structure-and-signature
 * (中文: https://help.aliyun.com/zh/sdk/product-overview/v3-request-structure-and-signature).
 * Written from the reference and the signing of the official SDK core, `@alicloud/openapi-core`
 * (dist/utils.js `getAuthorization`, dist/client.js `doRequest`), and proven byte-identical to it
 * for the same request, clock and nonce (test/unit/acs3-signature.test.ts). Our own, on node:crypto,
 * rather than the SDK at run time: the SDK core brings its credential providers and HTTP stack for
 * what is a canonical request and one HMAC; the SDK stays a devDependency, the proof's reference.
 *
 * Signed: the method, the path (`+` `*` `%7E` respelt as the SDK does), the query (keys sorted, each
 * value RFC 3986 escaped, the key as it is), the headers `host`, `content-type` and every `x-acs-*`
 * one (names lower-cased and sorted, values trimmed, a repeated name's values sorted and joined by
 * commas), and the body's SHA-256, which the request also carries as `x-acs-content-sha256`.
 */
import { hmacSha256, rfc3986, sameSignature, sha256Hex, type SignableRequest } from './signing';

/** An AccessKey pair of an Alibaba Cloud account or RAM user. */
export interface Acs3Credentials {
  readonly accessKeyId: string;
  readonly accessKeySecret: string;
}

export const ACS3_ALGORITHM = 'ACS3-HMAC-SHA256';

/**
 * The headers to add to `request` (whose headers must hold `host`, and the operation's
 * `x-acs-action` and `x-acs-version`) so Alibaba Cloud accepts it: `x-acs-date`,
 * `x-acs-signature-nonce` (a value never sent before: the provider refuses a nonce it has seen),
 * `x-acs-content-sha256` and `authorization`.
 */
export function signAcs3(request: SignableRequest, credentials: Acs3Credentials, now: Date, nonce: string): Record<string, string> {
  const payloadHash = sha256Hex(request.body ?? '');
  const added: Record<string, string> = { 'x-acs-date': acs3Date(now), 'x-acs-signature-nonce': nonce, 'x-acs-content-sha256': payloadHash };
  const { canonicalHeaders, signedHeaders } = headersToSign({ ...request.headers, ...added });
  const signature = signatureOf(request, canonicalHeaders, signedHeaders, payloadHash, credentials.accessKeySecret);
  added.authorization = `${ACS3_ALGORITHM} Credential=${credentials.accessKeyId},SignedHeaders=${signedHeaders.join(';')},Signature=${signature}`;
  return added;
}

/**
 * Why a signed request was refused. The codes are Alibaba Cloud's common ones
 * (https://help.aliyun.com/zh/sdk/product-overview/v3-request-structure-and-signature lists the
 * signature's own): the simulated provider answers them; their HTTP statuses are not checked
 * against the provider.
 */
export type Acs3Verdict =
  | {
      readonly ok: false;
      readonly code: 'IncompleteSignature' | 'InvalidAccessKeyId.NotFound' | 'InvalidTimeStamp.Expired' | 'SignatureNonceUsed' | 'SignatureDoesNotMatch';
      readonly message: string;
    }
  | { readonly ok: true; readonly accessKeyId: string };

export interface Acs3VerifyOptions {
  /** The secret of an AccessKey id, or undefined for a key the provider does not know. */
  readonly secretOf: (accessKeyId: string) => string | undefined;
  readonly now: Date;
  /** Whether a nonce was seen before (and remembers this one); absent: nonces are not checked. */
  readonly nonceSeen?: (nonce: string) => boolean;
  /** How far x-acs-date may be from now (default 15 minutes; the provider's own window is not checked). */
  readonly maxSkewMs?: number;
}

const AUTHORIZATION = /^ACS3-HMAC-SHA256 Credential=([^,\s]+),SignedHeaders=([a-z0-9;._-]*),Signature=([0-9a-f]{64})$/;

/**
 * Checks a received request's signature as the provider would: the form of `authorization`, the
 * key, the date's freshness, the nonce, the body's hash, that every `x-acs-*` header and `host` are
 * signed, and the signature itself. `request.headers` are the received ones, lower-cased.
 */
export function verifyAcs3(request: SignableRequest, options: Acs3VerifyOptions): Acs3Verdict {
  const headers = request.headers ?? {};
  const parsed = AUTHORIZATION.exec(headers.authorization ?? '');
  if (!parsed) return { ok: false, code: 'IncompleteSignature', message: 'the request carries no ACS3-HMAC-SHA256 Authorization header' };
  const [accessKeyId, signedList, signature] = [parsed[1]!, parsed[2]!, parsed[3]!];
  const secret = options.secretOf(accessKeyId);
  if (secret === undefined) return { ok: false, code: 'InvalidAccessKeyId.NotFound', message: `Specified access key is not found: ${accessKeyId}` };
  const signed = signedList.split(';');
  const unsigned = Object.keys(headers).filter((name) => (name.startsWith('x-acs-') || name === 'host') && !signed.includes(name));
  const payloadHash = sha256Hex(request.body ?? '');
  if (unsigned.length > 0 || !signed.includes('x-acs-date') || !signed.includes('x-acs-signature-nonce') || headers['x-acs-content-sha256'] !== payloadHash) {
    return { ok: false, code: 'IncompleteSignature', message: `the signature must cover host and every x-acs-* header, and x-acs-content-sha256 the body${unsigned.length > 0 ? ` (unsigned: ${unsigned.join(', ')})` : ''}` };
  }
  const at = parseAcs3Date(headers['x-acs-date'] ?? '');
  if (at === null || Math.abs(options.now.getTime() - at) > (options.maxSkewMs ?? 15 * 60_000)) {
    return { ok: false, code: 'InvalidTimeStamp.Expired', message: 'Specified time stamp or date value is expired.' };
  }
  const { canonicalHeaders, signedHeaders } = headersToSign(Object.fromEntries(signed.map((name) => [name, headers[name] ?? ''])));
  const expected = signatureOf(request, canonicalHeaders, signedHeaders, payloadHash, secret);
  if (!sameSignature(expected, signature)) return { ok: false, code: 'SignatureDoesNotMatch', message: 'Specified signature is not matched with our calculation.' };
  // Only a correctly signed request spends its nonce: a forged one cannot burn a client's.
  if (options.nonceSeen?.(headers['x-acs-signature-nonce'] ?? '')) return { ok: false, code: 'SignatureNonceUsed', message: 'Specified signature nonce was used already.' };
  return { ok: true, accessKeyId };
}

/** `2026-12-05T17:00:00Z`: the ISO instant without milliseconds, as the SDK writes x-acs-date. */
export function acs3Date(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function parseAcs3Date(date: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(date)) return null;
  const at = Date.parse(date);
  return Number.isNaN(at) ? null : at;
}

/** The signed headers (`host`, `content-type`, `x-acs-*`) as the canonical request lists them. */
function headersToSign(headers: Readonly<Record<string, string>>): { canonicalHeaders: string; signedHeaders: string[] } {
  const values = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower.startsWith('x-acs-') || lower === 'host' || lower === 'content-type') values.set(lower, [...(values.get(lower) ?? []), value.trim()]);
  }
  const signedHeaders = [...values.keys()].sort();
  const canonicalHeaders = signedHeaders.map((name) => `${name}:${values.get(name)!.sort().join(',')}\n`).join('');
  return { canonicalHeaders, signedHeaders };
}

function signatureOf(request: SignableRequest, canonicalHeaders: string, signedHeaders: readonly string[], payloadHash: string, secret: string): string {
  const canonicalRequest = [request.method.toUpperCase(), canonicalUri(request.pathname), canonicalQuery(request.query ?? {}), canonicalHeaders, signedHeaders.join(';'), payloadHash].join('\n');
  return hmacSha256(secret, `${ACS3_ALGORITHM}\n${sha256Hex(canonicalRequest)}`).toString('hex');
}

/** The path as sent, with the SDK's respellings: `+` as `%20`, `*` as `%2A`, `%7E` as `~`. */
function canonicalUri(pathname: string): string {
  return (pathname || '/').replace(/\+/g, '%20').replace(/\*/g, '%2A').replace(/%7E/g, '~');
}

/** `key=value` pairs, keys sorted and left as they are, values RFC 3986 escaped, joined by `&`. */
function canonicalQuery(query: Readonly<Record<string, string>>): string {
  return Object.keys(query)
    .sort()
    .map((key) => `${key}=${rfc3986(query[key]!)}`)
    .join('&');
}
