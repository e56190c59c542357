import { createHash } from 'node:crypto';

/** A statement pg sends as a named prepared statement: parsed once per connection. */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/** A prepared statement with the values of one run: a query config for pg. */
export interface PreparedQuery extends PreparedStatement {
  readonly values: unknown[];
}

const named = new Map<string, PreparedStatement>();

/**
 * A query config for pg: `text` with `values`, run as a named statement, its name derived from
 * the text (so two texts never share a name, which pg refuses). Each connection parses it once;
 * after a few runs PostgreSQL may also keep a generic plan instead of planning on every bind.
 * Unnamed, parsing and binding took about 2.4 ms of the 6 ms of server time of one consumers'
 * pass at one connection.
 *
 * Only for texts that come from code, never from data: every text named stays prepared on every
 * connection that ran it, for the connection's life. A named SELECT whose result columns change
 * type or number (a migration of es_events, a projection's table recreated with another shape)
 * fails with "cached plan must not change result type" on every connection that prepared it, and
 * pg's pool keeps such connections: gateways of the older shape must be stopped, not left running
 * beside one that changed it (docs/operations.md). Values must be ones pg can serialize (arrays of
 * primitives, Dates, strings): a value that throws while pg binds it leaves that connection
 * believing the statement is prepared when the server has closed it.
 */
export function prepared(text: string, values: unknown[]): PreparedQuery {
  return runOf(statementNamed(text), values);
}

/** `text` with the name it is prepared under (the same object every time). */
export function statementNamed(text: string): PreparedStatement {
  let statement = named.get(text);
  if (!statement) {
    statement = { name: `s_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text };
    named.set(text, statement);
  }
  return statement;
}

/**
 * The statement with `values`, as one object literal rather than `{ ...statement, values }`,
 * which Node 20's V8 gives a hidden class of its own every time (it adds a key the spread did not
 * copy: src/domain/with-changes.ts), and pg reads a dozen keys of every query config.
 */
export function runOf(statement: PreparedStatement, values: unknown[]): PreparedQuery {
  return { name: statement.name, text: statement.text, values };
}
