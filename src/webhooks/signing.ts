import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * X-Service-Signature: `sha256=` + hex HMAC-SHA256 of `<timestamp>.<raw body>`, keyed by the whole
 * webhook secret string (the `whsec_` prefix included) as UTF-8 bytes.
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return 'sha256=' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

/** The receiver's side, as the README shows it: constant-time compare, then a 5-minute window. */
export function verifyWebhook(secret: string, timestampHeader: string, body: string, signatureHeader: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const timestamp = Number(timestampHeader);
  if (!Number.isInteger(timestamp)) return false;
  const expected = Buffer.from(signWebhook(secret, timestamp, body));
  const given = Buffer.from(signatureHeader);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return false;
  return Math.abs(nowSeconds - timestamp) <= toleranceSeconds;
}
