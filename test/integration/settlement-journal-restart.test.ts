import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { createPool, tempDir, type Database } from '../../src/db/database';
import { accountStream } from '../../src/domain/account/events';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { allSimulatorRoutes } from '../../simulator/all-routes';
import { createSimulator, type Simulator } from '../../simulator/server';
import { createTestDatabase } from '../support/database';
import { callJson, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { startTcpProxy, tcpTargetOf, throughProxy, type TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';

const ADMIN_TOKEN = 'journal-restart-admin-token';


/**
 * A streamed chat delivered while the database is away, its gateway killed (SIGKILL) before the
 * database comes back: the next start on the same data directory settles it from the journal,
 * exactly once.
 */
describe('a settlement journaled during an outage survives kill -9 @integration', function () {
  this.timeout(120_000);

  let database: Database;
  let proxy: TcpProxy;
  let simulator: Simulator;
  let dataDir: string;
  const gateways: GatewayProcess[] = [];

  before(async () => {
    database = await createTestDatabase(20, { withSchema: true });
    proxy = await startTcpProxy(tcpTargetOf(database.url));
    simulator = createSimulator({ routes: allSimulatorRoutes() });
    await simulator.listen(0, '127.0.0.1');
    dataDir = tempDir('gateway-journal-restart-');
  });

  after(async () => {
    proxy?.restore();
    await Promise.all(gateways.map((g) => g.stop()));
    await simulator?.close();
    await proxy?.close();
    await database?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function start(name: string): Promise<GatewayProcess> {
    const simulatorUrl = `http://127.0.0.1:${(simulator.server.address() as { port: number }).port}`;
    return startGatewayProcess(name, {
      DATABASE_URL: throughProxy(database.url, proxy),
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      URL_SIGNING_SECRET: 'journal-restart-signing-secret',
      CHANNELS: JSON.stringify(channelsServedBy(simulatorUrl, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 8 })),
      SETTLEMENT_JOURNAL_RETRY_MS: '50',
    }).then((g) => {
      gateways.push(g);
      return g;
    });
  }

  it('settles the delivered stream once, at the next start', async () => {
    const first = await start('g1');
    const accountId = (await callJson(`${first.url}/admin/v1/accounts`, ADMIN_TOKEN, 'POST', { name: 'journal restart' })).body.id as string;
    expect((await callJson(`${first.url}/admin/v1/accounts/${accountId}/credits`, ADMIN_TOKEN, 'POST', { amount: 10_000_000, reference: 'journal-restart' })).status).to.equal(201);
    const key = (await callJson(`${first.url}/admin/v1/accounts/${accountId}/keys`, ADMIN_TOKEN, 'POST', {})).body.key as string;

    const gate = `journal-restart-${accountId}`;
    const simulatorUrl = `http://127.0.0.1:${(simulator.server.address() as { port: number }).port}`;
    const streamed = fetch(`${first.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'chat-fast',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: `delivered, then the gateway dies [sim:tokens=12] [sim:gate=${gate}]` }],
      }),
    });
    await waitFor('the call at the provider', async () => ((await (await fetch(`${simulatorUrl}/sim/gates/${gate}`)).json()) as { waiting: number }).waiting === 1);
    await waitFor('its reservation durable', async () => (await callJson(`${first.url}/v1/account`, key)).body.balance?.frozen > 0);

    proxy.cut();
    expect((await fetch(`${simulatorUrl}/sim/gates/${gate}/open`, { method: 'POST' })).status).to.equal(200);
    const res = await streamed;
    expect(res.status).to.equal(200);
    const text = await res.text();
    expect(text.trimEnd().endsWith('data: [DONE]'), text).to.equal(true);
    const usage = text
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)))
      .find((chunk) => chunk.usage)?.usage;
    expect(usage?.completion_tokens).to.equal(12);
    const journal = path.join(dataDir, 'settlement-journal');
    const kept = await waitFor('the settlement journaled', async () => {
      const files = fs.existsSync(journal) ? fs.readdirSync(journal).filter((f) => f.endsWith('.json')) : [];
      return files.length === 1 ? files : null;
    });
    await first.kill();

    proxy.restore();
    const second = await start('g2');
    await waitFor('the reservation settled', async () => (await callJson(`${second.url}/v1/account`, key)).body.balance?.frozen === 0);
    expect(fs.readdirSync(journal).filter((f) => f.endsWith('.json')), 'the journal emptied').to.deep.equal([]);

    const pool = createPool(database.url, 2);
    const store = new PostgresEventStore({ pool });
    try {
      const events = await store.readStream(accountStream(accountId));
      const closes = events.filter((e) => e.type === 'ReservationSettled' || e.type === 'ReservationReleased');
      expect(closes.map((e) => [e.type, (e.data as { reservationId: string }).reservationId]), 'settled exactly once').to.deep.equal([['ReservationSettled', kept[0]!.slice(0, -'.json'.length)]]);
      const settled = closes[0]!.data as { amount: number; usage: { completion_tokens: number } };
      expect(settled.usage.completion_tokens).to.equal(12);
      const account = await callJson(`${second.url}/v1/account`, key);
      expect(account.body.balance.available).to.equal(10_000_000 - settled.amount);
      const report = await runAudit(pool, store, allProjections, { staleAfterMs: 3_600_000 });
      expect(report.invariantViolations, 'ledger invariants').to.deep.equal([]);
      expect(report.mismatches, 'read models against a replay of the log').to.deep.equal([]);
    } finally {
      await store.close();
      await pool.end();
    }
  });
});
