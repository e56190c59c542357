import { keySettingsSchema, LEDGER_QUERY_SCHEMA, SETTINGS_SCHEMA, STATEMENT_QUERY_SCHEMA, USAGE_QUERY_SCHEMA } from '../../http/routes/accounts';
import { ACCOUNT_REQUESTS_QUERY_SCHEMA } from '../../http/routes/request-log';
import type { OperationDocs } from '../types';
import { FINANCE_QUERY_TEXT, GUARD_ERRORS, queryFromSchema, REQUEST_LOG_QUERY_TEXT } from './common';

/** The caller's own account (src/http/routes/accounts.ts, accountRouter). */
export const ACCOUNT_DOCS: OperationDocs = {
  'GET /v1/account': {
    tag: 'account',
    summary: 'The caller’s account and balance',
    responses: [{ status: 200, description: 'The account; `available` and `frozen` in minor units.', schema: 'Account' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /v1/account/ledger': {
    tag: 'account',
    summary: 'The caller’s ledger, oldest first: key, model, endpoint, request or task, units and prices per entry',
    query: queryFromSchema(LEDGER_QUERY_SCHEMA, FINANCE_QUERY_TEXT),
    responses: [{ status: 200, description: 'A page of ledger entries (or CSV).', schema: 'LedgerPage' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /v1/account/requests': {
    tag: 'account',
    summary: 'The caller’s request log: one line per reserved call, newest first',
    description:
      'As the operator’s `GET /admin/v1/requests` for this account, without the channel (channel names are the operator’s). A request refused before it reserved has no line. ' +
      'CSV with `format=csv` or `Accept: text/csv`.',
    query: queryFromSchema(ACCOUNT_REQUESTS_QUERY_SCHEMA, REQUEST_LOG_QUERY_TEXT),
    responses: [{ status: 200, description: 'A page of lines (or CSV).', schema: 'RequestLogPage' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /v1/usage': {
    tag: 'account',
    summary: 'Requests, units and amounts per group, reconciled with the ledger',
    query: queryFromSchema(USAGE_QUERY_SCHEMA, FINANCE_QUERY_TEXT).filter((p) => p.name !== 'account_id'),
    responses: [{ status: 200, description: 'The totals per group.', schema: 'List' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /v1/account/statements/:month': {
    tag: 'account',
    summary: 'The statement of a month (YYYY-MM) in the account time zone',
    pathParams: { month: 'The month, `YYYY-MM`.' },
    query: queryFromSchema(STATEMENT_QUERY_SCHEMA, FINANCE_QUERY_TEXT),
    responses: [{ status: 200, description: 'Opening, credits, charges by model, refunds, closing (or CSV).', schema: { type: 'object' } }],
    errors: [...GUARD_ERRORS],
  },
  'PATCH /v1/account/settings': {
    tag: 'account',
    summary: 'Change the account’s default video_url_mode or time zone',
    body: { name: 'AccountSettingsRequest', schema: SETTINGS_SCHEMA, example: { timezone: 'Asia/Shanghai' } },
    responses: [{ status: 200, description: 'The account as changed.', schema: 'Account' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /v1/account/keys': {
    tag: 'account',
    summary: 'The account’s keys with budget spent and remaining, expiry, last use',
    responses: [{ status: 200, description: 'The keys (never their secrets).', schema: 'List' }],
    errors: [...GUARD_ERRORS],
  },
  'POST /v1/account/keys': {
    tag: 'account',
    summary: 'Issue a key no wider than the calling key',
    description: 'Limits the body leaves out are the calling key’s; a model, budget, expiry or rate beyond the calling key’s is 403 `key_scope_exceeded`.',
    body: { name: 'OwnerKeyRequest', schema: keySettingsSchema, example: { name: 'ci', allowed_models: ['chat-fast'], budget: { amount: 1000000, period: 'day' } } },
    responses: [{ status: 201, description: 'The key; its secret is shown only here.', schema: 'ApiKey' }],
    errors: [...GUARD_ERRORS, 403],
  },
  'PATCH /v1/account/keys/:keyId': {
    tag: 'account',
    summary: 'Change a key no wider than the calling key',
    pathParams: { keyId: 'The key id.' },
    body: { name: 'OwnerKeySettingsRequest', schema: keySettingsSchema, example: { rate_limit_per_minute: 30 } },
    responses: [{ status: 200, description: 'The key as changed.', schema: 'ApiKey' }],
    errors: [...GUARD_ERRORS, 403, 404],
  },
  'POST /v1/account/keys/:keyId/regenerate': {
    tag: 'account',
    summary: 'Regenerate a key’s secret in place',
    description:
      'A new secret for a live key no wider than the calling key: the same key id, limits and spent budget. The old secret is refused at once in every gateway process, and dashboard sessions opened with it end. Another account’s, an unknown or a revoked key: 404 `key_not_found`; a key wider than the calling key: 403 `key_scope_exceeded`.',
    pathParams: { keyId: 'The key id.' },
    responses: [{ status: 200, description: 'The key with its new secret in `key`, shown only here.', schema: 'ApiKey' }],
    errors: [...GUARD_ERRORS, 403, 404],
  },
  'DELETE /v1/account/keys/:keyId': {
    tag: 'account',
    summary: 'Revoke a key no wider than the calling key',
    pathParams: { keyId: 'The key id.' },
    responses: [{ status: 204, description: 'Revoked.' }],
    errors: [...GUARD_ERRORS, 403, 404],
  },
  'GET /v1/account/webhook-secret': {
    tag: 'account',
    summary: 'The account webhook secret',
    responses: [{ status: 200, description: 'The secret, or null when none is configured.', schema: 'WebhookSecret', example: { secret: 'whsec_3q2+7w==' } }],
    errors: [...GUARD_ERRORS],
  },
  'POST /v1/account/webhook-secret': {
    tag: 'account',
    summary: 'Rotate the account webhook secret',
    responses: [{ status: 201, description: 'The new secret (`whsec_…`).', schema: 'WebhookSecret' }],
    errors: [...GUARD_ERRORS],
  },
};
