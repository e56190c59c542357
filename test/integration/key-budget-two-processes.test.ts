import fs from 'node:fs';
import { expect } from 'chai';
import OpenAI from 'openai';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { tempDir, type Database } from '../../src/db/database';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { channelsServedBy } from '../../src/upstreams/registry';
import { allSimulatorRoutes } from '../../simulator/all-routes';
import { createSimulator, type Simulator } from '../../simulator/server';
import { createTestDatabase } from '../support/database';
import { expectBudgetRefusals, FIXED_CHARGE, fireFixedCalls } from '../support/fixed-chat';
import { callJson, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { ALL_MODEL_TYPES } from '../../src/model-types';

const ADMIN_TOKEN = 'key-budget-admin-token';


/** Two gateway processes on one database deciding on the same account stream: the budget holds across them. */
describe('a key budget across two gateway processes @integration', function () {
  this.timeout(120_000);

  let database: Database;
  let simulator: Simulator;
  let dataDir: string;
  let gateways: GatewayProcess[] = [];

  before(async () => {
    database = await createTestDatabase(20, { withSchema: true });
    simulator = createSimulator({ routes: allSimulatorRoutes() });
    const simulatorUrl = await simulator.listen(0, '127.0.0.1');
    dataDir = tempDir('gateway-key-budget-');
    const env = {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      URL_SIGNING_SECRET: 'key-budget-signing-secret',
      CHANNELS: JSON.stringify(channelsServedBy(simulatorUrl, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 64 })),
      RATE_LIMIT_PER_MINUTE: '100000',
    };
    gateways = await Promise.all(['g1', 'g2'].map((name) => startGatewayProcess(name, env)));
  });

  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await simulator?.close();
    await database?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('lets exactly 10 of 50 parallel requests, split over both, through a budget for 10', async () => {
    const [g1, g2] = gateways as [GatewayProcess, GatewayProcess];
    const accountId = (await callJson(`${g1.url}/admin/v1/accounts`, ADMIN_TOKEN, 'POST', { name: 'two processes' })).body.id as string;
    expect((await callJson(`${g2.url}/admin/v1/accounts/${accountId}/credits`, ADMIN_TOKEN, 'POST', { amount: 100_000_000, reference: 'fund' })).status).to.equal(201);
    const issued = await callJson(`${g1.url}/admin/v1/accounts/${accountId}/keys`, ADMIN_TOKEN, 'POST', { budget: { amount: 10 * FIXED_CHARGE, period: 'month' } });
    expect(issued.status).to.equal(201);

    const clients = [g1, g2].map((g) => new OpenAI({ apiKey: issued.body.key, baseURL: `${g.url}/v1` }));
    const { ok, refused } = await fireFixedCalls(clients, 50);
    expect(ok).to.equal(10);
    expect(refused).to.have.length(40);
    expectBudgetRefusals(refused);

    const [key] = (await callJson(`${g2.url}/admin/v1/accounts/${accountId}/keys`, ADMIN_TOKEN, 'GET')).body.data;
    expect(key.budget).to.deep.include({ spent: 10 * FIXED_CHARGE, remaining: 0 });
    const account = (await callJson(`${g1.url}/admin/v1/accounts/${accountId}`, ADMIN_TOKEN, 'GET')).body;
    expect(account.balance).to.deep.include({ available: 100_000_000 - 10 * FIXED_CHARGE, frozen: 0 });

    const pool = database.pool;
    const report = await runAudit(pool, new PostgresEventStore({ pool }), allProjections, { staleAfterMs: 3_600_000 });
    expect(report.invariantViolations).to.deep.equal([]);
    expect(report.mismatches).to.deep.equal([]);
  });
});
