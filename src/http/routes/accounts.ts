import Router from '@koa/router';
import type { AccountService } from '../../accounts/service';
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

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const ISSUE_KEY_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 200 },
    allowed_models: { type: ['array', 'null'], items: { type: 'string', minLength: 1 }, maxItems: 500, uniqueItems: true },
  },
  required: [],
  additionalProperties: false,
};
const parseIssueKey = validator<{ name?: string; allowed_models?: string[] | null }>(ISSUE_KEY_SCHEMA);

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
    const body = parseIssueKey(await readJson(ctx));
    ctx.status = 201;
    ctx.body = await accounts.issueKey(ctx.params.id!, body.name ?? null, body.allowed_models ?? null, { requestId: ctx.state.requestId, actor: 'admin' });
  });

  router.delete('/keys/:keyId', async (ctx) => {
    if (!(await accounts.revokeKey(ctx.params.keyId!, { requestId: ctx.state.requestId, actor: 'admin' }))) {
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

  router.get('/v1/account/webhook-secret', async (ctx) => {
    ctx.body = { secret: await accounts.webhookSecret(authOf(ctx).accountId) };
  });

  router.post('/v1/account/webhook-secret', async (ctx) => {
    ctx.status = 201;
    ctx.body = { secret: await accounts.rotateWebhookSecret(authOf(ctx).accountId, { requestId: ctx.state.requestId, actor: 'account' }) };
  });

  return router;
}
