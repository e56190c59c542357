import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Expiring download links for stored files: `/files/<key>?expires=<unix s>&sig=<hex>` where the
 * signature is an HMAC-SHA256 of "<key>\n<expires>" with the gateway's URL signing secret. Anyone
 * holding the link may download until it expires, as with a pre-signed bucket URL; after that the
 * gateway answers 403.
 */
export class UrlSigner {
  constructor(
    private readonly secret: string,
    private readonly baseUrl: () => string,
    private readonly clock: () => Date,
  ) {}

  private signature(key: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${key}\n${expires}`).digest('hex');
  }

  url(key: string, ttlMs: number): { url: string; expiresAt: string } {
    const expires = Math.floor((this.clock().getTime() + ttlMs) / 1000);
    return {
      url: `${this.baseUrl()}/files/${key.split('/').map(encodeURIComponent).join('/')}?expires=${expires}&sig=${this.signature(key, expires)}`,
      expiresAt: new Date(expires * 1000).toISOString(),
    };
  }

  /**
   * A MAC of `value` for `scope` under the same secret, for other handles a client must not be able
   * to forge or carry across accounts (web Q&A conversation ids). 128 bits, base64url.
   */
  tag(scope: string, value: string): string {
    return createHmac('sha256', this.secret).update(`${scope}\n${value}`).digest().subarray(0, 16).toString('base64url');
  }

  /** Whether `tag` is tag(scope, value), in constant time. */
  hasTag(scope: string, value: string, tag: string): boolean {
    const expected = Buffer.from(this.tag(scope, value));
    const given = Buffer.from(tag);
    return given.length === expected.length && timingSafeEqual(expected, given);
  }

  /** 'ok', 'expired' or 'invalid'. The signature is checked first so expiry says nothing to a forger. */
  verify(key: string, expires: string | undefined, sig: string | undefined): 'ok' | 'expired' | 'invalid' {
    if (!expires || !sig || !/^\d+$/.test(expires) || !/^[0-9a-f]{64}$/.test(sig)) return 'invalid';
    const expected = Buffer.from(this.signature(key, Number(expires)), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) return 'invalid';
    return Number(expires) * 1000 < this.clock().getTime() ? 'expired' : 'ok';
  }
}
