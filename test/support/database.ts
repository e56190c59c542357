import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
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

/** A fresh, empty database on the test server; close() drops it. */
export async function createTestDatabase(poolSize = 20): Promise<Database> {
  const name = `gwt_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  const pool = createPool(url.toString(), poolSize);
  return {
    pool,
    url: url.toString(),
    async close() {
      await pool.end();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
