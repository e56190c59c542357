import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { keyCheckingOpenAiProvider } from '../support/key-checking-provider';
import type { RecordingServer } from '../support/recording-server';
import { testTempDir, removeTestTempDir } from '../support/temp-dirs';
import { waitFor } from '../support/wait';

const OLD_KEY = 'rotation-old-channel-secrets-key-0123456789';
const NEW_KEY = 'rotation-new-channel-secrets-key-9876543210';
const PROVIDER_KEY = 'sk-rotation-provider-key-0123456789';

/**
 * CHANNEL_SECRETS_KEY rotated as docs/operations.md says: the new key with the old one as a
 * previous key, the re-encrypt command, then the new key alone, which still opens every channel's
 * credentials.
 */
describe('rotating CHANNEL_SECRETS_KEY @integration', function () {
  this.timeout(120_000);

  let provider: RecordingServer;
  let dataDir: string;
  const started: TestGateway[] = [];

  const start = async (secrets: Record<string, string>): Promise<TestGateway> => {
    const gateway = await startTestGateway(
      { DATA_DIR: dataDir, CHANNELS: JSON.stringify([{ name: 'default', base_url: `${provider.url}/v1`, api_key: PROVIDER_KEY }]), ...secrets },
      started[0] ? { reuseDatabaseOf: started[0] } : {},
    );
    started.push(gateway);
    return gateway;
  };

  before(async () => {
    provider = await keyCheckingOpenAiProvider(() => [PROVIDER_KEY]);
    dataDir = testTempDir('gateway-channel-secrets-');
  });

  after(async () => {
    // The first gateway owns the database: the others close first.
    for (const gateway of [...started].reverse()) await gateway.close();
    await provider?.close();
    removeTestTempDir(dataDir);
  });

  it('re-encrypts every channel under the new key, after which the old key can be retired', async () => {
    const first = await start({ CHANNEL_SECRETS_KEY: OLD_KEY });
    // Seeded at start: the channels view shows it once it has folded the seeding.
    const seeded = await waitFor('the seeded channel in the channels view', async () => {
      const answer = await first.admin('GET', '/admin/v1/channels/default');
      return answer.status === 200 && answer.body;
    });
    const oldKeyId = seeded.credentials_key_id as string;
    await first.stopProcess();

    // The new key alone before the re-encryption cannot open the credentials: a change that needs them is refused.
    const early = await start({ CHANNEL_SECRETS_KEY: NEW_KEY });
    const refused = await early.admin('PATCH', '/admin/v1/channels/default', { timeout_ms: 30_000 });
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal('credentials_unreadable');
    // It still serves the channel, as CHANNELS gave it: a channel whose credentials a process cannot open does not vanish from it.
    const { key: earlyKey } = await early.fundedAccount(10_000_000);
    const beforeEarly = provider.seen.length;
    const served = await early.api(earlyKey, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    expect(served.status, JSON.stringify(served.body)).to.equal(200);
    expect(provider.seen.slice(beforeEarly).map((r) => r.headers.authorization)).to.deep.equal([`Bearer ${PROVIDER_KEY}`]);
    await early.stopProcess();

    const rotating = await start({ CHANNEL_SECRETS_KEY: NEW_KEY, CHANNEL_SECRETS_PREVIOUS_KEYS: OLD_KEY });
    const outcome = await rotating.admin('POST', '/admin/v1/channels/re-encrypt');
    expect(outcome.body).to.deep.equal({ re_encrypted: ['default'], unreadable: [] });
    const newKeyId = (await rotating.admin('GET', '/admin/v1/channels/default')).body.credentials_key_id as string;
    expect(newKeyId).to.not.equal(oldKeyId);
    expect((await rotating.admin('POST', '/admin/v1/channels/re-encrypt')).body, 'a second run has nothing to do').to.deep.equal({ re_encrypted: [], unreadable: [] });
    const history = (await rotating.admin('GET', '/admin/v1/channels/default/events')).body.data;
    expect(history[history.length - 1]).to.deep.include({ type: 'ChannelCredentialsReEncrypted', actor: 'admin-token', changes: { credentials_key_id: newKeyId } });
    await rotating.stopProcess();

    // The new key alone: the channel's credentials open (a change that needs them passes), and a chat call reaches the provider with them.
    const retired = await start({ CHANNEL_SECRETS_KEY: NEW_KEY });
    expect((await retired.admin('PATCH', '/admin/v1/channels/default', { timeout_ms: 30_000 })).status).to.equal(200);
    const { key } = await retired.fundedAccount(10_000_000);
    const seen = provider.seen.length;
    const chat = await retired.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    expect(chat.status).to.equal(200);
    expect(provider.seen.slice(seen).map((r) => r.headers.authorization)).to.deep.equal([`Bearer ${PROVIDER_KEY}`]);
    await retired.expectAuditClean();
  });
});
