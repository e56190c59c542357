import Router from '@koa/router';
import type { Pool } from 'pg';
import { toCsv, YuanCell, type CsvCell } from '../../accounts/csv';
import { refIds } from '../../accounts/reports';
import { listRequests, outcomeOf, REQUEST_OUTCOMES, type RequestLogCursor, type RequestLogFilter, type RequestLogRow, type RequestOutcome } from '../../read/request-log';
import { authOf, type GatewayContext, type GatewayState } from '../context';
import { everyPageForCsv, FORMAT, sendCsv, wantsCsv } from '../csv-response';
import { listBody, pageParams } from '../pagination';
import { timeRange } from '../time-range';
import { validator } from '../validation';
import { INSTANT, namedValuesText } from './accounts';

const TEXT = { type: 'string', minLength: 1, maxLength: 200 } as const;

/** GET /v1/account/requests: the owner's filters, the format and the page. */
export const ACCOUNT_REQUESTS_QUERY_SCHEMA = {
  type: 'object',
  properties: {
    key_id: TEXT,
    model: TEXT,
    endpoint: TEXT,
    outcome: { type: 'string', enum: REQUEST_OUTCOMES },
    from: INSTANT,
    to: INSTANT,
    format: FORMAT,
    after: { type: 'string' },
    limit: { type: 'string' },
  },
  additionalProperties: false,
} as const;

/** GET /admin/v1/requests: the owner's filters, and the account and the channel that served. */
export const ADMIN_REQUESTS_QUERY_SCHEMA = {
  ...ACCOUNT_REQUESTS_QUERY_SCHEMA,
  properties: { account_id: TEXT, ...ACCOUNT_REQUESTS_QUERY_SCHEMA.properties, channel: TEXT },
} as const;

interface RequestsQuery {
  account_id?: string;
  key_id?: string;
  model?: string;
  endpoint?: string;
  channel?: string;
  outcome?: RequestOutcome;
  from?: string;
  to?: string;
  format?: string;
}
const parseAccountQuery = validator<RequestsQuery>(ACCOUNT_REQUESTS_QUERY_SCHEMA);
const parseAdminQuery = validator<RequestsQuery>(ADMIN_REQUESTS_QUERY_SCHEMA);

/** The cursor is opaque to clients: the last line's reservation time in microseconds and its reservation id. */
function encodeCursor(row: RequestLogRow): string {
  return Buffer.from(`request:${row.reserved_micros}:${row.reservation_id}`).toString('base64url');
}

function decodeCursor(raw: string): RequestLogCursor | null {
  const m = /^request:(\d{1,18}):([A-Za-z0-9_-]{1,200})$/.exec(Buffer.from(raw, 'base64url').toString('utf8'));
  return m ? { reservedMicros: BigInt(m[1]!), reservationId: m[2]! } : null;
}

/** A line as the API answers it to the operator. */
function lineView(row: RequestLogRow) {
  return {
    object: 'request' as const,
    reservation_id: row.reservation_id,
    reserved_at: row.reserved_at.toISOString(),
    closed_at: row.closed_at?.toISOString() ?? null,
    account_id: row.account_id,
    account_name: row.account_name,
    key_id: row.actor.startsWith('key_') ? row.actor : null,
    key_name: row.key_name,
    actor: row.actor,
    model: row.model,
    endpoint: row.endpoint,
    channel: row.channel,
    units: row.units,
    reserved: Number(row.reserved),
    amount: row.amount === null ? null : Number(row.amount),
    refunded: Number(row.refunded),
    outcome: outcomeOf(row),
    reason: row.reason,
    ...refIds(row.ref_kind, row.ref),
  };
}

type LineView = ReturnType<typeof lineView>;

/** A line as its account's owner sees it: without the channel (docs/auditing.md: channel names are the operator's). */
function ownerView(line: LineView): Omit<LineView, 'channel'> {
  const { channel: _channel, ...shown } = line;
  return shown;
}

