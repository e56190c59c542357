import type { Pool } from 'pg';
import { accountStream } from '../domain/account/events';
import { taskIdOfStream } from '../tasks/events';
import type { ConsumerProgress } from '../projections-runtime/progress';
import { advanceTo, DEFAULT_TIME_ZONE, monthStart, nextMonth, type MonthPeriod } from './calendar';

/**
 * Usage totals and monthly statements, both sums over the usage read model (projections/usage.ts):
 * a usage total is charges less refunds; a statement is the month's credits, charges and refunds
 * between an opening and a closing balance that follow from each other exactly.
 */
export type UsageGroup = 'day' | 'model' | 'key' | 'endpoint' | 'account_id' | 'channel';
export const USAGE_GROUPS: readonly UsageGroup[] = ['day', 'model', 'key', 'endpoint', 'account_id', 'channel'];
/** Groups of the operator's view only: other accounts, and the operator's own channel names. */
export const OPERATOR_USAGE_GROUPS: ReadonlySet<UsageGroup> = new Set(['account_id', 'channel']);

const GROUP_COLUMNS: Record<UsageGroup, { column: string; field: string }> = {
  day: { column: 'day', field: 'day' },
  model: { column: 'model', field: 'model' },
  key: { column: 'actor', field: 'key_id' },
  endpoint: { column: 'endpoint', field: 'endpoint' },
  account_id: { column: 'account_id', field: 'account_id' },
  channel: { column: 'channel', field: 'channel' },
};

export interface UsageTotals {
  requests: number;
  /** Settled charges, overruns included. */
  charged: number;
  refunded: number;
  /** charged − refunded: what the group cost. */
  amount: number;
  /** Quantities per unit name (input_tokens, images, seconds…), from the settlements' pricing. */
  units: Record<string, number>;
}

/** One group's totals, with its keys (`day`, `model`, `key_id`, `endpoint`, `account_id`, `channel`, as grouped by). */
export type UsageGroupTotals = UsageTotals & { readonly group: Readonly<Record<string, string | null>> };

export interface UsageQuery {
  /** null: every account (the operator's view). */
  readonly accountId: string | null;
  readonly from: Date | null;
  readonly to: Date | null;
  readonly groupBy: readonly UsageGroup[];
}

export interface StatementLine {
  readonly at: string;
  readonly type: 'credit' | 'charge' | 'refund';
  readonly amount: number;
  readonly overrun: number;
  readonly key_id: string | null;
  readonly model: string | null;
  readonly endpoint: string | null;
  readonly reservation_id: string | null;
  readonly request_id: string | null;
  readonly task_id: string | null;
  /** A credit's note or a refund's reason. */
  readonly note: string | null;
}

export interface Statement {
  readonly object: 'statement';
  readonly account_id: string;
  readonly month: string;
  readonly timezone: string;
  readonly starts_at: string;
  readonly ends_at: string;
  /** The month has ended: its statement never changes again. */
  readonly closed: boolean;
  readonly opening_balance: number;
  readonly credits: number;
  readonly charges: { total: number; overrun: number; by_model: { model: string; requests: number; amount: number; overrun: number }[] };
  readonly refunds: number;
  readonly closing_balance: number;
  readonly currency: 'CNY';
}

export class AccountReports {
  constructor(
    private readonly pool: Pool,
    private readonly progress: ConsumerProgress,
    private readonly options: { projectionWaitMs: number; clock?: () => Date },
  ) {}

  private async fresh(accountId: string | null): Promise<void> {
    if (accountId) await this.progress.waitForStream(accountStream(accountId), ['usage'], this.options.projectionWaitMs);
  }

  async usage(query: UsageQuery): Promise<{ groups: UsageGroupTotals[]; total: UsageTotals }> {
    await this.fresh(query.accountId);
    const where = ["entry_type <> 'credit'"];
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (query.accountId) where.push(`account_id = ${param(query.accountId)}`);
    if (query.from) where.push(`at >= ${param(query.from.toISOString())}`);
    if (query.to) where.push(`at < ${param(query.to.toISOString())}`);
    const columns = query.groupBy.map((g) => GROUP_COLUMNS[g].column);
    const select = columns.map((c, i) => `${c} AS g${i}`);
    const groupBy = columns.length > 0 ? `GROUP BY ${columns.join(', ')}` : '';
    const { rows } = await this.pool.query<Record<string, string | null> & { requests: string; charged: string; refunded: string }>(
      `SELECT ${[...select, 'sum(requests) AS requests', "coalesce(sum(amount) FILTER (WHERE entry_type = 'charge'), 0) AS charged", "coalesce(sum(amount) FILTER (WHERE entry_type = 'refund'), 0) AS refunded"].join(', ')}
       FROM rm.usage_records WHERE ${where.join(' AND ')} ${groupBy} ORDER BY ${columns.length > 0 ? columns.map((_, i) => `g${i}`).join(', ') : '1'}`,
      params,
    );
    const { rows: unitRows } = await this.pool.query<Record<string, string | null> & { unit: string; quantity: string }>(
      `SELECT ${[...select, 'u.key AS unit', 'sum(u.value::bigint) AS quantity'].join(', ')}
       FROM rm.usage_records, jsonb_each_text(units) u WHERE ${where.join(' AND ')} GROUP BY ${[...columns, 'u.key'].join(', ')}`,
      params,
    );
    const keyOf = (row: Record<string, string | null>) => JSON.stringify(columns.map((_, i) => row[`g${i}`]));
    const units = new Map<string, Record<string, number>>();
    for (const r of unitRows) units.set(keyOf(r), { ...units.get(keyOf(r)), [r.unit]: Number(r.quantity) });
    const total: UsageTotals = { requests: 0, charged: 0, refunded: 0, amount: 0, units: {} };
    const groups = rows
      .filter((r) => r.requests !== null)
      .map((r) => {
        const totals: UsageTotals = { requests: Number(r.requests), charged: Number(r.charged), refunded: Number(r.refunded), amount: Number(r.charged) - Number(r.refunded), units: units.get(keyOf(r)) ?? {} };
        total.requests += totals.requests;
        total.charged += totals.charged;
        total.refunded += totals.refunded;
        total.amount += totals.amount;
        for (const [name, q] of Object.entries(totals.units)) total.units[name] = (total.units[name] ?? 0) + q;
        return { group: Object.fromEntries(query.groupBy.map((g, i) => [GROUP_COLUMNS[g].field, r[`g${i}`] ?? null])), ...totals };
      });
    return { groups, total };
  }

