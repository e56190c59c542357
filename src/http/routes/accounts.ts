import Router from '@koa/router';
import { timeRange } from '../time-range';
import { isMonthLabel, isTimeZone } from '../../accounts/calendar';
import { toCsv, YuanCell, type CsvCell } from '../../accounts/csv';
import { OPERATOR_USAGE_GROUPS, type UsageGroup } from '../../accounts/reports';
import type { AccountService, KeyActor, KeyView, LedgerEntryView } from '../../accounts/service';
import type { KeySettings } from '../../domain/account/events';
import { readJson } from '../body';
import { everyPageForCsv, FORMAT, sendCsv, wantsCsv } from '../csv-response';
import { authOf, type GatewayContext, type GatewayState } from '../context';
import { ApiError } from '../errors';
import { listBody, pageParams } from '../pagination';
import { validator } from '../validation';

const MAX_CREDIT = 1_000_000_000_000_000; // 1e9 CNY in minor units: a typo guard, far above any real top-up.

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const OPEN_ACCOUNT_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
  required: ['name'],
  additionalProperties: false,
};
const parseOpenAccount = validator<{ name: string }>(OPEN_ACCOUNT_SCHEMA);

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const CREDIT_SCHEMA = {
  type: 'object',
  properties: {
    amount: { type: 'integer', minimum: 1, maximum: MAX_CREDIT },
    reference: { type: 'string', minLength: 1, maxLength: 200 },
    note: { type: 'string', maxLength: 500 },
  },
  required: ['amount', 'reference'],
  additionalProperties: false,
};
const parseCredit = validator<{ amount: number; reference: string; note?: string }>(CREDIT_SCHEMA);

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const REFUND_SCHEMA = {
  type: 'object',
  properties: {
    reservation_id: { type: 'string', minLength: 1, maxLength: 200 },
    amount: { type: 'integer', minimum: 1, maximum: MAX_CREDIT },
    reference: { type: 'string', minLength: 1, maxLength: 200 },
    reason: { type: 'string', minLength: 1, maxLength: 500 },
  },
  required: ['reservation_id', 'amount', 'reference', 'reason'],
  additionalProperties: false,
};
const parseRefund = validator<{ reservation_id: string; amount: number; reference: string; reason: string }>(REFUND_SCHEMA);

/** The fields of a key's settings in a request; each absent one keeps (or inherits) its value, null lifts the limit. */
interface KeySettingsBody {
  name?: string | null;
  allowed_models?: string[] | null;
  budget?: { amount: number; period: 'total' | 'day' | 'month' } | null;
  expires_at?: string | null;
  rate_limit_per_minute?: number | null;
  tokens_per_minute?: number | null;
}

/** Request body of POST …/keys and PATCH …/keys/{id}, for the operator and the account alike. */
export const keySettingsSchema = {
  type: 'object',
  properties: {
    name: { type: ['string', 'null'], maxLength: 200 },
    allowed_models: { type: ['array', 'null'], items: { type: 'string', minLength: 1 }, maxItems: 500, uniqueItems: true },
    budget: {
      type: ['object', 'null'],
      properties: { amount: { type: 'integer', minimum: 1, maximum: MAX_CREDIT }, period: { type: 'string', enum: ['total', 'day', 'month'] } },
      required: ['amount', 'period'],
      additionalProperties: false,
    },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    rate_limit_per_minute: { type: ['integer', 'null'], minimum: 1, maximum: 1_000_000 },
    tokens_per_minute: { type: ['integer', 'null'], minimum: 1, maximum: 1_000_000_000 },
  },
  required: [],
  additionalProperties: false,
} as const;

const parseKeySettings = validator<KeySettingsBody>(keySettingsSchema);

