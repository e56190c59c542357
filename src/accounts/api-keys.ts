import { hash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'tr-';

/** `tr-` followed by 43 URL-safe characters (32 random bytes). */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * Keys carry 256 random bits, so a fast hash is enough: nobody can brute-force a preimage, and
 * authentication stays a single indexed lookup. Only this hash is ever stored. Hashed on every
 * request (the key cache is by hash): the one-shot `hash` spares the Hash object of `createHash`.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The first characters of a key, kept so that a holder can tell their keys apart. */
export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 6);
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX) && value.length >= API_KEY_PREFIX.length + 32 && /^[A-Za-z0-9_-]+$/.test(value.slice(API_KEY_PREFIX.length));
}

export function generateWebhookSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64');
}
