import { expect } from 'chai';
import { CredentialCipher } from '../../src/channels/credential-cipher';
import { ChannelService, type ChannelCommands } from '../../src/channels/service';
import { CommandHandler } from '../../src/domain/command-handler';
import { channelDecider } from '../../src/domain/channel/decider';
import { channelStream } from '../../src/domain/channel/events';
import { PostgresSnapshotStore } from '../../src/eventstore/postgres/snapshots';
import { createLogger } from '../../src/log';
import { startTestGateway, type TestGateway } from '../support/gateway';

const OLD_KEY = 'races-old-channel-secrets-key-0123456789ab';
const NEW_KEY = 'races-new-channel-secrets-key-9876543210ab';

/**
 * Two operators (or two processes) changing one channel at once: the change made second is
 * decided against the log as the first left it, so it keeps the first one's changes. The
 * interleaving is forced, not hoped for: the second command is held until the first is appended,
 * after it has read the channel.
 */
describe('concurrent changes to one channel @integration', function () {
  this.timeout(120_000);
  let gateway: TestGateway;

  before(async () => {
    gateway = await startTestGateway({ CHANNEL_SECRETS_KEY: NEW_KEY, CHANNEL_SECRETS_PREVIOUS_KEYS: OLD_KEY });
  });
  after(() => gateway?.close());

  /** A process's channel service, sealing with `cipher`; `before` runs once, just before its first command is decided. */
  const service = (cipher: CredentialCipher, before?: () => Promise<void>) => {
    const handler: ChannelCommands = new CommandHandler(gateway.store, new PostgresSnapshotStore(gateway.pool), channelDecider, createLogger('silent'));
    let pending = before;
    const commands = Object.assign(Object.create(handler) as ChannelCommands, {
      handle: async (...args: Parameters<ChannelCommands['handle']>) => {
        const run = pending;
        pending = undefined;
        await run?.();
        return handler.handle(...args);
      },
    });
    return new ChannelService(commands, gateway.store, gateway.pool, cipher, () => new Date(), { progress: gateway.progress, waitMs: 30_000 });
  };
  const history = async (name: string) => (await gateway.store.readStream(channelStream(name))).map((e) => ({ type: e.type, changes: (e.data as { changes?: unknown }).changes }));

  it('a PATCH carries only the fields it names: a disable does not write back a timeout changed meanwhile', async () => {
    const current = new CredentialCipher(NEW_KEY, [OLD_KEY]);
    await service(current).create({ name: 'patched', protocol: 'openai', base_url: 'https://provider.example/v1', api_key: 'sk-patched', timeout_ms: 1000 }, 'admin-token');

    // B reads the channel (timeout 1000), then A's PATCH lands, then B's disable is decided.
    const concurrentPatch = async () => {
      expect((await gateway.admin('PATCH', '/admin/v1/channels/patched', { timeout_ms: 5000 })).status).to.equal(200);
    };
    await service(current, concurrentPatch).update('patched', { enabled: false, reason: 'maintenance' }, 'admin-token');

    expect(await history('patched')).to.deep.equal([
      { type: 'ChannelCreated', changes: undefined },
      { type: 'ChannelChanged', changes: { timeout_ms: 5000 } },
      { type: 'ChannelDisabled', changes: undefined },
    ]);
    const view = (await gateway.admin('GET', '/admin/v1/channels/patched')).body;
    expect(view).to.include({ timeout_ms: 5000, enabled: false, disabled_reason: 'maintenance' });
  });

  it('re-encryption never seals again credentials that a rotation replaced meanwhile', async () => {
    // A process still on the old key (step 3 of the key rotation, rolling) created the channel and rotates it.
    const old = new CredentialCipher(OLD_KEY);
    await service(old).create({ name: 'rotated', protocol: 'openai', base_url: 'https://provider.example/v1', api_key: 'sk-before-rotation' }, 'admin-token');

    // The re-encryption reads sk-before-rotation, then the rotation lands, then the re-encryption is decided.
    const rotation = () => service(old).update('rotated', { api_key: 'sk-after-rotation' }, 'admin-token');
    const outcome = await service(new CredentialCipher(NEW_KEY, [OLD_KEY]), rotation).reEncryptAll('admin-token');

    expect(outcome).to.deep.equal({ reEncrypted: ['rotated'], unreadable: [] });
    expect((await history('rotated')).map((e) => e.type)).to.deep.equal(['ChannelCreated', 'ChannelCredentialsRotated', 'ChannelCredentialsReEncrypted']);
    const serving = await service(new CredentialCipher(NEW_KEY)).currentConfig('rotated');
    expect(serving.auth, 'the rotated key, now sealed under the new key alone').to.deep.equal({ kind: 'bearer', apiKey: 'sk-after-rotation' });
    await gateway.expectAuditClean();
  });
});
