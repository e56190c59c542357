import { expect } from 'chai';
import { CredentialCipher, CredentialsUnreadableError } from '../../src/channels/credential-cipher';
import { ConfigError, loadConfig } from '../../src/config';

const OLD = 'old-channel-secrets-key-0123456789abcdef';
const NEW = 'new-channel-secrets-key-0123456789abcdef';
const CREDENTIAL = JSON.stringify({ kind: 'bearer', apiKey: 'sk-the-provider-key-0123456789' });

describe('the channel credential cipher (AES-256-GCM)', () => {
  it('seals so that the ciphertext holds nothing of the credential, and opens it again', () => {
    const cipher = new CredentialCipher(NEW);
    const sealed = cipher.seal('default', CREDENTIAL);
    expect(sealed.key_id).to.equal(cipher.currentKeyId);
    expect(JSON.stringify(sealed)).to.not.include('sk-the-provider-key');
    expect(cipher.open('default', sealed)).to.equal(CREDENTIAL);
    expect(cipher.seal('default', CREDENTIAL).ciphertext, 'a fresh IV each time').to.not.equal(sealed.ciphertext);
  });

  it('names each key by an id of its own, and opens what an earlier key sealed while it is a previous key', () => {
    const old = new CredentialCipher(OLD);
    const sealed = old.seal('default', CREDENTIAL);
    const rotated = new CredentialCipher(NEW, [OLD]);
    expect(rotated.currentKeyId).to.not.equal(old.currentKeyId);
    expect(rotated.open('default', sealed)).to.equal(CREDENTIAL);
    expect(() => new CredentialCipher(NEW).open('default', sealed)).to.throw(CredentialsUnreadableError, /neither CHANNEL_SECRETS_KEY nor one of CHANNEL_SECRETS_PREVIOUS_KEYS/);
  });

  it('refuses a ciphertext altered or moved to another channel', () => {
    const cipher = new CredentialCipher(NEW);
    const sealed = cipher.seal('default', CREDENTIAL);
    expect(() => cipher.open('backup', sealed)).to.throw(CredentialsUnreadableError);
    const [iv, tag, body] = sealed.ciphertext.split('.');
    const flipped = Buffer.from(body!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => cipher.open('default', { ...sealed, ciphertext: [iv, tag, flipped.toString('base64url')].join('.') })).to.throw(CredentialsUnreadableError);
  });
});

describe('CHANNEL_SECRETS_KEY and CHANNEL_SECRETS_PREVIOUS_KEYS', () => {
  it('are read as a key and a list of keys, each of 32 characters at least, never echoed', () => {
    const config = loadConfig({ CHANNEL_SECRETS_KEY: NEW, CHANNEL_SECRETS_PREVIOUS_KEYS: ` ${OLD} ,${NEW}` });
    expect(config.channelSecretsKey).to.equal(NEW);
    expect(config.channelSecretsPreviousKeys).to.deep.equal([OLD, NEW]);
    expect(() => loadConfig({ CHANNEL_SECRETS_KEY: 'short-secret' })).to.throw(ConfigError, /^CHANNEL_SECRETS_KEY must be at least 32 characters/).and.not.match(/short-secret/);
    expect(() => loadConfig({ CHANNEL_SECRETS_PREVIOUS_KEYS: `${OLD},tiny-secret` })).to.throw(ConfigError, /CHANNEL_SECRETS_PREVIOUS_KEYS\[1\] must be at least 32/);
  });
});
