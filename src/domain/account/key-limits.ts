import { localDate } from '../../accounts/calendar';
import type { KeyBudget, KeySettings } from './events';

/** The period an instant falls in: `total`, `2026-11-24` (day) or `2026-11` (month) in `timeZone`. */
export function budgetPeriodOf(at: string, period: KeyBudget['period'], timeZone: string): string {
  if (period === 'total') return 'total';
  const date = localDate(new Date(at), timeZone);
  return period === 'day' ? date : date.slice(0, date.length - 3);
}

/**
 * What a key has been charged (settlements, by the time they were recorded): in all, in the
 * current day and in the current month. Three counters whatever the key's budget, so a change of
 * its period keeps counting exactly, and the state stays bounded.
 */
export interface KeySpend {
  readonly total: number;
  readonly day: { readonly period: string; readonly amount: number };
  readonly month: { readonly period: string; readonly amount: number };
}

export const NO_SPEND: KeySpend = { total: 0, day: { period: '', amount: 0 }, month: { period: '', amount: 0 } };

export function withCharge(spend: KeySpend, at: string, amount: number, timeZone: string): KeySpend {
  const add = (counter: KeySpend['day'], period: string) => ({ period, amount: (counter.period === period ? counter.amount : 0) + amount });
  return {
    total: spend.total + amount,
    day: add(spend.day, budgetPeriodOf(at, 'day', timeZone)),
    month: add(spend.month, budgetPeriodOf(at, 'month', timeZone)),
  };
}

/** What the key has been charged in the budget period that `now` falls in. */
/** The counters of the current day and month in `from`, relabelled as the current ones in `to`. */
export function rezoned(spend: KeySpend, at: string, from: string, to: string): KeySpend {
  const move = (period: 'day' | 'month') =>
    spend[period].period === budgetPeriodOf(at, period, from) ? { period: budgetPeriodOf(at, period, to), amount: spend[period].amount } : spend[period];
  return { total: spend.total, day: move('day'), month: move('month') };
}

export function spentInPeriod(spend: KeySpend, period: KeyBudget['period'], now: string, timeZone: string): number {
  if (period === 'total') return spend.total;
  const counter = spend[period];
  return counter.period === budgetPeriodOf(now, period, timeZone) ? counter.amount : 0;
}

/** The limits of a key that the widening rule compares (the name is free). */
export type KeyLimits = Omit<KeySettings, 'name'>;

/**
 * Why `child` would be wider than `parent` (null when it is not): the rule that a key can never
 * create or widen a key beyond itself. A `total` budget fits under any budget of at most its
 * amount; a `day` or `month` budget only under one of the same period. A key without its own
 * rate runs at the gateway's rate, given here.
 */
export function wideningOf(child: KeyLimits, parent: KeyLimits, gatewayRatePerMinute: number): string | null {
  if (parent.allowedModels !== null) {
    const allowed = new Set(parent.allowedModels);
    if (child.allowedModels === null) return 'allowed_models: the acting key may not use every model';
    const extra = child.allowedModels.find((m) => !allowed.has(m));
    if (extra !== undefined) return `allowed_models: the acting key may not use ${extra}`;
  }
  if (parent.budget !== null) {
    const b = child.budget;
    if (b === null) return 'budget: the acting key has a budget, so the key needs one';
    if (b.amount > parent.budget.amount || (b.period !== 'total' && b.period !== parent.budget.period)) {
      return `budget: at most ${parent.budget.amount} per ${parent.budget.period}`;
    }
  }
  if (parent.expiresAt !== null && (child.expiresAt === null || Date.parse(child.expiresAt) > Date.parse(parent.expiresAt))) {
    return `expires_at: no later than ${parent.expiresAt}`;
  }
  const parentRate = parent.rateLimitPerMinute ?? gatewayRatePerMinute;
  if ((child.rateLimitPerMinute ?? gatewayRatePerMinute) > parentRate) return `rate_limit_per_minute: at most ${parentRate}`;
  if (parent.tokensPerMinute !== null && (child.tokensPerMinute === null || child.tokensPerMinute > parent.tokensPerMinute)) {
    return `tokens_per_minute: at most ${parent.tokensPerMinute}`;
  }
  return null;
}
