import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { SealedCredentials } from '../domain/channel/events';

/** A sealed value this process cannot open: its key is not among CHANNEL_SECRETS_KEY and the previous keys, or it was tampered with. */
export class CredentialsUnreadableError extends Error {
  override readonly name = 'CredentialsUnreadableError';
}

interface DerivedKey {
  readonly id: string;
  readonly key: Buffer;
}

/**
 * The key material is derived from the operator's string with HKDF, so any long random string
 * (`openssl rand -base64 32`) serves; the key id is derived the same way under another label, so
 * it names a key without revealing anything of it.
 */
function derive(secret: string): DerivedKey {
  const ikm = Buffer.from(secret, 'utf8');
  const key = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), 'gateway channel credentials: aes-256-gcm', 32));
  const id = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), 'gateway channel credentials: key id', 6)).toString('hex');
  return { id, key };
}

/**
 * Seals under the current key, opens under it or any previous key. The channel's name is the
 * additional authenticated data: a ciphertext copied into another channel's stream does not open.
 */
export class CredentialCipher {
  private readonly current: DerivedKey;
  private readonly byId: ReadonlyMap<string, DerivedKey>;

  constructor(currentKey: string, previousKeys: readonly string[] = []) {
    this.current = derive(currentKey);
    this.byId = new Map([this.current, ...previousKeys.map(derive)].map((k) => [k.id, k]));
  }

  /** The id of the key new credentials are sealed under. */
  get currentKeyId(): string {
    return this.current.id;
  }

  seal(channel: string, plaintext: string): SealedCredentials {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(channel, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { key_id: this.current.id, ciphertext: [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.') };
  }

  open(channel: string, sealed: SealedCredentials): string {
    const key = this.byId.get(sealed.key_id);
    if (!key) throw new CredentialsUnreadableError(`channel ${channel}'s credentials are sealed under key ${sealed.key_id}, which is neither CHANNEL_SECRETS_KEY nor one of CHANNEL_SECRETS_PREVIOUS_KEYS`);
    const [iv, tag, body] = sealed.ciphertext.split('.').map((part) => Buffer.from(part, 'base64url'));
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.key, iv!);
      decipher.setAAD(Buffer.from(channel, 'utf8'));
      decipher.setAuthTag(tag!);
      return Buffer.concat([decipher.update(body!), decipher.final()]).toString('utf8');
    } catch {
      throw new CredentialsUnreadableError(`channel ${channel}'s credentials do not open under key ${sealed.key_id} (altered, or sealed for another channel)`);
    }
  }
}
