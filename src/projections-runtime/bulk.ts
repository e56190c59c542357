import type { PoolClient } from 'pg';
import { prepared } from '../db/prepared';

/** A column of a bulk insert: its name (also the key of each row object) and its SQL type. */
export type BulkColumn = readonly [name: string, sqlType: string];

const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/**
 * A PostgreSQL array literal of `values` ('{"a","b",NULL}'). Read models are written in pages of
 * thousands of rows, and the driver's own array encoding (two regular-expression passes and a
 * type dispatch per element) was most of a replay's CPU time: this quotes every element, escapes
 * only those holding a quote or a backslash, and writes numbers bare. undefined and null are NULL.
 */
export function arrayLiteral(values: readonly unknown[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) {
      out += 'NULL';
    } else if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') {
      out += String(v);
    } else {
      const s = v instanceof Date ? v.toISOString() : String(v);
      out += NEEDS_ESCAPE.test(s) ? `"${s.replace(ESCAPED, '\\$&')}"` : `"${s}"`;
    }
  }
  return `${out}}`;
}

/** The SQL value of column `name` of rowsFrom's relation `r` (a jsonb column arrives as json). */
export function bulkValue([name, type]: BulkColumn): string {
  return type === 'jsonb' ? `CASE WHEN json_typeof(r.${name}) = 'null' THEN NULL ELSE r.${name}::jsonb END` : `r.${name}`;
}

/**
 * `rows` (objects keyed by column name; a missing key is NULL) as a relation `r` for a statement
 * of one's own: `from` goes in its FROM clause, `params` are its parameters from $1 on, and
 * bulkValue gives each column's value. A jsonb column's values go as one JSON array (one native
 * JSON.stringify, not an encoding per value that the array literal then escapes again, which cost
 * three times as much), split by json_array_elements; a null or missing value is SQL NULL.
 */
export function rowsFrom(columns: readonly BulkColumn[], rows: readonly object[]): { from: string; params: string[] } {
  const names = columns.map(([name]) => name).join(', ');
  const sources = columns.map(([, type], i) => (type === 'jsonb' ? `json_array_elements($${i + 1}::json)` : `unnest($${i + 1}::${type}[])`)).join(', ');
  const column = (name: string) => rows.map((row) => (row as Record<string, unknown>)[name]);
  return {
    from: `ROWS FROM (${sources}) AS r(${names})`,
    params: columns.map(([name, type]) => (type === 'jsonb' ? JSON.stringify(column(name).map((v) => v ?? null)) : arrayLiteral(column(name)))),
  };
}

/**
 * Inserts `rows` (see rowsFrom) into `table` with one statement, one parameter per column, prepared
 * once per connection (prepared()): `table` and `columns` must be constants of the code.
 */
export async function insertRows(tx: PoolClient, table: string, columns: readonly BulkColumn[], rows: readonly object[]): Promise<void> {
  if (rows.length === 0) return;
  const { from, params } = rowsFrom(columns, rows);
  await tx.query(prepared(`INSERT INTO ${table} (${columns.map(([name]) => name).join(', ')}) SELECT ${columns.map(bulkValue).join(', ')} FROM ${from}`, params));
}
