import fs from 'node:fs';
import { startEmbeddedPostgres, tempDir, type EmbeddedServer } from '../../src/db/database';
import { allProjections } from '../../projections';
import { createLogger } from '../../src/log';
import { prepareSchema } from '../../src/storage';
import { createSchemaTemplate } from './database';
import { closeRootSuiteResources } from './root-suite';
import { removeAllTestTempDirs } from './temp-dirs';

/**
 * One PostgreSQL server for the whole run: the machine's own when DATABASE_URL is set (CI), else
 * an embedded one in a temporary directory. Each test suite creates its own database on it, most
 * of them copies of a template holding the gateway's schema (test/support/database.ts).
 */
let embedded: EmbeddedServer | null = null;
let dir: string | null = null;
let dropSchemaTemplate: (() => Promise<void>) | null = null;

export async function mochaGlobalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) {
    process.env.TEST_ADMIN_DATABASE_URL = process.env.DATABASE_URL;
  } else {
    dir = tempDir('gateway-test-pg-');
    // The embedded server may run as the `postgres` system user, which must reach its directory.
    fs.chmodSync(dir, 0o755);
    embedded = await startEmbeddedPostgres({ dir: `${dir}/data`, port: 0, persistent: false, logger: createLogger('silent') });
    process.env.TEST_ADMIN_DATABASE_URL = embedded.url;
  }
  dropSchemaTemplate = await createSchemaTemplate((pool) => prepareSchema(pool, allProjections));
}

export async function mochaGlobalTeardown(): Promise<void> {
  removeAllTestTempDirs();
  await dropSchemaTemplate?.();
  await embedded?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

/** Mocha's root hooks: what a test file shares beyond itself is closed when the root suite ends (test/support/root-suite.ts). */
export const mochaHooks = {
  async afterAll(): Promise<void> {
    await closeRootSuiteResources();
  },
};