  /** The period `month` covers for the account: as folded by the usage read model, or projected on from its current month. */
  private async period(accountId: string, month: string): Promise<MonthPeriod> {
    const { rows } = await this.pool.query<{ month: string; timezone: string; starts_at: Date; ends_at: Date; current: boolean }>(
      `SELECT month, timezone, starts_at, ends_at, current FROM rm.usage_months WHERE account_id = $1 AND (month = $2 OR current) ORDER BY current`,
      [accountId, month],
    );
    const own = rows.find((r) => r.month === month);
    if (own) return { month, timezone: own.timezone, startsAt: own.starts_at, endsAt: own.ends_at };
    const current = rows.find((r) => r.current);
    if (!current || month < current.month) {
      // Before the account was opened: plain calendar months of the default zone.
      return { month, timezone: DEFAULT_TIME_ZONE, startsAt: monthStart(month, DEFAULT_TIME_ZONE), endsAt: monthStart(nextMonth(month), DEFAULT_TIME_ZONE) };
    }
    let period: MonthPeriod = { month: current.month, timezone: current.timezone, startsAt: current.starts_at, endsAt: current.ends_at };
    while (period.month < month) period = advanceTo(period, period.endsAt).current;
    return period;
  }

  async statement(accountId: string, month: string): Promise<{ statement: Statement; lines: StatementLine[] }> {
    await this.fresh(accountId);
    const period = await this.period(accountId, month);
    const { rows: before } = await this.pool.query<{ balance: string | null }>(
      `SELECT sum(CASE entry_type WHEN 'charge' THEN -amount ELSE amount END) AS balance FROM rm.usage_records WHERE account_id = $1 AND month < $2`,
      [accountId, month],
    );
    const { rows } = await this.pool.query<{
      at: Date;
      entry_type: StatementLine['type'];
      amount: string;
      overrun: string;
      actor: string | null;
      model: string | null;
      endpoint: string | null;
      ref_kind: string | null;
      ref: string | null;
      reservation_id: string | null;
      note: string | null;
    }>(`SELECT at, entry_type, amount, overrun, actor, model, endpoint, ref_kind, ref, reservation_id, note FROM rm.usage_records WHERE account_id = $1 AND month = $2 ORDER BY revision`, [
      accountId,
      month,
    ]);
    const lines: StatementLine[] = rows.map((r) => ({
      at: r.at.toISOString(),
      type: r.entry_type,
      amount: Number(r.amount),
      overrun: Number(r.overrun),
      key_id: r.actor,
      model: r.model,
      endpoint: r.endpoint,
      reservation_id: r.reservation_id,
      ...refIds(r.ref_kind, r.ref),
      note: r.note,
    }));
    const sum = (type: StatementLine['type']) => lines.filter((l) => l.type === type).reduce((s, l) => s + l.amount, 0);
    const byModel = new Map<string, { model: string; requests: number; amount: number; overrun: number }>();
    for (const l of lines.filter((x) => x.type === 'charge')) {
      const m = byModel.get(l.model ?? 'unknown') ?? { model: l.model ?? 'unknown', requests: 0, amount: 0, overrun: 0 };
      m.requests += 1;
      m.amount += l.amount;
      m.overrun += l.overrun;
      byModel.set(m.model, m);
    }
    const opening = Number(before[0]?.balance ?? 0);
    const credits = sum('credit');
    const charges = sum('charge');
    const refunds = sum('refund');
    const now = this.options.clock?.() ?? new Date();
    return {
      lines,
      statement: {
        object: 'statement',
        account_id: accountId,
        month,
        timezone: period.timezone,
        starts_at: period.startsAt.toISOString(),
        ends_at: period.endsAt.toISOString(),
        closed: period.endsAt.getTime() <= now.getTime(),
        opening_balance: opening,
        credits,
        charges: { total: charges, overrun: lines.reduce((s, l) => s + l.overrun, 0), by_model: [...byModel.values()].sort((a, b) => a.model.localeCompare(b.model)) },
        refunds,
        closing_balance: opening + credits - charges + refunds,
        currency: 'CNY',
      },
    };
  }
}

/** A reservation's `ref` as the id a client knows: the request id, or the task id of the task stream. */
export function refIds(kind: string | null, ref: string | null): { request_id: string | null; task_id: string | null } {
  if (ref === null) return { request_id: null, task_id: null };
  return kind === 'request' ? { request_id: ref, task_id: null } : { request_id: null, task_id: taskIdOfStream(ref) };
}
