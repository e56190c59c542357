import type { IncomingHttpHeaders } from 'node:http';
import { expect } from 'chai';
import { request, type Dispatcher } from 'undici';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import { loadConfig } from '../../src/config';
import { defaultFeatures } from '../../src/features';
import type { Database } from '../../src/db/database';
import { startGateway, type GatewayFeature, type Gateway } from '../../src/gateway';
import { createLogger } from '../../src/log';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { createTestDatabase } from './database';
import { testFileStoreEnv } from './object-store';
import { removeTestTempDir, testTempDir } from './temp-dirs';

export interface TestGateway extends Gateway {
  /** The upstream simulator serving the channels CHANNELS leaves out (all, by default); this gateway's own. */
  readonly simulator: RunningSimulator;
  /** Calls the admin API; returns status and parsed body. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }>;
  /** Calls the /v1 API with an API key; a string or bytes are sent as they are, another body as JSON. */
  api(key: string | null, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  /** The balance of the key's account (GET /v1/account). */
  balance(key: string): Promise<{ available: number; frozen: number }>;
  /** A new account holding `amount` minor units, and an unrestricted key for it. */
  fundedAccount(amount: number, allowedModels?: string[] | null): Promise<{ accountId: string; key: string; keyId: string }>;
  /** Fails the test unless the ledger invariants and the replay comparison hold. */
  expectAuditClean(): Promise<void>;
  /** Stops this gateway process but keeps its database, for restart tests. */
  stopProcess(): Promise<void>;
  /**
   * Stops the gateway if still running, closes its database unless it reused another gateway's
   * (close that one after), and removes the data directory it made.
   */
  close(): Promise<void>;
}

export const TEST_ADMIN_TOKEN = 'test-admin-token';

let counter = 0;

/** A whole gateway on an ephemeral port, with its own database on the test server. */
export async function startTestGateway(
  env: Record<string, string> = {},
  options: {
    features?: readonly GatewayFeature[];
    clock?: () => Date;
    reuseDatabaseOf?: TestGateway;
    /** A database of the test's own (one reached through a TcpProxy), closed with the gateway. */
    database?: Database;
  } = {},
): Promise<TestGateway> {
  const database = options.database ?? (options.reuseDatabaseOf ? (options.reuseDatabaseOf as TestGatewayInternal).database : await createTestDatabase(20, { withSchema: true }));
  const ownDataDir = env.DATA_DIR ? null : testTempDir('gateway-test-data-');
  // TEST_FILE_STORE=s3 runs a suite's gateways on s3rver, unless a test chose its store itself.
  const fileStoreEnv = env.FILE_STORE ? {} : await testFileStoreEnv(env.DATA_DIR ?? ownDataDir!);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    ...(ownDataDir ? { DATA_DIR: ownDataDir } : {}),
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RECONCILE_INTERVAL_MS: '3600000',
    SUBSCRIPTION_POLL_MS: '200',
    // A stream still open when a test closes its gateway is cut after this (the default is 10 s).
    SHUTDOWN_GRACE_MS: '2000',
    // A write waits this long for its read model before answering 503 (default 5 s): a busy
    // machine may need longer. read-model-behind.test.ts sets it short on purpose.
    PROJECTION_WAIT_MS: '30000',
    ...fileStoreEnv,
    ...env,
  });
  const logger = createLogger(config.logLevel);
  // Like the entry point, the test support injects the simulator as the provider of every channel CHANNELS leaves out.
  const simulator = await startSimulator();
  let gateway: Gateway;
  try {
    gateway = await startGateway(config, {
      logger,
      database,
      features: options.features ?? defaultFeatures(),
      clock: options.clock,
      fallbackUpstream: async () => simulator.url,
    });
  } catch (err) {
    await simulator.close();
    if (ownDataDir) removeTestTempDir(ownDataDir);
    throw err;
  }

  // undici's request rather than fetch: the same client library at about a third of the CPU per
  // call, which the suite's thousands of calls feel. It follows no redirect, like the API's clients.
  async function call(auth: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await request(gateway.url + path, {
      method: method as Dispatcher.HttpMethod,
      headers: {
        ...(auth ? { authorization: `Bearer ${auth}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.statusCode, body: parsed as any, headers: toHeaders(res.headers) };
  }

  let processStopped = false;
  const test: TestGatewayInternal = Object.assign(Object.create(null) as object, gateway, {
    database,
    simulator,
    admin: (method: string, path: string, body?: unknown) => call(TEST_ADMIN_TOKEN, method, path, body),
    api: (key: string | null, method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(key, method, path, body, headers),
    balance: async (key: string) => (await call(key, 'GET', '/v1/account')).body.balance as { available: number; frozen: number },
    async fundedAccount(amount: number, allowedModels: string[] | null = null) {
      const account = await call(TEST_ADMIN_TOKEN, 'POST', '/admin/v1/accounts', { name: `test account ${++counter}` });
      expect(account.status).to.equal(201);
      const accountId = account.body.id as string;
      if (amount > 0) {
        const credit = await call(TEST_ADMIN_TOKEN, 'POST', `/admin/v1/accounts/${accountId}/credits`, { amount, reference: `initial-${accountId}` });
        expect(credit.status).to.equal(201);
      }
      const key = await call(TEST_ADMIN_TOKEN, 'POST', `/admin/v1/accounts/${accountId}/keys`, { allowed_models: allowedModels });
      expect(key.status).to.equal(201);
      return { accountId, key: key.body.key as string, keyId: key.body.id as string };
    },
    async expectAuditClean() {
      const report = await runAudit(gateway.pool, gateway.store, allProjections, { staleAfterMs: 3_600_000 });
      expect(report.invariantViolations, 'ledger invariants').to.deep.equal([]);
      expect(report.mismatches, 'read models against a replay of the log').to.deep.equal([]);
    },
    async stopProcess() {
      processStopped = true;
      await gateway.close();
      await simulator.close();
    },
    async close() {
      if (!processStopped) {
        await gateway.close();
        await simulator.close();
      }
      processStopped = true;
      if (!options.reuseDatabaseOf) await database.close();
      if (ownDataDir) removeTestTempDir(ownDataDir);
    },
  });
  return test;
}

function toHeaders(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  return headers;
}

interface TestGatewayInternal extends TestGateway {
  readonly database: Database;
}
