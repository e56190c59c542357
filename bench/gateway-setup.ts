import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { Catalog, DEFAULT_CATALOG_FILE } from '../src/billing/catalog';
import { loadConfig } from '../src/config';
import { createPool, tempDir, type Database } from '../src/db/database';
import { defaultFeatures } from '../src/features';
import { startGateway, type Gateway } from '../src/gateway';
import { createLogger } from '../src/log';
import { channelsServedBy } from '../src/upstreams/registry';
import { createSimulator, type ExtraRoute } from '../simulator/server';
import type { BenchDatabase } from './support';
import { ALL_MODEL_TYPES } from '../src/model-types';

/**
 * The setup the gateway benches share: the simulator, a gateway on the bench database whose every
 * catalog channel goes to that simulator, funded accounts, and the gateway's HTTP API.
 */

export interface BenchAccount {
  readonly accountId: string;
  readonly key: string;
}

export interface BenchGateway {
  readonly gateway: Gateway;
  /** The simulator's base URL. */
  readonly simUrl: string;
  /** `n` accounts with one API key each, credited 1e12 minor units (enough for any run). */
  fundedAccounts(n: number, name: string): Promise<BenchAccount[]>;
  /** Closes the gateway, then the simulator, the gateway's pool and its data directory. */
  close(): Promise<void>;
}

export async function startBenchGateway(
  db: BenchDatabase,
  options: {
    /** Connections of the gateway's own pool on the bench database (the gateway's default is 20). */
    readonly poolSize: number;
    /** Configuration beyond the port, the admin token, the data directory and the channels. */
    readonly env: Readonly<Record<string, string>>;
    readonly dataDirPrefix: string;
    /** Simulator routes replacing or adding to the built-in ones. */
    readonly routes?: readonly ExtraRoute[];
  },
): Promise<BenchGateway> {
  const adminToken = randomBytes(16).toString('hex');
  const dataDir = tempDir(options.dataDirPrefix);
  const simulator = createSimulator(options.routes ? { routes: options.routes } : {});
  // The gateway gets its own pool on the bench database; it does not close it.
  const gatewayPool = createPool(db.url, options.poolSize);
  const database: Database = { pool: gatewayPool, url: db.url, close: () => gatewayPool.end() };
  let gateway: Gateway | undefined;
  const close = async (): Promise<void> => {
    try {
      if (gateway) await gateway.close();
    } finally {
      await simulator.close();
      await database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  };
  try {
    const simUrl = await simulator.listen(0);
    // Every channel the catalog names must be configured once CHANNELS is set: all go to the simulator.
    const channels = channelsServedBy(simUrl, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 60_000, maxConcurrency: 128 });
    gateway = await startGateway(
      loadConfig({ PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: adminToken, DATA_DIR: dataDir, CHANNELS: JSON.stringify(channels), ...options.env }),
      { database, features: defaultFeatures(), logger: createLogger('silent') },
    );
    const url = gateway.url;
    return {
      gateway,
      simUrl,
      async fundedAccounts(n, name) {
        const accounts: BenchAccount[] = [];
        for (let a = 0; a < n; a++) accounts.push(await fundedAccount(url, adminToken, name));
        return accounts;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** One call of the gateway's HTTP API; the body is parsed JSON, or the text when it is not JSON. */
export async function call(url: string, token: string, method: string, pathname: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url + pathname, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}

export async function fundedAccount(url: string, adminToken: string, name: string): Promise<BenchAccount> {
  const expect = (what: string, res: { status: number; body: unknown }, status: number): void => {
    if (res.status !== status) throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  };
  const account = await call(url, adminToken, 'POST', '/admin/v1/accounts', { name });
  expect('create account', account, 201);
  const accountId = account.body.id as string;
  // 1e12 minor units: a chat request reserves about 16k (4096 tokens at 4 per token) and a 5 s 720p
  // video-pro-1.5 task 1.5M, so a bench run never runs out.
  const credit = await call(url, adminToken, 'POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 1_000_000_000_000, reference: `bench-${accountId}` });
  expect('credit account', credit, 201);
  const key = await call(url, adminToken, 'POST', `/admin/v1/accounts/${accountId}/keys`, {});
  expect('create key', key, 201);
  return { accountId, key: key.body.key as string };
}

/** The accounts' balances summed, or null when a GET /v1/account failed. */
export async function summedBalance(url: string, accounts: readonly BenchAccount[]): Promise<{ available: number; frozen: number } | null> {
  let frozen = 0;
  let available = 0;
  for (const { key } of accounts) {
    const res = await call(url, key, 'GET', '/v1/account');
    const balance = res.status === 200 ? (res.body.balance as { available: number; frozen: number } | undefined) : undefined;
    if (!balance) return null;
    frozen += balance.frozen;
    available += balance.available;
  }
  return { available, frozen };
}
