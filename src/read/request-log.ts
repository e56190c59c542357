import type { Pool } from 'pg';
import { accountStream } from '../domain/account/events';
import type { ConsumerProgress } from '../projections-runtime/progress';

/** What a line shows as its fate: `refunded` is a settled call of which some was refunded since. */
export const REQUEST_OUTCOMES = ['open', 'settled', 'released', 'refunded'] as const;
export type RequestOutcome = (typeof REQUEST_OUTCOMES)[number];

/** Which lines of the request log to list; every member narrows. */
export interface RequestLogFilter {
  readonly accountId?: string;
  readonly keyId?: string;
  readonly model?: string;
  readonly endpoint?: string;
  readonly channel?: string;
  readonly outcome?: RequestOutcome;
  readonly from?: Date;
  readonly to?: Date;
}

/** Where a page starts: the reservation time (microseconds since the epoch) and id of the previous page's last line. */
export interface RequestLogCursor {
  readonly reservedMicros: bigint;
  readonly reservationId: string;
}

export interface RequestLogRow {
  readonly reservation_id: string;
  readonly account_id: string;
  readonly account_name: string | null;
  readonly actor: string;
  readonly key_name: string | null;
  readonly model: string;
  readonly endpoint: string;
  readonly ref_kind: string;
  readonly ref: string;
  readonly reserved: string;
  readonly outcome: 'open' | 'settled' | 'released';
  readonly amount: string | null;
  readonly refunded: string;
  readonly channel: string | null;
  readonly units: Record<string, number> | null;
  readonly reason: string | null;
  readonly reserved_at: Date;
  readonly closed_at: Date | null;
  readonly reserved_micros: string;
}

/** The SQL condition of each outcome a filter may ask for. */
const OUTCOME_CONDITION: Record<RequestOutcome, string> = {
  open: "l.outcome = 'open'",
  settled: "l.outcome = 'settled' AND l.refunded = 0",
  released: "l.outcome = 'released'",
  refunded: 'l.refunded > 0',
};

/**
 * Lines of the request log (projections/request-log.ts), newest first by reservation time (ties
 * by reservation id, so the order is total and a cursor never skips or repeats a line), with the
 * account's and the key's current names.
 */
export async function listRequests(pool: Pool, filter: RequestLogFilter, page: { after: RequestLogCursor | null; limit: number }): Promise<{ rows: RequestLogRow[]; hasMore: boolean }> {
  const params: unknown[] = [];
  const where: string[] = [];
  const narrow = (condition: (param: string) => string, value: unknown) => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  if (filter.accountId !== undefined) narrow((p) => `l.account_id = ${p}`, filter.accountId);
  if (filter.keyId !== undefined) narrow((p) => `l.actor = ${p}`, filter.keyId);
  if (filter.model !== undefined) narrow((p) => `l.model = ${p}`, filter.model);
  if (filter.endpoint !== undefined) narrow((p) => `l.endpoint = ${p}`, filter.endpoint);
  if (filter.channel !== undefined) narrow((p) => `l.channel = ${p}`, filter.channel);
  if (filter.outcome !== undefined) where.push(OUTCOME_CONDITION[filter.outcome]);
  if (filter.from !== undefined) narrow((p) => `l.reserved_at >= ${p}`, filter.from.toISOString());
  if (filter.to !== undefined) narrow((p) => `l.reserved_at < ${p}`, filter.to.toISOString());
  if (page.after) {
    params.push(page.after.reservedMicros.toString(), page.after.reservationId);
    where.push(`(l.reserved_at, l.reservation_id) < (timestamptz 'epoch' + $${params.length - 1}::bigint * interval '1 microsecond', $${params.length}::text)`);
  }
  params.push(page.limit + 1);
  const { rows } = await pool.query<RequestLogRow>(
    `SELECT l.reservation_id, l.account_id, a.name AS account_name, l.actor, k.name AS key_name, l.model, l.endpoint, l.ref_kind, l.ref,
       l.reserved, l.outcome, l.amount, l.refunded, l.channel, l.units, l.reason, l.reserved_at, l.closed_at,
       (extract(epoch FROM l.reserved_at) * 1000000)::bigint::text AS reserved_micros
     FROM rm.request_log l
     LEFT JOIN rm.accounts a ON a.account_id = l.account_id
     LEFT JOIN rm.api_keys k ON k.key_id = l.actor AND k.account_id = l.account_id
     ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY l.reserved_at DESC, l.reservation_id DESC
     LIMIT $${params.length}`,
    params,
  );
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** A line's outcome as shown: a settled call of which anything was refunded reads `refunded`. */
export function outcomeOf(row: Pick<RequestLogRow, 'outcome' | 'refunded'>): RequestOutcome {
  return row.outcome === 'settled' && Number(row.refunded) > 0 ? 'refunded' : row.outcome;
}

/**
 * Waits until the request log holds what was appended so far, to one account's stream or (for the
 * operator's view of every account) to the whole log; false when it still did not after `timeoutMs`
 * (the list is answered as it stands then).
 */
export async function requestLogCaughtUp(progress: ConsumerProgress, accountId: string | null, timeoutMs: number): Promise<boolean> {
  if (accountId !== null) return progress.waitForStream(accountStream(accountId), ['request_log'], timeoutMs);
  return progress.waitForCommitted(['request_log'], timeoutMs);
}
