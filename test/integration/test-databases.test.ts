import { expect } from 'chai';
import { Client } from 'pg';
import type { Database } from '../../src/db/database';
import { createTestDatabase, emptiedCopiesReady, schemaTemplateState } from '../support/database';
import { readTemplateState } from '../support/template-state';

/** The name of a test database, from its URL. */
function nameOf(db: Database): string {
  return new URL(db.url).pathname.slice(1);
}

async function exists(db: Database, name: string): Promise<boolean> {
  const { rows } = await db.pool.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  return rows.length === 1;
}

/**
 * The test support empties a closed copy of the schema template and hands it to the next test
 * instead of creating a new one (test/support/database.ts): the tests' isolation rests on a reused
 * copy being indistinguishable from a new one.
 */
describe('test databases: copies of the schema template reused @integration', () => {
  const open: Database[] = [];
  afterEach(async () => {
    for (const db of open.splice(0)) await db.close();
  });
  async function copy(): Promise<Database> {
    const db = await createTestDatabase(4, { withSchema: true });
    open.push(db);
    return db;
  }
  async function close(db: Database): Promise<void> {
    open.splice(open.indexOf(db), 1);
    await db.close();
  }

  it('empties a used copy back to the template, renamed, and the next test gets it', async () => {
    const used = await copy();
    // Four queries at once open four connections, as a gateway's pool has several: close() waits
    // until the server saw each one go.
    await Promise.all([1, 2, 3, 4].map(() => used.pool.query('SELECT 1')));
    expect(used.pool.totalCount).to.equal(4);
    await used.pool.query(`INSERT INTO jobs (kind, key, payload, due_at) VALUES ('x', 'y', '{}', now())`);
    await used.pool.query(`SELECT nextval('es_events_position_seq')`);
    await used.pool.query(`INSERT INTO consumer_checkpoints (name) VALUES ('a test')`);
    const before = emptiedCopiesReady().length;
    await close(used);
    expect(emptiedCopiesReady()).to.have.length(before + 1);
    const emptied = emptiedCopiesReady().at(-1);

    const next = await copy();
    expect(nameOf(next)).to.equal(emptied);
    expect(nameOf(next)).not.to.equal(nameOf(used));
    // Nothing can reach it by its old name, so nothing left over from the last test writes into it.
    expect(await exists(next, nameOf(used))).to.equal(false);
    const client = await next.pool.connect();
    try {
      const state = await readTemplateState(client);
      const template = schemaTemplateState();
      expect(state.fingerprint).to.equal(template.fingerprint);
      // Only the template's own rows are left: every other table is empty.
      expect(state.seeded).to.deep.equal(template.seeded);
    } finally {
      client.release();
    }
    const { rows } = await next.pool.query<{ position: string }>(`SELECT nextval('es_events_position_seq')::text AS position`);
    expect(rows[0]!.position).to.equal('1');
  });

  it('drops a copy whose schema a test changed', async () => {
    const changed = await copy();
    await changed.pool.query('ALTER TABLE jobs ADD COLUMN added_by_a_test int');
    const observer = await copy();
    const ready = emptiedCopiesReady();
    await close(changed);
    expect(emptiedCopiesReady()).to.deep.equal(ready);
    expect(await exists(observer, nameOf(changed))).to.equal(false);
  });

  it('drops a copy that a session is still connected to, ending that session', async () => {
    const held = await copy();
    const lingering = new Client({ connectionString: held.url });
    lingering.on('error', () => undefined);
    await lingering.connect();
    const ended = new Promise<void>((resolve) => lingering.once('end', resolve));
    const observer = await copy();
    const ready = emptiedCopiesReady();
    await close(held);
    expect(emptiedCopiesReady()).to.deep.equal(ready);
    expect(await exists(observer, nameOf(held))).to.equal(false);
    await ended;
  });
});