const CSV_COLUMNS: readonly (readonly [string, (l: LineView) => CsvCell])[] = [
  ['reserved_at', (l) => l.reserved_at],
  ['closed_at', (l) => l.closed_at],
  ['account_id', (l) => l.account_id],
  ['account_name', (l) => l.account_name],
  ['key_id', (l) => l.key_id],
  ['key_name', (l) => l.key_name],
  ['model', (l) => l.model],
  ['endpoint', (l) => l.endpoint],
  ['channel', (l) => l.channel],
  ['units', (l) => (l.units === null ? null : namedValuesText(l.units))],
  ['reserved_minor', (l) => l.reserved],
  ['amount_minor', (l) => l.amount],
  ['amount_yuan', (l) => (l.amount === null ? null : new YuanCell(l.amount))],
  ['refunded_minor', (l) => l.refunded],
  ['outcome', (l) => l.outcome],
  ['reason', (l) => l.reason],
  ['request_id', (l) => l.request_id],
  ['task_id', (l) => l.task_id],
  ['reservation_id', (l) => l.reservation_id],
];

/** The lines as CSV, with the ledger's cell rules (accounts/csv); the owner's without the channel column. */
function requestsCsv(lines: readonly LineView[], operator: boolean): string {
  const columns = operator ? CSV_COLUMNS : CSV_COLUMNS.filter(([name]) => name !== 'channel');
  return toCsv(
    columns.map(([name]) => name),
    lines.map((l) => columns.map(([, cell]) => cell(l))),
  );
}

export interface RequestLogDeps {
  readonly pool: Pool;
  /** Waits (within the gateway's projection wait) until the request log holds what was appended so far: to one account's stream, or to the whole log. */
  readonly fresh: (accountId: string | null) => Promise<void>;
}

async function requestsResponse(deps: RequestLogDeps, ctx: GatewayContext, q: RequestsQuery, accountId: string | null, operator: boolean): Promise<void> {
  const filter: RequestLogFilter = {
    ...(accountId !== null ? { accountId } : {}),
    ...(q.key_id !== undefined ? { keyId: q.key_id } : {}),
    ...(q.model !== undefined ? { model: q.model } : {}),
    ...(q.endpoint !== undefined ? { endpoint: q.endpoint } : {}),
    ...(q.channel !== undefined ? { channel: q.channel } : {}),
    ...(q.outcome !== undefined ? { outcome: q.outcome } : {}),
    ...timeRange(q.from, q.to),
  };
  const csv = wantsCsv(ctx, q.format);
  const page = csv ? null : pageParams(ctx.query, (raw) => decodeCursor(raw) !== null);
  await deps.fresh(accountId);
  if (!page) {
    const rows = await everyPageForCsv(
      async (after: RequestLogCursor | null, limit) => {
        const { rows: items, hasMore } = await listRequests(deps.pool, filter, { after, limit });
        return { items, hasMore };
      },
      (last) => ({ reservedMicros: BigInt(last.reserved_micros), reservationId: last.reservation_id }),
    );
    return sendCsv(ctx, accountId === null ? 'requests.csv' : `requests-${accountId}.csv`, requestsCsv(rows.map(lineView), operator));
  }
  const { rows, hasMore } = await listRequests(deps.pool, filter, { after: page.after === null ? null : decodeCursor(page.after), limit: page.limit });
  const cursors = new Map(rows.map((r) => [r.reservation_id, encodeCursor(r)]));
  ctx.body = listBody(
    rows.map((r) => (operator ? lineView(r) : ownerView(lineView(r)))),
    hasMore,
    (l) => cursors.get(l.reservation_id)!,
  );
}

/** GET /admin/v1/requests: every account's request log, with the channel that served each call. Mounted behind the admin token. */
export function adminRequestLogRouter(deps: RequestLogDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1', sensitive: true });
  router.get('/requests', async (ctx) => {
    const q = parseAdminQuery(ctx.query);
    await requestsResponse(deps, ctx, q, q.account_id ?? null, true);
  });
  return router;
}

/** GET /v1/account/requests: the key's account's own request log, without channels. Mounted behind API key auth. */
export function accountRequestLogRouter(deps: RequestLogDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ sensitive: true });
  router.get('/v1/account/requests', async (ctx) => {
    const q = parseAccountQuery(ctx.query);
    await requestsResponse(deps, ctx, q, authOf(ctx).accountId, false);
  });
  return router;
}
