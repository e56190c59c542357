import { expect } from 'chai';
import OpenAI from 'openai';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { expectBudgetRefusals, FIXED_CHARGE, fireFixedCalls } from '../support/fixed-chat';
import { callJson, type GatewayProcess } from '../support/gateway-process';
import { startProcessFleet, type ProcessFleet } from '../support/process-fleet';

const ADMIN_TOKEN = 'key-budget-admin-token';


/** Two gateway processes on one database deciding on the same account stream: the budget holds across them. */
describe('a key budget across two gateway processes @integration', function () {
  this.timeout(120_000);

  let fleet: ProcessFleet;
  let gateways: GatewayProcess[] = [];

  before(async () => {
    fleet = await startProcessFleet('key-budget', ADMIN_TOKEN);
    gateways = await Promise.all(['g1', 'g2'].map((name) => fleet.start(name, { RATE_LIMIT_PER_MINUTE: '100000' })));
  });

  after(async () => fleet?.close());

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

    const pool = fleet.database.pool;
    const report = await runAudit(pool, new PostgresEventStore({ pool }), allProjections, { staleAfterMs: 3_600_000 });
    expect(report.invariantViolations).to.deep.equal([]);
    expect(report.mismatches).to.deep.equal([]);
  });
});
