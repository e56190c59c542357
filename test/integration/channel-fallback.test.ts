import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { keyCheckingOpenAiProvider } from '../support/key-checking-provider';
import type { RecordingServer } from '../support/recording-server';
import { waitFor } from '../support/wait';

const SECRETS_KEY = 'fallback-channel-secrets-key-0123456789ab';
const PROVIDER_KEY = 'sk-log-channel-aaaaaaaaaaaaaaaaaaaa';

/**
 * With CHANNELS unset the simulator serves the catalog's channels only while the log holds no
 * channel: once it holds (or held) one, the log alone says what serves, from the first request a
 * started gateway answers. A simulated channel never stands in for a real one, which would sell
 * simulated answers at real prices.
 */
describe('the simulator fallback beside the channels of the log @integration', function () {
  this.timeout(180_000);
  let provider: RecordingServer;
  const gateways: TestGateway[] = [];

  before(async () => {
    provider = await keyCheckingOpenAiProvider(() => [PROVIDER_KEY]);
  });
  after(async () => {
    for (const gw of gateways.reverse()) await gw.close();
    await provider?.close();
  });

  const chat = (gw: TestGateway, key: string) => gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
  const image = (gw: TestGateway, key: string) => gw.api(key, 'POST', '/v1/images/generations', { model: 'image-5.0', prompt: 'a lighthouse' });
  const modelIds = async (gw: TestGateway, key: string) => ((await gw.api(key, 'GET', '/v1/models')).body.data as { id: string }[]).map((m) => m.id);

  it('after CHANNELS is dropped, serves the log’s channels from the first request on and leaves the channels the log lacks unserved', async () => {
    const seeding = await startTestGateway({
      CHANNEL_SECRETS_KEY: SECRETS_KEY,
      CHANNELS: JSON.stringify([{ name: 'default', protocol: 'openai', base_url: `${provider.url}/v1`, api_key: PROVIDER_KEY }]),
    });
    gateways.push(seeding);
    await seeding.stopProcess();

    // The log is the record after seeding: the operator restarts without CHANNELS.
    const gw = await startTestGateway({ CHANNEL_SECRETS_KEY: SECRETS_KEY }, { reuseDatabaseOf: seeding });
    gateways.push(gw);
    // Started (and so ready) means the log's channels are applied: nothing reaches a simulated `default`.
    expect(gw.upstreams.channel('default').config.base_url).to.equal(`${provider.url}/v1`);
    expect(gw.upstreams.fallbackUrl, 'the simulator serves nothing').to.equal(null);
    expect((await gw.api(null, 'GET', '/readyz')).status).to.equal(200);

    const { key } = await gw.fundedAccount(10_000_000);
    const sent = provider.seen.length;
    expect((await chat(gw, key)).status).to.equal(200);
    expect(provider.seen.length, 'the log’s channel answered').to.equal(sent + 1);

    // `ark-images` is in the catalog and the simulator's channels file, not in the log.
    const refused = await image(gw, key);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
    expect(refused.body.error.code).to.equal('model_not_found');
    const listed = await modelIds(gw, key);
    expect(listed).to.include('chat-fast');
    expect(listed).not.to.include('image-5.0');
    await gw.expectAuditClean();
  });

  it('serves from the simulator while the log holds no channel, and stops for good once it holds one, deleted or not', async () => {
    const gw = await startTestGateway({ CHANNEL_SECRETS_KEY: SECRETS_KEY });
    gateways.push(gw);
    const { key } = await gw.fundedAccount(10_000_000);
    expect((await image(gw, key)).status, 'the simulator serves the catalog').to.equal(200);
    expect((await chat(gw, key)).status).to.equal(200);

    const created = await gw.admin('POST', '/admin/v1/channels', { name: 'spare', protocol: 'openai', base_url: `${provider.url}/v1`, api_key: PROVIDER_KEY });
    expect(created.status).to.equal(201);
    await waitFor('the directory to apply the log’s first channel', async () => gw.upstreams.names().includes('spare'));
    expect(gw.upstreams.fallbackUrl, 'the simulator serves nothing').to.equal(null);
    expect((await chat(gw, key)).body.error?.code, 'no channel `default` in the log').to.equal('model_not_found');
    expect((await image(gw, key)).body.error?.code).to.equal('model_not_found');

    expect((await gw.admin('DELETE', '/admin/v1/channels/spare')).status).to.equal(200);
    await waitFor('the directory to apply the deletion', async () => !gw.upstreams.names().includes('spare'));
    expect(gw.upstreams.names(), 'no simulated channel came back').to.deep.equal([]);
    expect((await chat(gw, key)).body.error?.code).to.equal('model_not_found');
    await gw.expectAuditClean();
  });
});
