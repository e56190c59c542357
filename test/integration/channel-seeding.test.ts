import { expect } from 'chai';
import { CredentialCipher } from '../../src/channels/credential-cipher';
import { ChannelService } from '../../src/channels/service';
import { parseChannels } from '../../src/config';
import { CommandHandler } from '../../src/domain/command-handler';
import { channelDecider } from '../../src/domain/channel/decider';
import { channelStream } from '../../src/domain/channel/events';
import { PostgresSnapshotStore } from '../../src/eventstore/postgres/snapshots';
import { createLogger } from '../../src/log';
import { startTestGateway, type TestGateway } from '../support/gateway';

const KEY = 'seeding-channel-secrets-key-0123456789abc';

/** CHANNELS seeds the log: what it has never held is created once, what it holds keeps the log's version. */
describe('seeding channels from CHANNELS @integration', function () {
  this.timeout(120_000);
  let gateway: TestGateway;

  /** A seeding process of its own (its own command handler, as another gateway has). */
  const seeder = () =>
    new ChannelService(
      new CommandHandler(gateway.store, new PostgresSnapshotStore(gateway.pool), channelDecider, createLogger('silent')),
      gateway.store,
      gateway.pool,
      new CredentialCipher(KEY),
      () => new Date(),
      { progress: gateway.progress, waitMs: 30_000 },
    );
  const channels = (entry: object) => parseChannels(JSON.stringify([{ name: 'seeded', base_url: 'https://provider.example/v1', api_key: 'sk-seed-one', ...entry }]), 'CHANNELS');

  before(async () => {
    gateway = await startTestGateway({ CHANNEL_SECRETS_KEY: KEY });
  });
  after(() => gateway?.close());

  it('creates a new channel once however many processes seed it at once', async () => {
    const outcomes = await Promise.all([seeder(), seeder(), seeder()].map((s) => s.seed(channels({}))));
    expect(outcomes).to.deep.equal([[], [], []]);
    const events = await gateway.store.readStream(channelStream('seeded'));
    expect(events.map((e) => [e.type, (e.data as { actor: string }).actor])).to.deep.equal([['ChannelCreated', 'config']]);
  });

  it('keeps the log’s version of a channel it holds, naming the fields CHANNELS differs in, credentials only as such', async () => {
    expect(await seeder().seed(channels({})), 'the same entry again').to.deep.equal([]);
    expect(await seeder().seed(channels({ timeout_ms: 5000, api_key: 'sk-seed-two' }))).to.deep.equal([{ name: 'seeded', deleted: false, differing: ['timeout_ms', 'credentials'] }]);
    expect((await gateway.store.readStream(channelStream('seeded'))).length, 'nothing appended').to.equal(1);
  });

  it('leaves a channel deleted through the API deleted', async () => {
    expect((await gateway.admin('DELETE', '/admin/v1/channels/seeded')).status).to.equal(200);
    expect(await seeder().seed(channels({}))).to.deep.equal([{ name: 'seeded', deleted: true, differing: [] }]);
    expect((await gateway.admin('GET', '/admin/v1/channels/seeded')).status).to.equal(404);
  });
});