/** A key's settings with the body's fields applied over `base`. */
function keySettings(body: KeySettingsBody, base: KeySettings): KeySettings {
  return {
    name: body.name !== undefined ? body.name : base.name,
    allowedModels: body.allowed_models !== undefined ? body.allowed_models : base.allowedModels,
    budget: body.budget !== undefined ? body.budget : base.budget,
    expiresAt: body.expires_at !== undefined ? body.expires_at && new Date(body.expires_at).toISOString() : base.expiresAt,
    rateLimitPerMinute: body.rate_limit_per_minute !== undefined ? body.rate_limit_per_minute : base.rateLimitPerMinute,
    tokensPerMinute: body.tokens_per_minute !== undefined ? body.tokens_per_minute : base.tokensPerMinute,
  };
}

const UNLIMITED: KeySettings = { name: null, allowedModels: null, budget: null, expiresAt: null, rateLimitPerMinute: null, tokensPerMinute: null };

function settingsOf(key: KeyView): KeySettings {
  return {
    name: key.name,
    allowedModels: key.allowed_models,
    budget: key.budget && { amount: key.budget.amount, period: key.budget.period },
    expiresAt: key.expires_at,
    rateLimitPerMinute: key.rate_limit_per_minute,
    tokensPerMinute: key.tokens_per_minute,
  };
}

function keyList(keys: readonly KeyView[]) {
  return listBody(keys, false, (k) => k.id);
}

/** The account's key `keyId` (404 when it is another account's or none), with its settings changed by the body. */
async function changeKey(accounts: AccountService, accountId: string | null, ctx: GatewayContext, by: KeyActor): Promise<KeyView> {
  const body = parseKeySettings(await readJson(ctx));
  const keyId = ctx.params.keyId!;
  const owner = await accounts.accountOfKey(keyId);
  if (!owner || (accountId !== null && owner !== accountId)) throw new ApiError(404, 'key_not_found', `key ${keyId} not found`);
  const current = await accounts.requireKey(owner, keyId);
  if (current.revoked) throw new ApiError(404, 'key_not_found', `key ${keyId} not found`);
  return accounts.changeKey(owner, keyId, keySettings(body, settingsOf(current)), by, { requestId: ctx.state.requestId, actor: by === 'admin' ? 'admin' : by.keyId });
}

/** The account's live key `keyId` (404 when it is another account's, revoked, or none) with a new secret. */
async function regenerateKey(accounts: AccountService, accountId: string, ctx: GatewayContext, by: KeyActor): Promise<KeyView & { key: string }> {
  const keyId = ctx.params.keyId!;
  if ((await accounts.accountOfKey(keyId)) !== accountId) throw new ApiError(404, 'key_not_found', `key ${keyId} not found`);
  return accounts.regenerateKey(accountId, keyId, by, { requestId: ctx.state.requestId, actor: by === 'admin' ? 'admin' : by.keyId });
}

function searchQuery(query: GatewayContext['query']): string | null {
  const q = query.q;
  if (q === undefined || q === '') return null;
  if (typeof q !== 'string' || q.length > 200) throw new ApiError(400, 'invalid_request', 'q must be one string of at most 200 characters', { param: 'q' });
  return q;
}

/** PATCH /v1/account/settings and PATCH /admin/v1/accounts/{id}: any of the settings, at least one. */
export const SETTINGS_SCHEMA = {
  type: 'object',
  properties: {
    default_video_url_mode: { type: 'string', enum: ['auto', 'upstream', 'tos'] },
    timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone of statement months and usage days, e.g. Asia/Shanghai' },
  },
  minProperties: 1,
  additionalProperties: false,
} as const;
const parseSettingsBody = validator<{ default_video_url_mode?: 'auto' | 'upstream' | 'tos'; timezone?: string }>(SETTINGS_SCHEMA);

function parseSettings(body: unknown): { default_video_url_mode?: 'auto' | 'upstream' | 'tos'; timezone?: string } {
  const settings = parseSettingsBody(body);
  if (settings.timezone !== undefined && !isTimeZone(settings.timezone)) {
    throw new ApiError(400, 'invalid_request', 'timezone must be an IANA time zone name such as Asia/Shanghai', { param: 'timezone' });
  }
  return settings;
}

async function requireAccount(accounts: AccountService, id: string) {
  const account = await accounts.get(id);
  if (!account) throw new ApiError(404, 'account_not_found', `account ${id} not found`);
  return account;
}

