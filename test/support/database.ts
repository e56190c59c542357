import { randomBytes } from 'node:crypto';
import { Client, type Pool } from 'pg';
import { createPool, type Database } from '../../src/db/database';

function adminUrl(): string {
  const url = process.env.TEST_ADMIN_DATABASE_URL;
  if (!url) throw new Error('the global test fixture did not start a database server');
  return url;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** The environment variable naming the database the global fixture prepared the gateway's schema in. */
const SCHEMA_TEMPLATE_VARIABLE = 'TEST_SCHEMA_TEMPLATE_DATABASE';

/**
 * Creates, once per run, a database holding the gateway's schema and nothing else, for
 * createTestDatabase to copy: a copy costs one CREATE DATABASE, where preparing the schema in every
 * test database costs dozens of DDL statements each time. Returns a function that drops it.
 */
export async function createSchemaTemplate(prepare: (pool: Pool) => Promise<void>): Promise<() => Promise<void>> {
  const name = `gwt_template_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const pool = createPool(databaseUrl(name), 1);
  try {
    await prepare(pool);
  } finally {
    await pool.end();
  }
  process.env[SCHEMA_TEMPLATE_VARIABLE] = name;
  return () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/**
 * A fresh database on the test server; close() drops it. Empty, or with `withSchema` a copy of the
 * schema template (the schema the gateway would prepare at start, which then finds nothing to do).
 */
export async function createTestDatabase(poolSize = 20, options: { withSchema?: boolean } = {}): Promise<Database> {
  const name = `gwt_${randomBytes(6).toString('hex')}`;
  const template = options.withSchema ? process.env[SCHEMA_TEMPLATE_VARIABLE] : undefined;
  if (options.withSchema && !template) throw new Error('the global test fixture did not prepare a schema template');
  await adminQuery(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  const url = databaseUrl(name);
  const pool = createPool(url, poolSize);
  return {
    pool,
    url,
    async close() {
      await pool.end();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
