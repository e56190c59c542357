import type { ClientBase } from 'pg';

/**
 * What a test database copied from the schema template must still match to be emptied and handed
 * to the next test instead of being dropped (test/support/database.ts).
 */
export interface TemplateState {
  /** Digest of the schema (see schemaDigest) and of the rows of the seeded tables. */
  readonly fingerprint: string;
  /** Tables the template holds rows in (migrations applied, projection versions): kept, not emptied. */
  readonly seeded: readonly string[];
  /** The template's size on disk: a copy grown far beyond it is dropped rather than emptied. */
  readonly bytes: number;
}

/** Schemas the gateway (or a test) made: PostgreSQL reserves the `pg_` prefix for its own. */
const USER_SCHEMA = `n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'`;

/**
 * One line per schema object that a test could change: relations with their grants and options,
 * columns with types, defaults and nullability, indexes, constraints, functions (by body),
 * triggers, schemas, extensions and the database's own settings.
 */
const SCHEMA_DIGEST = `
  SELECT coalesce(md5(string_agg(line, E'\\n' ORDER BY line)), '') AS digest FROM (
    SELECT format('rel %s.%s %s %s %s', n.nspname, c.relname, c.relkind, c.relacl, c.reloptions)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${USER_SCHEMA}
    UNION ALL
    SELECT format('col %s.%s %s %s %s %s', n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE ${USER_SCHEMA} AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT format('con %s.%s %s', n.nspname, co.conname, pg_get_constraintdef(co.oid))
      FROM pg_constraint co JOIN pg_namespace n ON n.oid = co.connamespace WHERE ${USER_SCHEMA}
    UNION ALL
    SELECT format('idx %s', pg_get_indexdef(i.indexrelid))
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${USER_SCHEMA}
    UNION ALL
    SELECT format('fn %s.%s(%s) %s %s', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid), md5(p.prosrc), p.proacl)
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE ${USER_SCHEMA}
    UNION ALL
    SELECT format('trg %s %s %s', t.tgrelid::regclass, t.tgname, t.tgenabled) FROM pg_trigger t WHERE NOT t.tgisinternal
    UNION ALL
    SELECT format('ns %s %s', n.nspname, n.nspacl) FROM pg_namespace n WHERE ${USER_SCHEMA}
    UNION ALL
    SELECT format('ext %s %s', extname, extversion) FROM pg_extension
    UNION ALL
    SELECT format('set %s', s.setconfig) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = current_database()
  ) AS objects(line)`;

/** The relations of the user schemas that `which` (an SQL condition on pg_class c) selects, schema-qualified and quoted. */
async function relations(client: ClientBase, which: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE ${USER_SCHEMA} AND ${which} ORDER BY 1`,
  );
  return rows.map((r) => r.name);
}

/** Every table of the user schemas (a partitioned table counts once, not with its partitions). */
const tables = (client: ClientBase) => relations(client, `c.relkind IN ('r', 'p') AND NOT c.relispartition`);

async function fingerprint(client: ClientBase, seeded: readonly string[]): Promise<string> {
  const parts = [(await client.query<{ digest: string }>(SCHEMA_DIGEST)).rows[0]!.digest];
  for (const table of seeded) {
    const { rows } = await client.query<{ digest: string }>(`SELECT coalesce(md5(string_agg(t::text, E'\\n' ORDER BY t::text)), '') AS digest FROM ${table} t`);
    parts.push(`${table} ${rows[0]!.digest}`);
  }
  return parts.join('\n');
}

async function databaseBytes(client: ClientBase): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
  return Number(rows[0]!.bytes);
}

/** The state of the schema template, read once when the run prepares it. */
export async function readTemplateState(client: ClientBase): Promise<TemplateState> {
  const seeded: string[] = [];
  for (const table of await tables(client)) {
    if ((await client.query(`SELECT 1 FROM ${table} LIMIT 1`)).rowCount) seeded.push(table);
  }
  return { fingerprint: await fingerprint(client, seeded), seeded, bytes: await databaseBytes(client) };
}

/** Room for the rows a test leaves behind before emptying its copy costs more than a new one. */
const GROWTH_WORTH_EMPTYING = 32 * 1024 * 1024;

/**
 * Empties a copy of the template back to the template's state: every table but the seeded ones
 * emptied, every sequence restarted. Returns false, changing nothing, when the copy no longer has
 * the template's schema or seeded rows (a test migrated or altered it) or grew too large: such a
 * copy is dropped instead.
 */
export async function resetToTemplate(client: ClientBase, template: TemplateState): Promise<boolean> {
  await client.query('BEGIN');
  try {
    const same = (await databaseBytes(client)) <= template.bytes + GROWTH_WORTH_EMPTYING && (await fingerprint(client, template.seeded)) === template.fingerprint;
    if (!same) {
      await client.query('ROLLBACK');
      return false;
    }
    const emptied = (await tables(client)).filter((t) => !template.seeded.includes(t));
    const sequences = await relations(client, `c.relkind = 'S'`);
    // DELETE rather than TRUNCATE: on tables this small, TRUNCATE's new files cost ten times more.
    // One simple query carries every statement, with the COMMIT.
    await client.query([...emptied.map((t) => `DELETE FROM ${t};`), ...sequences.map((q) => `ALTER SEQUENCE ${q} RESTART;`), 'COMMIT;'].join('\n'));
    return true;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