/** The operator's API: accounts, credits, keys, secrets, ledgers. Mounted behind the admin token. */
export function adminRouter(accounts: AccountService): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1', sensitive: true });

  router.post('/accounts', async (ctx) => {
    const { name } = parseOpenAccount(await readJson(ctx));
    ctx.status = 201;
    ctx.body = await accounts.open(name, { requestId: ctx.state.requestId, actor: 'admin' });
  });

  router.get('/accounts', async (ctx) => {
    const { accounts: found, hasMore } = await accounts.listAccounts(searchQuery(ctx.query), pageParams(ctx.query));
    ctx.body = listBody(found, hasMore, (a) => a.id);
  });

  router.get('/accounts/:id', async (ctx) => {
    ctx.body = await requireAccount(accounts, ctx.params.id!);
  });

  router.patch('/accounts/:id', async (ctx) => {
    const settings = parseSettings(await readJson(ctx));
    await requireAccount(accounts, ctx.params.id!);
    await accounts.changeSettings(ctx.params.id!, settings, { requestId: ctx.state.requestId, actor: 'admin' });
    ctx.body = await requireAccount(accounts, ctx.params.id!);
  });

  router.post('/accounts/:id/credits', async (ctx) => {
    const body = parseCredit(await readJson(ctx));
    const { created, entry } = await accounts.addCredit(ctx.params.id!, body.amount, body.reference, body.note ?? null, {
      requestId: ctx.state.requestId,
      actor: 'admin',
    });
    ctx.status = created ? 201 : 200;
    ctx.body = entry;
  });

  router.post('/accounts/:id/refunds', async (ctx) => {
    const body = parseRefund(await readJson(ctx));
    await requireAccount(accounts, ctx.params.id!);
    const { created, entry } = await accounts.refund(
      ctx.params.id!,
      { reservationId: body.reservation_id, amount: body.amount, reference: body.reference, reason: body.reason },
      { requestId: ctx.state.requestId, actor: 'admin' },
    );
    ctx.status = created ? 201 : 200;
    ctx.body = entry;
  });

  router.post('/accounts/:id/keys', async (ctx) => {
    const body = parseKeySettings(await readJson(ctx));
    await requireAccount(accounts, ctx.params.id!);
    ctx.status = 201;
    ctx.body = await accounts.issueKey(ctx.params.id!, keySettings(body, UNLIMITED), 'admin', { requestId: ctx.state.requestId, actor: 'admin' });
  });

  router.get('/accounts/:id/keys', async (ctx) => {
    await requireAccount(accounts, ctx.params.id!);
    ctx.body = keyList(await accounts.listKeys(ctx.params.id!));
  });

  router.patch('/keys/:keyId', async (ctx) => {
    ctx.body = await changeKey(accounts, null, ctx, 'admin');
  });

  router.post('/accounts/:id/keys/:keyId/regenerate', async (ctx) => {
    await requireAccount(accounts, ctx.params.id!);
    ctx.body = await regenerateKey(accounts, ctx.params.id!, ctx, 'admin');
  });

  router.delete('/keys/:keyId', async (ctx) => {
    if (!(await accounts.revokeKey(ctx.params.keyId!, 'admin', { requestId: ctx.state.requestId, actor: 'admin' }))) {
      throw new ApiError(404, 'key_not_found', `key ${ctx.params.keyId} not found`);
    }
    ctx.status = 204;
  });

  router.post('/accounts/:id/webhook-secret', async (ctx) => {
    await requireAccount(accounts, ctx.params.id!);
    ctx.status = 201;
    ctx.body = { secret: await accounts.rotateWebhookSecret(ctx.params.id!, { requestId: ctx.state.requestId, actor: 'admin' }) };
  });

  adminFinanceRoutes(router, accounts);
  return router;
}

