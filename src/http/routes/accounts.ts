import Router from '@koa/router';
import type { AccountService, KeyActor, KeyView } from '../../accounts/service';
import type { KeySettings } from '../../domain/account/events';
import { readJson } from '../body';
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
  };
}

const UNLIMITED: KeySettings = { name: null, allowedModels: null, budget: null, expiresAt: null, rateLimitPerMinute: null };

function settingsOf(key: KeyView): KeySettings {
  return {
    name: key.name,
    allowedModels: key.allowed_models,
    budget: key.budget && { amount: key.budget.amount, period: key.budget.period },
    expiresAt: key.expires_at,
    rateLimitPerMinute: key.rate_limit_per_minute,
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

function searchQuery(query: GatewayContext['query']): string | null {
  const q = query.q;
  if (q === undefined || q === '') return null;
  if (typeof q !== 'string' || q.length > 200) throw new ApiError(400, 'invalid_request', 'q must be one string of at most 200 characters', { param: 'q' });
  return q;
}

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const ACCOUNT_SETTINGS_SCHEMA = {
  type: 'object',
  properties: { default_video_url_mode: { type: 'string', enum: ['auto', 'upstream', 'tos'] } },
  required: ['default_video_url_mode'],
  additionalProperties: false,
};
const parseSettings = validator<{ default_video_url_mode: 'auto' | 'upstream' | 'tos' }>(ACCOUNT_SETTINGS_SCHEMA);

function ledgerPage(query: GatewayContext['query']): { after: number | null; limit: number } {
  const { after, limit } = pageParams(query, (raw) => /^\d+$/.test(raw));
  return { after: after === null ? null : Number(after), limit };
}

async function ledgerBody(accounts: AccountService, accountId: string, ctx: GatewayContext): Promise<unknown> {
  const { entries, hasMore } = await accounts.ledger(accountId, ledgerPage(ctx.query));
  return listBody(entries, hasMore, (e) => String(e.sequence));
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

  router.get('/accounts/:id/ledger', async (ctx) => {
    await requireAccount(accounts, ctx.params.id!);
    ctx.body = await ledgerBody(accounts, ctx.params.id!, ctx);
  });

  return router;
}

/** What an API key holder sees of their own account. Mounted behind API key auth. */
export function accountRouter(accounts: AccountService): Router<GatewayState> {
  const router = new Router<GatewayState>({ sensitive: true });

  router.get('/v1/account', async (ctx) => {
    ctx.body = await requireAccount(accounts, authOf(ctx).accountId);
  });

  router.get('/v1/account/ledger', async (ctx) => {
    ctx.body = await ledgerBody(accounts, authOf(ctx).accountId, ctx);
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

  return router;
}
