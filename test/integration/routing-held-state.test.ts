import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE, type CatalogFileEntry } from '../../src/billing/catalog';
import { accountStream } from '../../src/domain/account/events';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy, type ChannelEntry } from '../../src/upstreams/registry';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { testTempDir, removeTestTempDir } from '../support/temp-dirs';
import { waitFor } from '../support/wait';

/**
 * What a model's channels must agree on, and what a request tied to one channel's provider state
 * gets once that channel is gone (docs/operations.md, Routing): a real gateway on the simulator,
 * its channels changed through the admin API and its catalog reloaded as an operator does.
 */
describe('routing: one protocol per model, and provider state whose channel is gone @integration', function () {
  this.timeout(120_000);

  let simulator: RunningSimulator;
  let dir: string;
  let catalogFile: string;
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  let original: { models: CatalogFileEntry[] };
  let served: ChannelEntry[];

  const entry = (name: string): ChannelEntry => served.find((c) => c.name === name)!;
  const on = (model: CatalogFileEntry, id: string, channels: { name: string; priority?: number }[]): CatalogFileEntry => {
    const { channel: _channel, channels: _channels, ...rest } = model;
    return { ...rest, id, channels, capabilities: { ...model.capabilities, upstream_model: model.id } } as CatalogFileEntry;
  };
  const base = (id: string) => original.models.find((m) => m.id === id)!;

  /** Writes the catalog with these extra models and has the gateway reload it, as an operator does. */
  async function catalogWith(models: CatalogFileEntry[]): Promise<void> {
    fs.writeFileSync(catalogFile, JSON.stringify({ models: [...original.models, ...models] }));
    const reloaded = await gw.admin('POST', '/admin/v1/catalog/reload');
    expect(reloaded.status, JSON.stringify(reloaded.body)).to.equal(200);
  }

  /** Creates a channel through the admin API, a copy of a simulated one under another name, and waits until this process serves it. */
  async function createChannel(name: string, like: string): Promise<void> {
    const { name: _name, ...rest } = entry(like);
    const created = await gw.admin('POST', '/admin/v1/channels', { name, ...rest });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    await waitFor(`channel ${name} served`, async () => gw.upstreams.hasChannel(name));
  }

  async function deleteChannel(name: string): Promise<void> {
    const deleted = await gw.admin('DELETE', `/admin/v1/channels/${name}`);
    expect(deleted.status, JSON.stringify(deleted.body)).to.equal(200);
    await waitFor(`channel ${name} gone`, async () => !gw.upstreams.hasChannel(name));
  }

  /** The number of events of the account's ledger: a request that reserved nothing leaves it as it was. */
  async function ledgerLength(): Promise<number> {
    return (await gw.store.readStream(accountStream(accountId))).length;
  }

  before(async () => {
    simulator = await startSimulator();
    dir = testTempDir('routing-held-state-');
    original = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: CatalogFileEntry[] };
    served = channelsServedBy(simulator.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 16 });
    catalogFile = path.join(dir, 'catalog.json');
    fs.writeFileSync(
      catalogFile,
      JSON.stringify({
        models: [
          ...original.models,
          // Its first channel is not configured: the bot is sold, served by `coze` alone.
          on(base('webqa-pro'), 'webqa-standby', [{ name: 'not-configured', priority: 10 }, { name: 'coze' }]),
          // Coze keeps conversations, Ark's bots do not: one bot cannot be both.
          on(base('webqa-pro'), 'webqa-mixed', [{ name: 'coze', priority: 10 }, { name: 'ark-bots' }]),
        ],
      }),
    );
    gw = await startTestGateway({ CHANNELS: JSON.stringify(served), CATALOG_FILE: catalogFile });
    ({ key, accountId } = await gw.fundedAccount(1_000_000_000));
  });

  afterEach(async () => {
    await gw.expectAuditClean();
  });

  after(async () => {
    await gw?.close();
    await simulator?.close();
    if (dir) removeTestTempDir(dir);
  });

  it('serves a bot whose first channel is not configured from the one that is', async () => {
    const answer = await gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-standby', messages: [{ role: 'user', content: 'hello' }] });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body.choices[0].message.content).to.be.a('string').and.not.equal('');
    expect(answer.body.conversation_id).to.be.a('string');
  });

  it('does not sell a model whose channels speak different protocols, nor reserve for it', async () => {
    const listed = (await gw.api(key, 'GET', '/v1/models')).body.data.map((m: { id: string }) => m.id) as string[];
    expect(listed).to.include('webqa-standby').and.not.include('webqa-mixed');
    const before = await ledgerLength();
    const answer = await gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-mixed', messages: [{ role: 'user', content: 'hello' }] });
    expect(answer.status).to.equal(400);
    expect(answer.body.error).to.include({ code: 'bot_not_found', param: 'bot_id' });
    expect(await ledgerLength()).to.equal(before);
  });

  it('makes a model unavailable once a protocol change through the admin API mixes its channels, and sells it again when it is undone', async () => {
    await createChannel('coze-two', 'coze');
    await catalogWith([on(base('webqa-pro'), 'webqa-pair', [{ name: 'coze' }, { name: 'coze-two' }])]);
    const ask = () => gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-pair', messages: [{ role: 'user', content: 'hello' }] });
    expect((await ask()).status).to.equal(200);

    const ark = entry('ark-bots');
    expect((await gw.admin('PATCH', '/admin/v1/channels/coze-two', { protocol: 'ark', base_url: ark.base_url, api_key: ark.api_key })).status).to.equal(200);
    await waitFor('coze-two speaks ark', async () => gw.upstreams.channel('coze-two').config.protocol === 'ark');
    const refused = await ask();
    expect(refused.status).to.equal(400);
    expect(refused.body.error.code).to.equal('bot_not_found');

    const coze = entry('coze');
    expect((await gw.admin('PATCH', '/admin/v1/channels/coze-two', { protocol: 'coze', base_url: coze.base_url, api_key: coze.api_key })).status).to.equal(200);
    await waitFor('coze-two speaks coze', async () => gw.upstreams.channel('coze-two').config.protocol === 'coze');
    expect((await ask()).status).to.equal(200);
  });

  it('answers a Response continued, read or deleted after its channel was deleted with 400 / 404, reserving nothing', async () => {
    await createChannel('chat-old', 'default');
    await catalogWith([on(base('chat-fast'), 'chat-moving', [{ name: 'chat-old' }])]);
    const made = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-moving', input: 'remember me', max_output_tokens: 16 });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const id = made.body.id as string;
    await waitFor('the response is readable', async () => (await gw.api(key, 'GET', `/v1/responses/${id}`)).status === 200);

    // The operator moves the model to another channel, then deletes the old one (allowed: no model names it).
    await catalogWith([on(base('chat-fast'), 'chat-moving', [{ name: 'default' }])]);
    await deleteChannel('chat-old');

    const before = await ledgerLength();
    const continued = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-moving', input: 'and now?', previous_response_id: id, max_output_tokens: 16 });
    expect(continued.status, JSON.stringify(continued.body)).to.equal(400);
    expect(continued.body.error).to.include({ code: 'previous_response_not_found', param: 'previous_response_id' });
    expect(await ledgerLength(), 'nothing reserved').to.equal(before);

    for (const [method, suffix] of [['GET', ''], ['GET', '/input_items'], ['DELETE', '']] as const) {
      const answer = await gw.api(key, method, `/v1/responses/${id}${suffix}`);
      expect(answer.status, `${method} ${suffix}`).to.equal(404);
      expect(answer.body.error.code).to.equal('not_found');
    }
  });

  it('answers a web Q&A conversation whose channel was deleted with 400 conversation_not_found, reserving nothing', async () => {
    await createChannel('coze-old', 'coze');
    await catalogWith([on(base('webqa-pro'), 'webqa-moving', [{ name: 'coze-old' }])]);
    const first = await gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-moving', messages: [{ role: 'user', content: 'hello' }] });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const conversation = first.body.conversation_id as string;

    await catalogWith([on(base('webqa-pro'), 'webqa-moving', [{ name: 'coze' }])]);
    await deleteChannel('coze-old');
    // The old channel listed again (its name reused in the catalog) but no longer configured.
    await catalogWith([on(base('webqa-pro'), 'webqa-moving', [{ name: 'coze-old', priority: 10 }, { name: 'coze' }])]);

    const before = await ledgerLength();
    const next = await gw.api(key, 'POST', '/v1/agent/chat/completions', {
      bot_id: 'webqa-moving',
      messages: [{ role: 'user', content: 'and now?' }],
      extension_options: { conversation_id: conversation },
    });
    expect(next.status, JSON.stringify(next.body)).to.equal(400);
    expect(next.body.error).to.include({ code: 'conversation_not_found', param: 'extension_options.conversation_id' });
    expect(await ledgerLength(), 'nothing reserved').to.equal(before);
    // A new conversation of the same bot is served by the channel that is configured.
    expect((await gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-moving', messages: [{ role: 'user', content: 'hi' }] })).status).to.equal(200);
  });

  it('answers a model whose channels are all disabled with 502 before reserving anything', async () => {
    await createChannel('off-a', 'default');
    await createChannel('off-b', 'default');
    await catalogWith([on(base('chat-fast'), 'chat-off', [{ name: 'off-a', priority: 1 }, { name: 'off-b' }])]);
    for (const name of ['off-a', 'off-b']) expect((await gw.admin('PATCH', `/admin/v1/channels/${name}`, { enabled: false, reason: 'maintenance' })).status).to.equal(200);
    await waitFor('both disabled here', async () => !gw.upstreams.isEnabled('off-a') && !gw.upstreams.isEnabled('off-b'));

    const before = await ledgerLength();
    const chat = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-off', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
    expect(chat.status).to.equal(502);
    expect(chat.body.error.code).to.equal('upstream_unavailable');
    const responses = await gw.api(key, 'POST', '/v1/responses', { model: 'chat-off', input: 'hi', max_output_tokens: 16 });
    expect(responses.status).to.equal(502);
    expect(await ledgerLength(), 'nothing reserved').to.equal(before);

    expect((await gw.admin('PATCH', '/admin/v1/channels/off-b', { enabled: true })).status).to.equal(200);
    await waitFor('off-b enabled here', async () => gw.upstreams.isEnabled('off-b'));
    expect((await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-off', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 })).status).to.equal(200);
  });
});
