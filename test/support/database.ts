import { randomBytes } from 'node:crypto';
import { Client, type Pool, type PoolClient } from 'pg';
import { createPool, type Database } from '../../src/db/database';
import { readTemplateState, resetToTemplate, type TemplateState } from './template-state';

function adminUrl(): string {
  const url = process.env.TEST_ADMIN_DATABASE_URL;
  if (!url) throw new Error('the global test fixture did not start a database server');
  return url;
}

async function connected<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function adminQuery(sql: string): Promise<void> {
  return connected(adminUrl(), async (client) => void (await client.query(sql)));
}

function databaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The environment variables (read by the worker processes, which inherit them) naming this run,
 * the database the global fixture prepared the gateway's schema in, and that template's state.
 */
const RUN_VARIABLE = 'TEST_DATABASE_RUN';
const SCHEMA_TEMPLATE_VARIABLE = 'TEST_SCHEMA_TEMPLATE_DATABASE';
const TEMPLATE_STATE_VARIABLE = 'TEST_SCHEMA_TEMPLATE_STATE';

/** Every test database of a run is named after the run, so that its end drops whatever is left. */
function newDatabaseName(): string {
  const run = process.env[RUN_VARIABLE];
  if (!run) throw new Error('the global test fixture did not name the run');
  return `gwt_${run}_${randomBytes(6).toString('hex')}`;
}

/**
 * Creates, once per run, a database holding the gateway's schema and nothing else, for
 * createTestDatabase to copy: a copy costs one CREATE DATABASE, where preparing the schema in every
 * test database costs dozens of DDL statements each time. Returns a function that drops it and
 * every test database of the run still there (the emptied copies kept for reuse, below).
 */
export async function createSchemaTemplate(prepare: (pool: Pool) => Promise<void>): Promise<() => Promise<void>> {
  const run = randomBytes(6).toString('hex');
  const name = `gwt_template_${run}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const pool = createPool(databaseUrl(name), 1);
  let state: TemplateState;
  try {
    await prepare(pool);
    const client = await pool.connect();
    try {
      state = await readTemplateState(client);
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
  process.env[RUN_VARIABLE] = run;
  process.env[SCHEMA_TEMPLATE_VARIABLE] = name;
  process.env[TEMPLATE_STATE_VARIABLE] = JSON.stringify(state);
  return () =>
    connected(adminUrl(), async (admin) => {
      const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`gwt\\_${run}\\_%`]);
      for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
}

/**
 * Copies of the template that a closed test database was emptied back to, ready for the next one
 * this process creates. A CREATE DATABASE costs the server about half a second of CPU (the run
 * makes about 70), emptying a copy a twentieth of that.
 */
const emptiedCopies: string[] = [];

/** The copies this process holds ready for reuse, newest last (for the tests of this mechanism). */
export function emptiedCopiesReady(): readonly string[] {
  return [...emptiedCopies];
}

/** The schema template's state as the global fixture read it. */
export function schemaTemplateState(): TemplateState {
  const state = process.env[TEMPLATE_STATE_VARIABLE];
  if (!state) throw new Error('the global test fixture did not prepare a schema template');
  return JSON.parse(state) as TemplateState;
}

/**
 * A database on the test server, the caller's alone until close(). Empty (close() drops it), or
 * with `withSchema` a copy of the schema template (the schema the gateway would prepare at start,
 * which then finds nothing to do): close() empties such a copy for the next test of this process,
 * or drops it when it cannot be reused (emptyForReuse).
 */
export async function createTestDatabase(poolSize = 20, options: { withSchema?: boolean } = {}): Promise<Database> {
  const template = options.withSchema ? process.env[SCHEMA_TEMPLATE_VARIABLE] : undefined;
  if (options.withSchema && !template) throw new Error('the global test fixture did not prepare a schema template');
  let name = template ? emptiedCopies.pop() : undefined;
  if (!name) {
    name = newDatabaseName();
    await adminQuery(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  }
  const url = databaseUrl(name);
  const pool = createPool(url, poolSize);
  // pool.end() asks its connections to close without waiting for them: a copy is emptied for
  // reuse only once the server has seen them go (a connection's 'end' comes after its backend
  // left pg_stat_activity), or it would look still in use.
  const connections = new Set<PoolClient>();
  pool.on('connect', (client) => {
    connections.add(client);
    client.once('end', () => connections.delete(client));
  });
  const closing = name;
  return {
    pool,
    url,
    async close() {
      const ended = [...connections].map((client) => new Promise((resolve) => client.once('end', resolve)));
      await pool.end();
      await Promise.all(ended);
      const copy = template ? await emptyForReuse(closing) : null;
      if (copy) emptiedCopies.push(copy);
      else await adminQuery(`DROP DATABASE IF EXISTS ${closing} WITH (FORCE)`);
    },
  };
}

/**
 * Renames a closed copy of the template and empties it: its new name, or null when it cannot be
 * reused (then the caller drops it). The rename comes first and needs the copy to have no session
 * left, so that nothing from the test that used it (a child gateway still shutting down, say) can
 * connect to it again once the next test has it: such a copy is dropped, as before.
 */
async function emptyForReuse(name: string): Promise<string | null> {
  const state = schemaTemplateState();
  const next = newDatabaseName();
  const renamed = await connected(adminUrl(), async (admin) => {
    const { rows } = await admin.query<{ sessions: number }>(
      `SELECT count(*)::int AS sessions FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
      [name],
    );
    if (rows[0]!.sessions > 0) return false;
    // A session that connects meanwhile makes the rename fail (after waiting up to 5 s for it to
    // leave); an autovacuum worker on the copy is stopped by the rename itself.
    return admin.query(`ALTER DATABASE ${name} RENAME TO ${next}`).then(
      () => true,
      () => false,
    );
  });
  if (!renamed) return null;
  const emptied = await connected(databaseUrl(next), (client) => resetToTemplate(client, state)).catch(() => false);
  if (emptied) return next;
  await adminQuery(`DROP DATABASE IF EXISTS ${next} WITH (FORCE)`);
  return null;
}
