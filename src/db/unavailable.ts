/**
 * Whether an error means the database (PostgreSQL, or the event store) could not be reached or
 * dropped the connection, as opposed to a query it refused. Such an error says nothing about the
 * request: the same call may succeed once the database is back, so the gateway answers 503 with
 * Retry-After (src/http/errors.ts) and keeps a settlement it already owes
 * (src/billing/settlement-journal.ts).
 *
 * Only the database's own errors count: node-postgres' (its DatabaseError, which carries the
 * server's `severity`; the socket's system errors, which carry their `syscall`; its messages for a
 * dropped connection or a connect deadline) and DatabaseUnavailableError, which other adapters
 * (EventStoreDB) throw for theirs. A provider's connection reset reaches here wrapped by undici
 * (UND_ERR_SOCKET, `fetch failed`) and is not taken for the database.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  if (!(err instanceof Error)) return false;
  const { code, syscall, severity } = err as { code?: unknown; syscall?: unknown; severity?: unknown };
  if (typeof code === 'string' && typeof syscall === 'string' && NETWORK_CODES.has(code)) return true;
  if (typeof code === 'string' && typeof severity === 'string' && isUnavailableSqlState(code)) return true;
  if (PG_CONNECTION_MESSAGES.some((m) => err.message.startsWith(m))) return true;
  // Node reports a refused dual-stack connect (::1 and 127.0.0.1) as an AggregateError of both.
  return err instanceof AggregateError && err.errors.length > 0 && err.errors.every((e) => isDatabaseUnavailable(e));
}

/** Thrown by an event store adapter whose server cannot be reached (its driver's own error as the cause). */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
}

/** Socket errors of a connection that could not be made or broke. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going away or not taking connections: class 08 (connection
 * exception), 57P01–57P03 (admin or crash shutdown, cannot connect now), 53300 (too many
 * connections).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** node-postgres reports a dropped connection and a connect deadline by message alone. */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Cannot use a pool after calling end on the pool',
];