/** What an API key holder sees of their own account. Mounted behind API key auth. */
export function accountRouter(accounts: AccountService): Router<GatewayState> {
  const router = new Router<GatewayState>({ sensitive: true });

  router.get('/v1/account', async (ctx) => {
    ctx.body = await requireAccount(accounts, authOf(ctx).accountId);
  });


  // The owner's keys: any key of the account manages them, within the rule that it can never
  // create or widen a key beyond itself (omitted limits of a new key are the acting key's own).
  router.get('/v1/account/keys', async (ctx) => {
    ctx.body = keyList(await accounts.listKeys(authOf(ctx).accountId));
  });

  router.post('/v1/account/keys', async (ctx) => {
    const body = parseKeySettings(await readJson(ctx));
    const auth = authOf(ctx);
    const acting = await accounts.requireKey(auth.accountId, auth.keyId);
    ctx.status = 201;
    ctx.body = await accounts.issueKey(auth.accountId, keySettings(body, { ...settingsOf(acting), name: null }), { keyId: auth.keyId }, { requestId: ctx.state.requestId, actor: auth.keyId });
  });

  router.patch('/v1/account/keys/:keyId', async (ctx) => {
    const auth = authOf(ctx);
    ctx.body = await changeKey(accounts, auth.accountId, ctx, { keyId: auth.keyId });
  });

  router.post('/v1/account/keys/:keyId/regenerate', async (ctx) => {
    const auth = authOf(ctx);
    ctx.body = await regenerateKey(accounts, auth.accountId, ctx, { keyId: auth.keyId });
  });

  router.delete('/v1/account/keys/:keyId', async (ctx) => {
    const auth = authOf(ctx);
    const keyId = ctx.params.keyId!;
    if ((await accounts.accountOfKey(keyId)) !== auth.accountId) throw new ApiError(404, 'key_not_found', `key ${keyId} not found`);
    await accounts.revokeKey(keyId, { keyId: auth.keyId }, { requestId: ctx.state.requestId, actor: auth.keyId });
    ctx.status = 204;
  });

  router.get('/v1/account/webhook-secret', async (ctx) => {
    ctx.body = { secret: await accounts.webhookSecret(authOf(ctx).accountId) };
  });

  router.post('/v1/account/webhook-secret', async (ctx) => {
    ctx.status = 201;
    ctx.body = { secret: await accounts.rotateWebhookSecret(authOf(ctx).accountId, { requestId: ctx.state.requestId, actor: 'account' }) };
  });

  ownerFinanceRoutes(router, accounts);
  return router;
}

// --- the finance reader's side: the ledger, usage and statements ------------------------------------

export const INSTANT = { type: 'string', format: 'date-time', description: 'ISO 8601 instant with its offset, e.g. 2026-11-01T00:00:00+08:00' } as const;

/** GET /v1/account/ledger and GET /admin/v1/accounts/{id}/ledger: filters, `format`, and the page (`after`, `limit`). */
export const LEDGER_QUERY_SCHEMA = {
  type: 'object',
  properties: {
    key_id: { type: 'string', minLength: 1, maxLength: 200 },
    model: { type: 'string', minLength: 1, maxLength: 200 },
    request_id: { type: 'string', minLength: 1, maxLength: 200, description: 'The entries one synchronous request caused (its X-Request-Id).' },
    type: { type: 'string', enum: ['credit', 'reservation', 'settlement', 'release', 'refund'] },
    from: INSTANT,
    to: INSTANT,
    format: FORMAT,
    after: { type: 'string' },
    limit: { type: 'string' },
  },
  additionalProperties: false,
} as const;
const parseLedgerQuery = validator<{ key_id?: string; model?: string; request_id?: string; type?: string; from?: string; to?: string; format?: string }>(LEDGER_QUERY_SCHEMA);

/** GET /v1/usage and GET /admin/v1/usage (where `account_id` may also be grouped by, and filtered on, and `channel` grouped by). */
export const USAGE_QUERY_SCHEMA = {
  type: 'object',
  properties: {
    from: INSTANT,
    to: INSTANT,
    group_by: { type: 'string', pattern: '^(day|model|key|endpoint|account_id|channel)(,(day|model|key|endpoint|account_id|channel))*$' },
    account_id: { type: 'string', minLength: 1, maxLength: 200 },
  },
  additionalProperties: false,
} as const;
const parseUsageQuery = validator<{ from?: string; to?: string; group_by?: string; account_id?: string }>(USAGE_QUERY_SCHEMA);

