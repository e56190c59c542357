import type { Pool } from 'pg';

export const KEY_STATUSES = ['active', 'expired', 'revoked'] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

/** Which keys to list; every member narrows. */
export interface KeySearch {
  /** A case-insensitive part of the key's name, the start of its display prefix, or its whole id. */
  readonly q?: string;
  readonly accountId?: string;
  readonly status?: KeyStatus;
}

/** A key as the operator's list shows it: never its secret nor its hash. */
export interface KeyListing {
  readonly id: string;
  readonly name: string | null;
  readonly prefix: string;
  readonly status: KeyStatus;
  readonly account_id: string;
  readonly account_name: string | null;
  /** Charged less refunded over the key's life, in minor units (projections/request-log.ts, `actor_spend`). */
  readonly spent: number;
  readonly budget: { amount: number; period: 'total' | 'day' | 'month' } | null;
  readonly allowed_models: string[] | null;
  readonly expires_at: string | null;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly revoked_at: string | null;
}

/** The SQL condition of each status; `now` names the parameter that holds the time that decides expiry. */
function statusCondition(status: KeyStatus, now: () => string): string {
  if (status === 'revoked') return 'k.revoked_at IS NOT NULL';
  return status === 'active' ? `k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now()})` : `k.revoked_at IS NULL AND k.expires_at <= ${now()}`;
}

function statusOf(row: { revoked_at: Date | null; expires_at: Date | null }, now: Date): KeyStatus {
  if (row.revoked_at !== null) return 'revoked';
  return row.expires_at !== null && row.expires_at <= now ? 'expired' : 'active';
}

/**
 * Every account's keys (projections/api-keys.ts), newest first (key ids sort by creation), with
 * the account's name and the key's lifetime spend (projections/request-log.ts): the operator's
 * search. `now` decides which keys have expired.
 */
export async function searchKeys(pool: Pool, search: KeySearch, page: { after: string | null; limit: number }, now: Date): Promise<{ keys: KeyListing[]; hasMore: boolean }> {
  const params: unknown[] = [];
  const where: string[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (search.q !== undefined) {
    const like = search.q.replace(/[\\%_]/g, (c) => `\\${c}`);
    where.push(`(k.name ILIKE '%' || ${param(like)} || '%' OR k.key_prefix LIKE ${param(like)} || '%' OR k.key_id = ${param(search.q)})`);
  }
  if (search.accountId !== undefined) where.push(`k.account_id = ${param(search.accountId)}`);
  if (search.status !== undefined) where.push(statusCondition(search.status, () => param(now.toISOString())));
  if (page.after !== null) where.push(`k.key_id < ${param(page.after)}`);
  const { rows } = await pool.query<{
    key_id: string;
    name: string | null;
    key_prefix: string;
    account_id: string;
    account_name: string | null;
    spent: string;
    budget: KeyListing['budget'];
    allowed_models: string[] | null;
    expires_at: Date | null;
    created_at: Date;
    last_used_at: Date | null;
    revoked_at: Date | null;
  }>(
    `SELECT k.key_id, k.name, k.key_prefix, k.account_id, a.name AS account_name, COALESCE(s.spent, 0) AS spent, k.budget, k.allowed_models, k.expires_at, k.created_at, k.last_used_at, k.revoked_at
     FROM rm.api_keys k LEFT JOIN rm.accounts a ON a.account_id = k.account_id
       LEFT JOIN rm.actor_spend s ON s.account_id = k.account_id AND s.actor = k.key_id
     ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY k.key_id DESC LIMIT ${param(page.limit + 1)}`,
    params,
  );
  const keys = rows.slice(0, page.limit).map((r) => ({
    id: r.key_id,
    name: r.name,
    prefix: r.key_prefix,
    status: statusOf(r, now),
    account_id: r.account_id,
    account_name: r.account_name,
    spent: Number(r.spent),
    budget: r.budget,
    allowed_models: r.allowed_models,
    expires_at: r.expires_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
    last_used_at: r.last_used_at?.toISOString() ?? null,
    revoked_at: r.revoked_at?.toISOString() ?? null,
  }));
  return { keys, hasMore: rows.length > page.limit };
}
