import { expect } from 'chai';
import type { Database } from '../../src/db/database';
import { migrate } from '../../src/db/migrations';
import { withChanges } from '../../src/domain/with-changes';
import { jsonText } from '../../src/eventstore/json-text';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { ALL_MIGRATIONS } from '../../src/gateway';
import { arrayLiteral, insertRows, type BulkColumn } from '../../src/projections-runtime/bulk';
import { createTestDatabase } from '../support/database';
import { TRICKY_DATA } from '../support/event-log';

/**
 * Read models written in bulk (one parameter per column, jsonb columns as one JSON array) must
 * hold exactly what a row-by-row parameterised INSERT of the same values holds.
 */
describe('bulk inserts of read-model rows @integration', () => {
  let db: Database;
  before(async () => {
    db = await createTestDatabase(2);
  });
  after(async () => {
    await db.close();
  });

  const columns: readonly BulkColumn[] = [
    ['id', 'int'],
    ['name', 'text'],
    ['amount', 'bigint'],
    ['at', 'timestamptz'],
    ['flag', 'boolean'],
    ['details', 'jsonb'],
    ['extra', 'jsonb'],
  ];
  const tricky = ['plain', 'with "quotes"', 'back\\slash \\" both', 'comma, {brace} NULL', 'NULL', '', ' spaced ', 'unicode 说 ✓ 😀', 'tab\tnew\nline'];
  const rows = tricky.map((name, i) => ({
    id: i,
    name,
    amount: i % 3 === 0 ? null : 9_007_199_254_740_991 - i,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, i, 123)).toISOString(),
    flag: i % 2 === 0,
    details: { name, nested: { list: [1, 'two', null, { q: name }] }, n: i / 4 },
    ...(i % 4 === 1 ? {} : { extra: i % 4 === 2 ? null : i % 4 === 3 ? name : [name, i] }),
  }));

  it('writes the rows a row-by-row INSERT writes, quotes, backslashes, NULLs, empty strings and JSON included', async () => {
    const ddl = (table: string) => `CREATE TABLE ${table} (id int PRIMARY KEY, name text, amount bigint, at timestamptz, flag boolean, details jsonb, extra jsonb)`;
    await db.pool.query(ddl('bulk_rows'));
    await db.pool.query(ddl('single_rows'));
    const client = await db.pool.connect();
    try {
      await insertRows(client, 'bulk_rows', columns, rows);
      await insertRows(client, 'bulk_rows', columns, []);
    } finally {
      client.release();
    }
    for (const r of rows) {
      await db.pool.query('INSERT INTO single_rows VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        r.id,
        r.name,
        r.amount,
        r.at,
        r.flag,
        JSON.stringify(r.details),
        'extra' in r && r.extra !== null && r.extra !== undefined ? JSON.stringify(r.extra) : null,
      ]);
    }
    const text = async (table: string) => (await db.pool.query(`SELECT id, name, amount::text, at::text, flag, details::text, extra::text FROM ${table} ORDER BY id`)).rows;
    const bulk = await text('bulk_rows');
    expect(bulk).to.have.length(tricky.length);
    expect(bulk).to.deep.equal(await text('single_rows'));
    expect(bulk.map((r) => r.name)).to.deep.equal(tricky);
    expect(bulk[2].extra).to.equal(null);
    expect(bulk[3].extra).to.equal(JSON.stringify(tricky[3]));
  });

  it('writes an event\'s data read from the log as the text the log gave, which stores the same value', async () => {
    await migrate(db.pool, ALL_MIGRATIONS);
    const store = new PostgresEventStore({ pool: db.pool });
    try {
      const data = TRICKY_DATA.map((value, i) => ({ value, n: i + 0.5, list: [i, String(i), null] }));
      await store.append('bulk-json-text', data.map((d) => ({ type: 'Tricky', data: d })), { expectedVersion: 'no_stream' });
      const read = await store.readStream('bulk-json-text');
      const logged = (await db.pool.query<{ data: string }>(`SELECT data::text AS data FROM es_events WHERE stream_id = 'bulk-json-text' ORDER BY revision`)).rows.map((r) => r.data);
      expect(read.map((e) => e.data)).to.deep.equal(data);
      // The log's own text (jsonb's spacing), not JSON.stringify's: the value was not encoded again.
      expect(read.map((e) => jsonText(e.data))).to.deep.equal(logged);
      expect(logged[0]).not.to.equal(JSON.stringify(data[0]));

      await db.pool.query('CREATE TABLE json_text_rows (id int PRIMARY KEY, details jsonb, copied jsonb)');
      const client = await db.pool.connect();
      try {
        await insertRows(client, 'json_text_rows', [['id', 'int'], ['details', 'jsonb'], ['copied', 'jsonb']], read.map((e, i) => ({ id: i, details: e.data, copied: withChanges(e.data as object, {}) })));
      } finally {
        client.release();
      }
      const stored = (await db.pool.query<{ details: string; copied: string }>('SELECT details::text AS details, copied::text AS copied FROM json_text_rows ORDER BY id')).rows;
      expect(stored.map((r) => r.details)).to.deep.equal(logged);
      expect(stored.map((r) => r.copied)).to.deep.equal(logged);
    } finally {
      await store.close();
    }
  });

  it('writes array literals PostgreSQL reads back element for element', async () => {
    const values = [...tricky, null, undefined];
    const { rows: back } = await db.pool.query<{ v: (string | null)[] }>('SELECT $1::text[] AS v', [arrayLiteral(values)]);
    expect(back[0]!.v).to.deep.equal([...tricky, null, null]);
    const { rows: numbers } = await db.pool.query<{ v: string[] }>('SELECT $1::bigint[]::text[] AS v', [arrayLiteral([0, -5, 9_007_199_254_740_991, 12n ** 10n])]);
    expect(numbers[0]!.v).to.deep.equal(['0', '-5', '9007199254740991', (12n ** 10n).toString()]);
  });
});
