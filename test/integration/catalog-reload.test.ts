import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { Catalog, DEFAULT_CATALOG_FILE, type CatalogFileEntry, type ModelEntry } from '../../src/billing/catalog';
import { tokenCharge } from '../../src/billing/money';
import { countMessageTokens } from '../../src/billing/tokens';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/log';
import { channelsServedBy, Upstreams } from '../../src/upstreams/registry';
import { createSimulator, type Simulator } from '../../simulator/server';
import { startSimulator } from '../../simulator';
import { allSimulatorRoutes } from '../../simulator/all-routes';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';
import { arkReleasePath } from '../support/simulated-ark';
import { testTempDir } from '../support/temp-dirs';
import { waitFor } from '../support/wait';
import { ALL_MODEL_TYPES } from '../../src/model-types';

/**
 * POST /admin/v1/catalog/reload re-reads CATALOG_FILE with the same checks as at start-up. Every
 * gateway here reads a temporary copy of the built-in catalog, never the real file.
 */

const ORIGINAL = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: CatalogFileEntry[] };
/** Prices no shipped model has, so a charge at another model's prices cannot pass for this one's. */
const RELOADED_PRICING = { input_per_million: 3_000_000, output_per_million: 11_000_000 };

function chatModel(id: string, channel: string): CatalogFileEntry {
  return {
    id,
    type: 'chat',
    channel,
    owned_by: 'reload-test',
    created: 1_750_000_000,
    pricing: RELOADED_PRICING,
    capabilities: { max_output_tokens: 1000, context_window: 8000, responses: true },
  };
}

function catalogCopy(): string {
  const file = path.join(testTempDir('catalog-reload-'), 'catalog.json');
  fs.copyFileSync(DEFAULT_CATALOG_FILE, file);
  return file;
}

function writeCatalog(file: string, models: readonly CatalogFileEntry[]): void {
  fs.writeFileSync(file, JSON.stringify({ models }, null, 2));
}

const ids = (body: { data: { id: string }[] }): string[] => body.data.map((m) => m.id).sort();