/** GET …/statements/{YYYY-MM}: only the format. */
export const STATEMENT_QUERY_SCHEMA = { type: 'object', properties: { format: FORMAT }, additionalProperties: false } as const;
const parseStatementQuery = validator<{ format?: string }>(STATEMENT_QUERY_SCHEMA);

/** The ledger cursor is opaque to clients: the entry's sequence, encoded. */
function ledgerCursor(sequence: number): string {
  return Buffer.from(`ledger:${sequence}`).toString('base64url');
}

function sequenceOfCursor(cursor: string): number | null {
  const m = /^ledger:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : null;
}

const LEDGER_CSV_HEADER = [
  'sequence', 'created_at', 'type', 'amount_minor', 'amount_yuan', 'available_after_minor', 'available_after_yuan', 'frozen_after_minor',
  'key_id', 'actor', 'model', 'endpoint', 'request_id', 'task_id', 'reservation_id', 'reference', 'units', 'unit_prices', 'description',
];

/** Quantities or prices by name as a CSV cell's text: `name=value` pairs separated by spaces. */
export function namedValuesText(values: Readonly<Record<string, number>>): string {
  return Object.entries(values).map(([k, v]) => `${k}=${v}`).join(' ');
}

/** A pricing's units or unit prices as text: each line's namedValuesText, lines joined by ` + ` (the divisor after `/`). */
function pricingText(entry: LedgerEntryView, part: 'units' | 'unit_prices'): string | null {
  if (!entry.pricing) return null;
  return entry.pricing.lines.map((l) => namedValuesText(l[part]) + (part === 'unit_prices' && l.per !== 1 ? ` /${l.per}` : '')).join(' + ');
}

async function ledgerResponse(accounts: AccountService, accountId: string, ctx: GatewayContext): Promise<void> {
  const q = parseLedgerQuery(ctx.query);
  const filter = { ...(q.key_id ? { keyId: q.key_id } : {}), ...(q.model ? { model: q.model } : {}), ...(q.request_id ? { requestId: q.request_id } : {}), ...(q.type ? { type: q.type } : {}), ...timeRange(q.from, q.to) };
  if (wantsCsv(ctx, q.format)) {
    const entries = await everyPageForCsv(
      async (after: number | null, limit) => {
        const page = await accounts.ledger(accountId, { after, limit }, filter);
        return { items: page.entries, hasMore: page.hasMore };
      },
      (e) => e.sequence,
    );
    const rows = entries.map((e) => [
      e.sequence, e.created_at, e.type, e.amount, new YuanCell(e.amount), e.available_after, new YuanCell(e.available_after), e.frozen_after,
      e.key_id, e.actor, e.model, e.endpoint, e.request_id, e.task_id, e.reservation_id, e.reference, pricingText(e, 'units'), pricingText(e, 'unit_prices'), e.description,
    ]);
    return sendCsv(ctx, `ledger-${accountId}.csv`, toCsv(LEDGER_CSV_HEADER, rows));
  }
  const { after, limit } = pageParams(ctx.query, (raw) => sequenceOfCursor(raw) !== null);
  const { entries, hasMore } = await accounts.ledger(accountId, { after: after === null ? null : sequenceOfCursor(after), limit }, filter);
  ctx.body = listBody(entries, hasMore, (e) => ledgerCursor(e.sequence));
}

