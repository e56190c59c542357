import { expect } from 'chai';
import type { Database } from '../../src/db/database';
import { arrayLiteral, insertRows, type BulkColumn } from '../../src/projections-runtime/bulk';
import { createTestDatabase } from '../support/database';

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

  it('writes array literals PostgreSQL reads back element for element', async () => {
    const values = [...tricky, null, undefined];
    const { rows: back } = await db.pool.query<{ v: (string | null)[] }>('SELECT $1::text[] AS v', [arrayLiteral(values)]);
    expect(back[0]!.v).to.deep.equal([...tricky, null, null]);
    const { rows: numbers } = await db.pool.query<{ v: string[] }>('SELECT $1::bigint[]::text[] AS v', [arrayLiteral([0, -5, 9_007_199_254_740_991, 12n ** 10n])]);
    expect(numbers[0]!.v).to.deep.equal(['0', '-5', '9007199254740991', (12n ** 10n).toString()]);
  });
});
