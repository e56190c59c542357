import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import { loadConfig } from '../../src/config';
import { createPool, freePort, startEmbeddedPostgres, tempDir, type Database, type EmbeddedServer } from '../../src/db/database';
import { defaultFeatures } from '../../src/features';
import { startGateway, type Gateway } from '../../src/gateway';
import { checkReadiness } from '../../src/lifecycle/readiness';
import { createLogger } from '../../src/log';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { sleep, waitFor } from '../support/wait';

const ADMIN_TOKEN = 'readiness-test-admin-token';

/**
 * A database server of this suite's own (never the shared one): stopped and started again under
 * a running gateway.
 */
describe('readiness, and recovery when the database goes away and comes back @integration', function () {
  this.timeout(180_000);
  let dir: string;
  let port: number;
  let server: EmbeddedServer | null = null;
  let database: Database;
  let gw: Gateway;
  let simulator: RunningSimulator | undefined;
  const lines: { level: number; msg: string; time: string }[] = [];

  const pgDir = (): string => path.join(dir, 'pg');
  const startServer = async (): Promise<void> => {
    server = await startEmbeddedPostgres({ dir: pgDir(), port, persistent: true, logger: createLogger('silent') });
  };

  before(async () => {
    dir = tempDir('gateway-readiness-');
    // As root the embedded server runs as the `postgres` user, which must reach its directory.
    fs.chmodSync(dir, 0o755);
    port = await freePort();
    await startServer();
    const pool = createPool(server!.url);
    database = { pool, url: server!.url, close: () => pool.end() };
    const logger = createLogger('info', {
      write(line: string) {
        lines.push(JSON.parse(line) as (typeof lines)[number]);
      },
    });
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: path.join(dir, 'data'),
      ADMIN_TOKEN,
      RECONCILE_INTERVAL_MS: '3600000',
      SUBSCRIPTION_POLL_MS: '200',
      SHUTDOWN_GRACE_MS: '2000',
    });
    simulator = await startSimulator();
    const fallbackUpstream = async (): Promise<string> => simulator!.url;
    gw = await startGateway(config, { logger, database, features: defaultFeatures(), fallbackUpstream });
  });

  after(async () => {
    await gw?.close();
    await simulator?.close();
    await database?.close();
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function get(route: string): Promise<{ status: number; body: any }> {
    const res = await fetch(gw.url + route);
    return { status: res.status, body: await res.json() };
  }

  async function admin(method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(gw.url + route, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }

  async function fundedKey(amount: number): Promise<{ accountId: string; key: string }> {
    const account = await admin('POST', '/admin/v1/accounts', { name: 'readiness test' });
    expect(account.status).to.equal(201);
    expect((await admin('POST', `/admin/v1/accounts/${account.body.id}/credits`, { amount, reference: `initial-${account.body.id}` })).status).to.equal(201);
    const key = await admin('POST', `/admin/v1/accounts/${account.body.id}/keys`, {});
    expect(key.status).to.equal(201);
    return { accountId: account.body.id as string, key: key.body.key as string };
  }

  async function chat(key: string): Promise<void> {
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'hello [sim:tokens=3]' }] });
    expect(completion.usage?.completion_tokens).to.equal(3);
  }

  it('reaches its embedded server over the Unix socket in the server\'s own directory', async () => {
    expect(new URL(server!.url).searchParams.get('host')).to.equal(path.resolve(pgDir()));
    const { rows } = await gw.pool.query<{ addr: string | null }>('SELECT inet_client_addr() AS addr');
    expect(rows[0]!.addr, 'no client address: a Unix-domain connection').to.equal(null);
  });

  it('answers /readyz 200 while serving, 503 with the reason while the database is away, and recovers without a restart and without flooding the log', async () => {
    expect(await get('/readyz')).to.deep.equal({ status: 200, body: { status: 'ready' } });
    expect(await get('/healthz')).to.deep.equal({ status: 200, body: { status: 'ok' } });
    const { accountId, key } = await fundedKey(1_000_000);
    await chat(key);

    const outageStart = lines.length;
    await server!.stop();
    server = null;
    const down = await waitFor('/readyz to answer 503', async () => {
      const answer = await get('/readyz');
      return answer.status === 503 ? answer : null;
    });
    expect(down.body.status).to.equal('unavailable');
    expect(down.body.reason).to.match(/^database: /);
    expect(await get('/healthz'), '/healthz is liveness: the process still answers').to.deep.equal({ status: 200, body: { status: 'ok' } });
    await waitFor('the job workers to notice the outage', async () => lines.slice(outageStart).some((l) => l.msg.startsWith('job claims failing')));
    // The outage goes on for a while: the old workers logged about 20 lines per second in it.
    await sleep(4000);

    await startServer();
    const up = await waitFor(
      '/readyz to answer 200 again',
      async () => {
        const answer = await get('/readyz');
        return answer.status === 200 ? answer : null;
      },
      60_000,
      100,
    );
    expect(up.body).to.deep.equal({ status: 'ready' });
    const outage = lines.slice(outageStart);

    // Pools, consumers (a credit waits for its read model), the lease and job workers work again.
    expect((await admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 5000, reference: 'after-outage' })).status).to.equal(201);
    await chat(key);
    const balance = await admin('GET', `/admin/v1/accounts/${accountId}`);
    expect(balance.body.balance.frozen).to.equal(0);
    expect(lines.filter((l) => l.msg === 'job claims succeed again')).to.have.length(1);

    // One warning per component and outage, not one per poll: the consumers may each report once.
    expect(outage.filter((l) => l.msg.startsWith('job claims failing')), 'job claim warnings').to.have.length(1);
    expect(outage.filter((l) => l.msg.startsWith('lease acquisition failing')).length, 'lease warnings').to.be.at.most(1);
    // Each consumer has two parts that meet the outage (its reader and its checkpoint writer):
    // each may report it once, whatever the outage's length.
    const loud = outage.filter((l) => l.level >= 40);
    const perConsumer = new Map<string, number>();
    for (const l of loud) {
      const consumer = (l as { consumer?: unknown }).consumer;
      if (typeof consumer === 'string') perConsumer.set(`${l.msg} ${consumer}`, (perConsumer.get(`${l.msg} ${consumer}`) ?? 0) + 1);
    }
    expect([...perConsumer].filter(([, n]) => n > 1), 'a consumer part that warned more than once').to.deep.equal([]);
    // The processes' followers of the log (src/eventstore/follow-log.ts) warn once each, and say once that they follow again.
    for (const follower of ['key cache', 'channel directory', 'channel health']) {
      expect(loud.filter((l) => l.msg.startsWith(`${follower}: `)).map((l) => l.msg), `${follower}'s warnings`).to.have.length(1);
      const again = (): number => lines.slice(outageStart).filter((l) => l.msg === `${follower}: following the log again`).length;
      await waitFor(`${follower} to follow the log again`, async () => again() > 0);
      expect(again(), `${follower} following again`).to.equal(1);
    }
    expect(loud.length, `warnings and errors in the outage: ${JSON.stringify(loud.map((l) => l.msg))}`).to.be.at.most(2 * gw.runners.size + 10);

    const report = await runAudit(gw.pool, gw.store, allProjections, { staleAfterMs: 3_600_000 });
    expect(report.invariantViolations, 'ledger invariants').to.deep.equal([]);
    expect(report.mismatches, 'read models against a replay of the log').to.deep.equal([]);
  });
  it('names the first reason it is not ready: shutting down, a missing migration, stopped consumers or job workers', async () => {
    const versions = (await gw.pool.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version);
    const sources = { pool: gw.pool, migrationVersions: versions, lifecycle: () => null, consumersProblem: () => null, jobsProblem: () => null };
    expect(await checkReadiness(sources)).to.deep.equal({ ready: true });
    expect(await checkReadiness({ ...sources, lifecycle: () => 'shutting down' })).to.deep.equal({ ready: false, reason: 'shutting down' });
    expect(await checkReadiness({ ...sources, migrationVersions: [...versions, 999_999] })).to.deep.equal({ ready: false, reason: 'migrations: 1 not applied' });
    expect(await checkReadiness({ ...sources, consumersProblem: () => 'accounts is restarting' })).to.deep.equal({ ready: false, reason: 'consumers: accounts is restarting' });
    expect(await checkReadiness({ ...sources, jobsProblem: () => 'stopped' })).to.deep.equal({ ready: false, reason: 'jobs: stopped' });
  });
});
