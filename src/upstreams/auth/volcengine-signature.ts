/**
 * Volcengine's request signature (HMAC-SHA256, the "V4"-like scheme every Volcengine OpenAPI takes):
 * https://www.volcengine.com/docs/6369/67269 (签名方法). Written from the reference and the official
 * Signer of `@volcengine/openapi` (lib/base/sign.js), and proven byte-identical to that Signer over
 * generated requests (test/unit/volcengine-signature.test.ts). A signer of our own rather than the SDK
 * at run time: the SDK brings axios 0.21, crypto-js and protobufjs for what is forty lines on
 * node:crypto; the SDK stays a devDependency, the proof's reference.
 *
 * Signed: the method, the path, the query (keys sorted, RFC 3986 escaped), every header the request
 * carries except the SDK's unsignable ones (`authorization`, `content-type`, `content-length`,
 * `user-agent`, `presigned-expires`, `expect`), and the body's SHA-256.
 */
import { hmacSha256 as hmac, rfc3986 as uriEscape, sameSignature, sha256Hex, type SignableRequest } from './signing';

export type { SignableRequest } from './signing';

export interface VolcengineCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** e.g. `cn-beijing` */
  readonly region: string;
  /** e.g. `ark` */
  readonly service: string;
  /** An STS session token, sent as X-Security-Token (and signed) when present. */
  readonly sessionToken?: string;
}

const ALGORITHM = 'HMAC-SHA256';
const UNSIGNABLE = new Set(['authorization', 'content-type', 'content-length', 'user-agent', 'presigned-expires', 'expect']);

/**
 * The headers to add to `request` so Volcengine accepts it: X-Date, X-Content-Sha256 (when there is
 * a body), X-Security-Token (with a session token) and Authorization.
 */
export function signVolcengine(request: SignableRequest, credentials: VolcengineCredentials, now: Date): Record<string, string> {
  const date = signingDate(now);
  const added: Record<string, string> = { 'X-Date': date };
  if (credentials.sessionToken) added['X-Security-Token'] = credentials.sessionToken;
  // The SDK adds the body's hash for any body but an empty string (an empty buffer counts).
  const hasBody = request.body !== undefined && request.body !== '';
  const bodyHash = sha256Hex(request.body ?? '');
  if (hasBody) added['X-Content-Sha256'] = bodyHash;
  const headers = { ...request.headers, ...added };
  const signed = signedHeaderNames(headers);
  const signature = signatureOf(request, headers, signed, bodyHash, date, credentials);
  added.Authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${scopeOf(date, credentials)}, SignedHeaders=${signed.join(';')}, Signature=${signature}`;
  return added;
}

/** Why a signed request was refused; the codes are the simulator's, named after Volcengine's common errors. */
export type VolcengineRefusal =
  | { readonly ok: false; readonly code: 'MissingAuthenticationToken' | 'InvalidAuthorization' | 'InvalidAccessKey' | 'InvalidTimestamp' | 'SignatureDoesNotMatch'; readonly message: string }
  | { readonly ok: true; readonly accessKeyId: string; readonly region: string; readonly service: string };

export interface VerifyOptions {
  /** The secret of an access key id, or undefined for a key the provider does not know. */
  readonly secretOf: (accessKeyId: string) => string | undefined;
  readonly now: Date;
  /** How far X-Date may be from now (default 15 minutes; the provider's own window is not checked). */
  readonly maxSkewMs?: number;
}

/**
 * Checks a received request's signature as the provider would: the credential scope, the date's
 * freshness, the body's hash, and the signature over the headers it names. `request.headers` are
 * the received ones, lower-cased.
 */
export function verifyVolcengine(request: SignableRequest, options: VerifyOptions): VolcengineRefusal {
  const headers = request.headers ?? {};
  const authorization = headers.authorization;
  if (!authorization) return { ok: false, code: 'MissingAuthenticationToken', message: 'the request carries no Authorization header' };
  const parsed = /^HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/request, SignedHeaders=([a-z0-9;_-]*), Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!parsed) return { ok: false, code: 'InvalidAuthorization', message: 'the Authorization header is not a Volcengine HMAC-SHA256 signature' };
  const [accessKeyId, day, region, service, signedList, signature] = parsed.slice(1).map((part) => part ?? '') as [string, string, string, string, string, string];
  const secret = options.secretOf(accessKeyId);
  if (secret === undefined) return { ok: false, code: 'InvalidAccessKey', message: `the access key ${accessKeyId} is not valid` };
  const date = headers['x-date'] ?? '';
  const at = parseSigningDate(date);
  if (at === null || date.slice(0, 8) !== day || Math.abs(options.now.getTime() - at) > (options.maxSkewMs ?? 15 * 60_000)) {
    return { ok: false, code: 'InvalidTimestamp', message: 'X-Date is missing, malformed or too far from the current time' };
  }
  const bodyHash = sha256Hex(request.body ?? '');
  const claimed = headers['x-content-sha256'];
  const signed = signedList === '' ? [] : signedList.split(';');
  if ((claimed !== undefined && claimed !== bodyHash) || !signed.includes('x-date')) {
    return { ok: false, code: 'SignatureDoesNotMatch', message: 'the request signature does not match' };
  }
  const expected = signatureOf(request, headers, signed, bodyHash, date, { secretAccessKey: secret, region, service });
  return sameSignature(expected, signature) ? { ok: true, accessKeyId, region, service } : { ok: false, code: 'SignatureDoesNotMatch', message: 'the request signature does not match' };
}

/** `20261205T170000Z`: the ISO instant without separators or milliseconds. */
function signingDate(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[:-]/g, '');
}

function parseSigningDate(date: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  if (!m) return null;
  const at = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  return Number.isNaN(at) ? null : at;
}

function scopeOf(date: string, c: Pick<VolcengineCredentials, 'region' | 'service'>): string {
  return `${date.slice(0, 8)}/${c.region}/${c.service}/request`;
}

/** The lower-cased names of the signable headers, sorted. */
function signedHeaderNames(headers: Readonly<Record<string, string>>): string[] {
  return Object.keys(headers).map((k) => k.toLowerCase()).filter((k) => !UNSIGNABLE.has(k)).sort();
}

function signatureOf(
  request: SignableRequest,
  headers: Readonly<Record<string, string>>,
  signed: readonly string[],
  bodyHash: string,
  date: string,
  credentials: Pick<VolcengineCredentials, 'secretAccessKey' | 'region' | 'service'>,
): string {
  const byName = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const canonicalHeaders = signed.map((name) => `${name}:${(byName.get(name) ?? '').replace(/\s+/g, ' ').trim()}`).join('\n');
  const canonical = [request.method.toUpperCase(), request.pathname || '/', canonicalQuery(request.query ?? {}), `${canonicalHeaders}\n`, signed.join(';'), bodyHash].join('\n');
  const stringToSign = [ALGORITHM, date, scopeOf(date, credentials), sha256Hex(canonical)].join('\n');
  const key = [date.slice(0, 8), credentials.region, credentials.service, 'request'].reduce<Buffer | string>((k, part) => hmac(k, part), credentials.secretAccessKey);
  return hmac(key, stringToSign).toString('hex');
}

/** Keys sorted (as the SDK sorts them: a JavaScript object's own key order after sorting), each `k=v` escaped. */
function canonicalQuery(query: Readonly<Record<string, string>>): string {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(query).sort()) sorted[key] = query[key]!;
  return Object.keys(sorted).map((key) => `${uriEscape(key)}=${uriEscape(sorted[key]!)}`).join('&');
}
