import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import { Catalog, DEFAULT_CATALOG_FILE, type CatalogFileEntry } from '../../src/billing/catalog';
import { tempDir, type Database } from '../../src/db/database';
import { accountStream } from '../../src/domain/account/events';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { channelHealthStream } from '../../src/upstreams/routing/health-log';
import { allSimulatorRoutes } from '../../simulator/all-routes';
import { createSimulator, type Simulator } from '../../simulator/server';
import { createTestDatabase } from '../support/database';
import { FIXED_CALL, FIXED_CHARGE } from '../support/fixed-chat';
import { callJson, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { sample, scrapeMetrics } from '../support/metrics';
import { scriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream';
import { waitFor } from '../support/wait';

const ADMIN_TOKEN = 'routing-two-processes-admin-token';
const REQUESTS = 60;

/**
 * The money of routing across two gateway processes (issue 43): a channel that fails every other
 * call, many requests split over both processes; and a circuit one process opens that keeps the
 * other away too.
 */
describe('routing across two gateway processes @integration', function () {
  this.timeout(240_000);

  let database: Database;
  let simulator: Simulator;
  let dataDir: string;
  let flaky: ScriptedUpstream;
  let breaker: ScriptedUpstream;
  let steady: ScriptedUpstream;
  let gateways: GatewayProcess[] = [];

  before(async () => {
    database = await createTestDatabase(20, { withSchema: true });
    simulator = createSimulator({ routes: allSimulatorRoutes() });
    const simulatorUrl = await simulator.listen(0, '127.0.0.1');
    dataDir = tempDir('gateway-routing-');
    // Every other call fails with a 503, whichever process sends it.
    [flaky, breaker, steady] = await Promise.all([
      scriptedUpstream(simulatorUrl, (n) => (n % 2 === 0 ? { status: 503 } : 'forward')),
      scriptedUpstream(simulatorUrl, { status: 500 }),
      scriptedUpstream(simulatorUrl),
    ]);
    const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
    const original = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: CatalogFileEntry[] };
    const { channel: _channel, ...fast } = original.models.find((m) => m.id === 'chat-fast')!;
    const routed = (id: string, first: string): CatalogFileEntry => ({
      ...fast,
      id,
      channels: [{ name: first, priority: 1 }, { name: 'steady' }],
      capabilities: { ...fast.capabilities, upstream_model: 'chat-fast' },
    });
    const catalogFile = path.join(dataDir, 'catalog.json');
    fs.writeFileSync(catalogFile, JSON.stringify({ models: [...original.models, routed('chat-routed', 'flaky'), routed('chat-circuit', 'breaker')] }));
    const served = channelsServedBy(simulatorUrl, catalog, { timeoutMs: 30_000, maxConcurrency: 64 });
    const openai = served.find((c) => c.name === 'default')!;
    const fronts = [
      { ...openai, name: 'flaky', base_url: `${flaky.url}/v1` },
      { ...openai, name: 'breaker', base_url: `${breaker.url}/v1` },
      { ...openai, name: 'steady', base_url: `${steady.url}/v1` },
    ];
    const env = {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      URL_SIGNING_SECRET: 'routing-two-processes-signing-secret',
      CHANNELS: JSON.stringify([...served, ...fronts]),
      CATALOG_FILE: catalogFile,
      RATE_LIMIT_PER_MINUTE: '100000',
      CHANNEL_CIRCUIT_FAILURES: '3',
      // Open long enough that no test here sees it half-open, however slow the machine.
      CHANNEL_CIRCUIT_OPEN_MS: '600000',
    };
    gateways = await Promise.all(['g1', 'g2'].map((name) => startGatewayProcess(name, env)));
  });

  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await Promise.all([flaky, breaker, steady].map((u) => u?.close()));
    await simulator?.close();
    await database?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function fundedClients(): Promise<{ accountId: string; clients: OpenAI[] }> {
    const [g1, g2] = gateways as [GatewayProcess, GatewayProcess];
    const accountId = (await callJson(`${g1.url}/admin/v1/accounts`, ADMIN_TOKEN, 'POST', { name: 'routing' })).body.id as string;
    expect((await callJson(`${g2.url}/admin/v1/accounts/${accountId}/credits`, ADMIN_TOKEN, 'POST', { amount: 1_000_000_000, reference: 'fund' })).status).to.equal(201);
    const issued = await callJson(`${g1.url}/admin/v1/accounts/${accountId}/keys`, ADMIN_TOKEN, 'POST', {});
    expect(issued.status).to.equal(201);
    return { accountId, clients: [g1, g2].map((g) => new OpenAI({ apiKey: issued.body.key, baseURL: `${g.url}/v1`, maxRetries: 0 })) };
  }

  it('holds one reservation per request, settled once by the channel that served, under a channel failing half its calls', async () => {
    const { accountId, clients } = await fundedClients();
    const answers = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => clients[i % 2]!.chat.completions.create({ ...FIXED_CALL, model: 'chat-routed' })));
    expect(answers).to.have.length(REQUESTS);

    const store = new PostgresEventStore({ pool: database.pool });
    const events = await store.readStream(accountStream(accountId));
    const reserved = events.filter((e) => e.type === 'FundsReserved');
    const settled = events.filter((e) => e.type === 'ReservationSettled').map((e) => e.data as { reservationId: string; amount: number; channel?: string });
    expect(reserved).to.have.length(REQUESTS);
    expect(events.filter((e) => e.type === 'ReservationReleased')).to.deep.equal([]);
    expect(new Set(settled.map((s) => s.reservationId)).size, 'each reservation settled once').to.equal(REQUESTS);
    expect(settled).to.have.length(REQUESTS);
    // Failed attempts cost nothing: every request is charged exactly one call's price.
    expect(settled.map((s) => s.amount)).to.deep.equal(Array(REQUESTS).fill(FIXED_CHARGE));
    // Each settlement names the channel that served: the flaky one served exactly the calls it passed on.
    const byChannel = (name: string) => settled.filter((s) => s.channel === name).length;
    expect(byChannel('flaky') + byChannel('steady')).to.equal(REQUESTS);
    expect(byChannel('flaky')).to.equal(Math.floor(flaky.seen / 2));
    expect(byChannel('steady')).to.be.greaterThan(0);

    const account = (await callJson(`${gateways[0]!.url}/admin/v1/accounts/${accountId}`, ADMIN_TOKEN, 'GET')).body;
    expect(account.balance).to.deep.include({ available: 1_000_000_000 - REQUESTS * FIXED_CHARGE, frozen: 0 });
    const report = await runAudit(database.pool, store, allProjections, { staleAfterMs: 3_600_000 });
    expect(report.invariantViolations).to.deep.equal([]);
    expect(report.mismatches).to.deep.equal([]);
  });

  it('keeps the other process away from a circuit one process opened', async () => {
    const [g1, g2] = gateways as [GatewayProcess, GatewayProcess];
    const { clients } = await fundedClients();
    for (let i = 0; i < 3; i++) await clients[0]!.chat.completions.create({ ...FIXED_CALL, model: 'chat-circuit' });
    const store = new PostgresEventStore({ pool: database.pool });
    // Appended after the answer, never in its way: waited for.
    await waitFor('the circuit opened in the log', async () => (await store.readStream(channelHealthStream('breaker'))).length > 0);
    expect((await store.readStream(channelHealthStream('breaker'))).map((e) => e.type)).to.deep.equal(['ChannelCircuitOpened']);
    expect(sample(await scrapeMetrics(g1.url), 'gateway_channel_state', { channel: 'breaker', state: 'open' })).to.equal(1);
    // g2 never called the breaker: it learns of the open circuit from the log.
    await waitFor('g2 to follow the open circuit', async () => sample(await scrapeMetrics(g2.url), 'gateway_channel_state', { channel: 'breaker', state: 'open' }) === 1 || null);
    const seen = breaker.seen;
    for (let i = 0; i < 3; i++) await clients[1]!.chat.completions.create({ ...FIXED_CALL, model: 'chat-circuit' });
    expect(breaker.seen, 'g2 sent nothing to the open circuit').to.equal(seen);
    // g2 appended nothing of its own: the transition is in the log once.
    expect((await store.readStream(channelHealthStream('breaker'))).map((e) => e.type)).to.deep.equal(['ChannelCircuitOpened']);
  });
});
