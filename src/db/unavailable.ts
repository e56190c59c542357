/**
 * Whether an error means the database could not be reached or dropped the connection, as opposed
 * to a query it refused. Such an error says nothing about the request: the same call may succeed
 * once the database is back, so the gateway answers 503 with Retry-After (src/http/errors.ts) and
 * keeps a settlement it already owes (src/billing/settlement-journal.ts).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  return unavailable(err, 0);
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

function unavailable(err: unknown, depth: number): boolean {
  if (!(err instanceof Error) || depth > 4) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && isUnavailableSqlState(code)))) return true;
  if (PG_CONNECTION_MESSAGES.some((m) => err.message.startsWith(m))) return true;
  // Node reports a refused dual-stack connect (::1 and 127.0.0.1) as an AggregateError of both.
  if (err instanceof AggregateError && err.errors.length > 0 && err.errors.every((e) => unavailable(e, depth + 1))) return true;
  return unavailable((err as { cause?: unknown }).cause, depth + 1);
}