async function usageResponse(accounts: AccountService, accountId: string | null, ctx: GatewayContext, admin: boolean): Promise<void> {
  const q = parseUsageQuery(ctx.query);
  if (!admin && q.account_id !== undefined) throw new ApiError(400, 'invalid_request', 'account_id is not a recognised field', { param: 'account_id' });
  const groupBy = q.group_by ? [...new Set(q.group_by.split(','))] as UsageGroup[] : [];
  const operatorOnly = groupBy.find((g) => OPERATOR_USAGE_GROUPS.has(g));
  if (!admin && operatorOnly) throw new ApiError(400, 'invalid_request', `group_by ${operatorOnly} is for the operator`, { param: 'group_by' });
  const { from, to } = timeRange(q.from, q.to);
  const { groups, total } = await accounts.reports.usage({ accountId: accountId ?? q.account_id ?? null, from: from ?? null, to: to ?? null, groupBy });
  ctx.body = {
    object: 'usage',
    from: from?.toISOString() ?? null,
    to: to?.toISOString() ?? null,
    group_by: groupBy,
    currency: 'CNY',
    data: groups.map(({ group, ...totals }) => ({ ...group, ...totals })),
    total,
  };
}

const STATEMENT_CSV_HEADER = ['month', 'at', 'type', 'model', 'key_id', 'endpoint', 'request_id', 'task_id', 'reservation_id', 'amount_minor', 'amount_yuan', 'overrun_minor', 'balance_minor', 'balance_yuan', 'note'];

async function statementResponse(accounts: AccountService, accountId: string, month: string, ctx: GatewayContext): Promise<void> {
  const q = parseStatementQuery(ctx.query);
  if (!isMonthLabel(month)) throw new ApiError(404, 'not_found', 'a statement is named by its month, YYYY-MM');
  const { statement, lines } = await accounts.reports.statement(accountId, month);
  if (!wantsCsv(ctx, q.format)) {
    ctx.body = statement;
    return;
  }
  // The opening balance, every entry with the balance after it, and the closing balance.
  let balance = statement.opening_balance;
  const rows: CsvCell[][] = [[month, statement.starts_at, 'opening_balance', null, null, null, null, null, null, null, null, null, balance, new YuanCell(balance), null]];
  for (const l of lines) {
    balance += l.type === 'charge' ? -l.amount : l.amount;
    rows.push([month, l.at, l.type, l.model, l.key_id, l.endpoint, l.request_id, l.task_id, l.reservation_id, l.amount, new YuanCell(l.amount), l.overrun, balance, new YuanCell(balance), l.note]);
  }
  rows.push([month, statement.ends_at, 'closing_balance', null, null, null, null, null, null, null, null, null, statement.closing_balance, new YuanCell(statement.closing_balance), null]);
  sendCsv(ctx, `statement-${accountId}-${month}.csv`, toCsv(STATEMENT_CSV_HEADER, rows));
}

/** The operator's finance routes: any account's ledger, usage across accounts, any account's statements. */
function adminFinanceRoutes(router: Router<GatewayState>, accounts: AccountService): void {
  router.get('/accounts/:id/ledger', async (ctx) => {
    await requireAccount(accounts, ctx.params.id!);
    await ledgerResponse(accounts, ctx.params.id!, ctx);
  });
  router.get('/usage', async (ctx) => usageResponse(accounts, null, ctx, true));
  router.get('/accounts/:id/statements/:month', async (ctx) => {
    await requireAccount(accounts, ctx.params.id!);
    await statementResponse(accounts, ctx.params.id!, ctx.params.month!, ctx);
  });
}

/** The account owner's finance routes and settings. */
function ownerFinanceRoutes(router: Router<GatewayState>, accounts: AccountService): void {
  router.get('/v1/account/ledger', async (ctx) => ledgerResponse(accounts, authOf(ctx).accountId, ctx));
  router.get('/v1/usage', async (ctx) => usageResponse(accounts, authOf(ctx).accountId, ctx, false));
  router.get('/v1/account/statements/:month', async (ctx) => statementResponse(accounts, authOf(ctx).accountId, ctx.params.month!, ctx));
  router.patch('/v1/account/settings', async (ctx) => {
    const settings = parseSettings(await readJson(ctx));
    const accountId = authOf(ctx).accountId;
    await accounts.changeSettings(accountId, settings, { requestId: ctx.state.requestId, actor: authOf(ctx).keyId });
    ctx.body = await requireAccount(accounts, accountId);
  });
}