describe('reloading the model catalog @integration', () => {
  let simulator: Simulator;
  let simUrl: string;
  let catalogFile: string;
  let gw: TestGateway;
  let key: string;
  let originalIds: string[];

  before(async () => {
    // CHANNELS configures exactly the channels the shipped catalog names, all served by a
    // simulator this suite owns, so a channel outside that list is really not configured.
    simulator = createSimulator({ routes: allSimulatorRoutes() });
    simUrl = await simulator.listen(0, '127.0.0.1');
    catalogFile = catalogCopy();
    gw = await startTestGateway({
      CATALOG_FILE: catalogFile,
      CHANNELS: JSON.stringify(channelsServedBy(simUrl, new Catalog(catalogFile, ALL_MODEL_TYPES), { timeoutMs: 10_000, maxConcurrency: 16 })),
      RATE_LIMIT_PER_MINUTE: '100000',
      TASK_POLL_MS: '20',
    });
    ({ key } = await gw.fundedAccount(100_000_000));
    originalIds = ids((await gw.api(key, 'GET', '/v1/models')).body);
    expect(originalIds).to.include('chat-fast');
  });
  afterEach(async () => {
    expect((await gw.balance(key)).frozen, 'no reservation is left open').to.equal(0);
    await gw.expectAuditClean();
  });
  after(async () => {
    await gw?.close();
    await simulator?.close();
  });

  async function listedIds(): Promise<string[]> {
    const res = await gw.api(key, 'GET', '/v1/models');
    expect(res.status).to.equal(200);
    return ids(res.body);
  }

  async function reload(): Promise<{ status: number; body: any }> {
    return gw.admin('POST', '/admin/v1/catalog/reload');
  }

  /** A refusal in the admin API's error shape whose message names every one of `mentions`. */
  function expectRefused(res: { status: number; body: any }, mentions: readonly string[]): void {
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error).to.include({ code: 'invalid_catalog', type: 'invalid_request_error' });
    for (const mention of mentions) expect(res.body.error.message).to.include(mention);
  }

  /** The catalog in force is still the one before the refused reload, and its models still work. */
  async function expectCatalogInForce(expected: readonly string[], absent: string): Promise<void> {
    expect(await listedIds()).to.deep.equal(expected);
    const refused = await gw.api(key, 'POST', '/v1/chat/completions', { model: absent, messages: [{ role: 'user', content: 'hi' }] });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
    expect(refused.body.error.code).to.equal('model_not_found');
    const served = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'still here? [sim:tokens=3]' }] });
    expect(served.status, JSON.stringify(served.body)).to.equal(200);
  }

  it('adds a chat model: /v1/models lists it and a completion with it is billed at its prices', async () => {
    expect(await listedIds()).to.not.include('chat-reloaded');
    const before = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-reloaded', messages: [{ role: 'user', content: 'hi' }] });
    expect(before.status).to.equal(400);

    writeCatalog(catalogFile, [...ORIGINAL.models, chatModel('chat-reloaded', 'default')]);
    const res = await reload();
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ models: ORIGINAL.models.length + 1, unavailable: [] });

    const listed = (await gw.api(key, 'GET', '/v1/models')).body.data.find((m: { id: string }) => m.id === 'chat-reloaded');
    expect(listed).to.deep.include({ object: 'model', type: 'chat', owned_by: 'reload-test', created: 1_750_000_000 });
    expect(listed.pricing).to.deep.include(RELOADED_PRICING);

    const messages = [{ role: 'user', content: 'Name two rivers [sim:tokens=9]' }];
    const balanceBefore = (await gw.balance(key)).available;
    const completion = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-reloaded', messages });
    expect(completion.status, JSON.stringify(completion.body)).to.equal(200);
    expect(completion.body.model).to.equal('chat-reloaded');
    expect(completion.body.usage).to.deep.include({ prompt_tokens: countMessageTokens(messages), completion_tokens: 9 });
    const expected = tokenCharge(RELOADED_PRICING, countMessageTokens(messages), 9);
    expect(expected).to.be.greaterThan(0);

    const ledger = (await gw.api(key, 'GET', '/v1/account/ledger?limit=100')).body.data as { type: string; amount: number; reservation_id: string | null }[];
    const settlement = ledger[ledger.length - 1]!;
    expect(settlement.type).to.equal('settlement');
    expect(settlement.amount).to.equal(expected);
    const reservation = ledger.find((e) => e.type === 'reservation' && e.reservation_id === settlement.reservation_id)!;
    // The reservation was sized at this model's prices and its max_output_tokens (1000).
    expect(reservation.amount).to.equal(tokenCharge(RELOADED_PRICING, countMessageTokens(messages), 1000));
    expect(balanceBefore - (await gw.balance(key)).available).to.equal(expected);
  });

  it('bills a task at the prices in force when it was submitted, not at a reload\'s while it ran', async () => {
    const videoModel = ORIGINAL.models.find((m) => m.id === 'video-ref-2.0')!;
    const perSecond = (videoModel.pricing.per_second as Record<string, number>)['720p']!;
    const created = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a slow cat [sim:hold]' }], duration: 4 });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const doubled = { ...videoModel, pricing: { per_second: { '480p': 400_000, '720p': 2 * perSecond, '1080p': 1_800_000 } } };
    writeCatalog(catalogFile, ORIGINAL.models.map((m) => (m.id === 'video-ref-2.0' ? doubled : m)));
    try {
      expect((await reload()).status).to.equal(200);
      expect((await fetch(simUrl + arkReleasePath(created.body.upstream_id), { method: 'POST' })).status).to.equal(200);
      const task = await waitFor('the video task billed', async () => {
        const t = (await gw.api(key, 'GET', `/v1/videos/generations/${created.body.id}`)).body;
        return t.billing.status !== 'reserved' ? t : null;
      });
      expect(task.billing).to.deep.include({ status: 'settled', amount: 4 * perSecond, reserved: 4 * perSecond });
    } finally {
      writeCatalog(catalogFile, ORIGINAL.models);
      expect((await reload()).status).to.equal(200);
    }
  });

  it('fails a running task whose model a reload took out at its next poll, releasing its reservation', async () => {
    const created = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a cat in limbo [sim:hold]' }], duration: 4 });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    writeCatalog(catalogFile, ORIGINAL.models.filter((m) => m.id !== 'video-ref-2.0'));
    try {
      expect((await reload()).status).to.equal(200);
      const task = await waitFor('the video task failed and billed', async () => {
        const t = (await gw.api(key, 'GET', `/v1/videos/generations/${created.body.id}`)).body;
        return t.billing.status !== 'reserved' ? t : null;
      });
      expect([task.status, task.error.code, task.billing.status]).to.deep.equal(['failed', 'model_not_found', 'released']);
    } finally {
      writeCatalog(catalogFile, ORIGINAL.models);
      expect((await reload()).status).to.equal(200);
    }
  });

  it('refuses a file that is not JSON, or breaks the schema, with 400 and keeps the catalog in force', async () => {
    const inForce = await listedIds();
    expect(inForce).to.not.include('chat-broken');

    fs.writeFileSync(catalogFile, '{"models": [');
    expectRefused(await reload(), [catalogFile, 'not JSON']);
    await expectCatalogInForce(inForce, 'chat-broken');

    // Well-formed JSON with a valid new model, but another model's pricing breaks its type's schema.
    const broken = { ...chatModel('chat-priced-wrong', 'default'), pricing: { input_per_million: -1, output_per_million: 5 } };
    writeCatalog(catalogFile, [...ORIGINAL.models, chatModel('chat-broken', 'default'), broken]);
    expectRefused(await reload(), ['chat-priced-wrong', 'pricing']);
    await expectCatalogInForce(inForce, 'chat-broken');

    // A member the file schema does not know.
    writeCatalog(catalogFile, [...ORIGINAL.models, { ...chatModel('chat-broken', 'default'), colour: 'blue' } as CatalogFileEntry]);
    expectRefused(await reload(), ['additional properties']);
    await expectCatalogInForce(inForce, 'chat-broken');
  });

  it('takes a model on a channel that is not configured as unavailable: named in the answer, not listed, 400 model_not_found, nothing charged', async () => {
    writeCatalog(catalogFile, [...ORIGINAL.models, chatModel('chat-elsewhere', 'nowhere')]);
    const res = await reload();
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ models: ORIGINAL.models.length, unavailable: ['chat-elsewhere'] });
    // The operator's view of the catalog shows every model of the file, the unavailable one marked.
    const view = await gw.admin('GET', '/admin/v1/catalog');
    expect(view.status).to.equal(200);
    const viewed = view.body.data as (ModelEntry & { available: boolean })[];
    expect(viewed.map((m) => m.id)).to.deep.equal([...ORIGINAL.models.map((m) => m.id), 'chat-elsewhere'].sort());
    expect(viewed.filter((m) => !m.available).map((m) => m.id)).to.deep.equal(['chat-elsewhere']);
    expect(viewed.find((m) => m.id === 'chat-elsewhere')).to.deep.equal({ ...chatModel('chat-elsewhere', 'nowhere'), channels: [{ name: 'nowhere', priority: 0, weight: 1 }], available: false });
    // Before channels were checked, this reload made the model callable and a completion answered 500.
    expect(await listedIds()).to.have.members(ORIGINAL.models.map((m) => m.id));
    await expectCatalogInForce(await listedIds(), 'chat-elsewhere');

    // The same file with the channel fixed is accepted.
    writeCatalog(catalogFile, [...ORIGINAL.models, chatModel('chat-elsewhere', 'default')]);
    expect((await reload()).status).to.equal(200);
    expect(await listedIds()).to.include('chat-elsewhere');
  });

  it('requires the admin token', async () => {
    const inForce = await listedIds();
    writeCatalog(catalogFile, [...ORIGINAL.models, chatModel('chat-unauthorised', 'default')]);
    for (const auth of [null, key, `${TEST_ADMIN_TOKEN}x`]) {
      const res = await gw.api(auth, 'POST', '/admin/v1/catalog/reload');
      expect(res.status, `with ${auth === null ? 'no token' : 'a wrong token'}`).to.equal(401);
      expect(res.body.error.code).to.equal('invalid_admin_token');
    }
    expect(await listedIds(), 'nothing was reloaded').to.deep.equal(inForce);
    writeCatalog(catalogFile, ORIGINAL.models);
  });

  it('at start-up, a channel the catalog names but CHANNELS leaves out makes its models unavailable, never simulated (the README example names only default)', async () => {
    const file = catalogCopy();
    writeCatalog(file, [...ORIGINAL.models, chatModel('chat-elsewhere', 'nowhere')]);
    const catalog = new Catalog(file, ALL_MODEL_TYPES);
    const config = loadConfig({ DATA_DIR: testTempDir('catalog-reload-data-'), CHANNELS: JSON.stringify(channelsServedBy('http://127.0.0.1:9', new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 1000, maxConcurrency: 1 })) });
    const simulator = await startSimulator();
    const upstreams = await Upstreams.start(config, catalog, createLogger('silent'), undefined, async () => simulator.url);
    try {
      expect(upstreams.fallbackUrl, 'no simulator runs beside real channels').to.equal(null);
      expect(catalog.get('chat-elsewhere')).to.equal(undefined);
      expect(catalog.list().map((m) => m.id)).to.not.include('chat-elsewhere');
      expect(catalog.unavailable().map((m) => m.id)).to.deep.equal(['chat-elsewhere']);
      expect(upstreams.channel('default').config.base_url, 'a listed channel keeps its provider').to.equal('http://127.0.0.1:9/v1');
    } finally {
      await upstreams.close();
      await simulator.close();
    }
    // Without CHANNELS, the start needs the fallback provider (the entry point passes the simulator).
    let refused: unknown;
    await Upstreams.start(loadConfig({ DATA_DIR: testTempDir('catalog-reload-data-') }), catalog, createLogger('silent')).catch((err: unknown) => (refused = err));
    expect(String(refused)).to.include('no CHANNELS configured and no fallback provider');
  });

  it("at start-up, a model whose channel's protocol cannot serve its type is unavailable and named in a warning (like a missing channel)", async () => {
    const file = catalogCopy();
    writeCatalog(file, [...ORIGINAL.models, chatModel('chat-on-ark', 'ark')]);
    const catalog = new Catalog(file, ALL_MODEL_TYPES);
    const channels = [...channelsServedBy('http://127.0.0.1:9', new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 1000, maxConcurrency: 1 })];
    expect(channels.find((c) => c.name === 'ark')?.protocol, 'the channels file has an Ark channel').to.equal('ark');
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const upstreams = await Upstreams.start(loadConfig({ DATA_DIR: testTempDir('catalog-reload-data-'), CHANNELS: JSON.stringify(channels) }), catalog, logger);
    try {
      expect(catalog.get('chat-on-ark')).to.equal(undefined);
      expect(catalog.unavailable().map((m) => m.id)).to.deep.equal(['chat-on-ark']);
      expect(catalog.get('chat-fast'), 'a chat model on an OpenAI channel is sold').not.to.equal(undefined);
      const warning = lines.find((l) => String(l.msg).includes('cannot serve their type'));
      expect(warning?.models).to.deep.equal([{ model: 'chat-on-ark', type: 'chat', channel: 'ark', protocol: 'ark' }]);
    } finally {
      await upstreams.close();
    }
  });
});

describe('reloading the model catalog with the built-in simulator @integration', () => {
  let gw: TestGateway;
  let catalogFile: string;

  before(async () => {
    catalogFile = catalogCopy();
    gw = await startTestGateway({ CATALOG_FILE: catalogFile });
  });
  after(async () => gw?.close());

  it('serves a model on a channel the start-up catalog did not name', async () => {
    const { key } = await gw.fundedAccount(100_000_000);
    writeCatalog(catalogFile, [...ORIGINAL.models, chatModel('chat-new-channel', 'brand-new-channel')]);
    const res = await gw.admin('POST', '/admin/v1/catalog/reload');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const messages = [{ role: 'user', content: 'hello [sim:tokens=4]' }];
    const completion = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-new-channel', messages });
    expect(completion.status, JSON.stringify(completion.body)).to.equal(200);
    expect(100_000_000 - (await gw.balance(key)).available).to.equal(tokenCharge(RELOADED_PRICING, countMessageTokens(messages), 4));
    await gw.expectAuditClean();
  });
});
