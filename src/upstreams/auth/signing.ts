/**
 * What the providers' request signatures share (Volcengine's, Alibaba Cloud's ACS3): the request
 * as it is signed, the digests and the escaping, one definition each, on node:crypto.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** A request as it goes on the wire: the full URL path (the base URL's prefix included). */
export interface SignableRequest {
  readonly method: string;
  readonly pathname: string;
  readonly query?: Readonly<Record<string, string>>;
  /** The headers sent besides the ones the signature adds. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The body's exact bytes (a JSON body as the string sent); absent for none. */
  readonly body?: string | Uint8Array;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export function hmacSha256(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** RFC 3986 escaping: encodeURIComponent, plus the five characters it leaves (`!'()*`). */
export function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Two signatures compared in constant time (a different length is a mismatch at once). */
export function sameSignature(expected: string, given: string): boolean {
  return expected.length === given.length && timingSafeEqual(Buffer.from(expected), Buffer.from(given));
}
