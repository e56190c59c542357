import { CREDIT_SCHEMA, keySettingsSchema, LEDGER_QUERY_SCHEMA, OPEN_ACCOUNT_SCHEMA, REFUND_SCHEMA, SETTINGS_SCHEMA, STATEMENT_QUERY_SCHEMA, USAGE_QUERY_SCHEMA } from '../../http/routes/accounts';
import type { OperationDocs } from '../types';
import { FINANCE_QUERY_TEXT, GUARD_ERRORS, PAGE_QUERY, queryFromSchema } from './common';

const ACCOUNT_ID = 'The account id.';

/** The operator's API behind ADMIN_TOKEN (src/http/routes/{accounts,operations}.ts). */
export const ADMIN_DOCS: OperationDocs = {
  'POST /admin/v1/accounts': {
    tag: 'admin',
    summary: 'Open an account',
    body: { name: 'OpenAccountRequest', schema: OPEN_ACCOUNT_SCHEMA, example: { name: 'Acme Ltd' } },
    responses: [{ status: 201, description: 'The new account, with a zero balance.', schema: 'Account' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /admin/v1/accounts': {
    tag: 'admin',
    summary: 'Accounts, in id order, searchable by name or id',
    query: [{ name: 'q', description: 'A case-insensitive part of the account name, or a whole account id.', schema: { type: 'string' } }, ...PAGE_QUERY],
    responses: [{ status: 200, description: 'A page of accounts.', schema: 'List' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /admin/v1/accounts/:id': {
    tag: 'admin',
    summary: 'An account and its balance',
    pathParams: { id: ACCOUNT_ID },
    responses: [{ status: 200, description: 'The account.', schema: 'Account' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'PATCH /admin/v1/accounts/:id': {
    tag: 'admin',
    summary: 'Change account settings',
    pathParams: { id: ACCOUNT_ID },
    body: { name: 'AccountSettingsRequest', schema: SETTINGS_SCHEMA, example: { default_video_url_mode: 'auto' } },
    responses: [{ status: 200, description: 'The account as changed.', schema: 'Account' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'POST /admin/v1/accounts/:id/credits': {
    tag: 'admin',
    summary: 'Credit an account (top-up)',
    description: 'Idempotent by `reference`: repeating it answers 200 with the first entry.',
    pathParams: { id: ACCOUNT_ID },
    body: { name: 'CreditRequest', schema: CREDIT_SCHEMA, example: { amount: 10000, reference: 'invoice-2026-001', note: 'top-up' } },
    responses: [
      { status: 201, description: 'Credited.', schema: 'LedgerEntry' },
      { status: 200, description: 'Already credited under this reference.', schema: 'LedgerEntry' },
    ],
    errors: [...GUARD_ERRORS, 404],
  },
  'POST /admin/v1/accounts/:id/refunds': {
    tag: 'admin',
    summary: 'Refund part of a settled reservation',
    description: 'Idempotent by `reference`.',
    pathParams: { id: ACCOUNT_ID },
    body: { name: 'RefundRequest', schema: REFUND_SCHEMA, example: { reservation_id: 'res_123', amount: 100, reference: 'ticket-42', reason: 'upstream outage' } },
    responses: [
      { status: 201, description: 'Refunded.', schema: 'LedgerEntry' },
      { status: 200, description: 'Already refunded under this reference.', schema: 'LedgerEntry' },
    ],
    errors: [...GUARD_ERRORS, 404],
  },
  'POST /admin/v1/accounts/:id/keys': {
    tag: 'admin',
    summary: 'Issue an API key',
    pathParams: { id: ACCOUNT_ID },
    body: { name: 'IssueKeyRequest', schema: keySettingsSchema, example: { name: 'backend', allowed_models: ['chat-fast'] } },
    responses: [{ status: 201, description: 'The key; its secret is shown only here.', schema: 'ApiKey' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'GET /admin/v1/accounts/:id/keys': {
    tag: 'admin',
    summary: 'An account’s keys with budget spent and remaining, expiry, last use',
    pathParams: { id: ACCOUNT_ID },
    responses: [{ status: 200, description: 'The keys (never their secrets).', schema: 'List' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'PATCH /admin/v1/keys/:keyId': {
    tag: 'admin',
    summary: 'Change a key’s name, models, budget, expiry or rate',
    pathParams: { keyId: 'The key id.' },
    body: { name: 'KeySettingsRequest', schema: keySettingsSchema, example: { budget: { amount: 10000000, period: 'month' }, rate_limit_per_minute: 60 } },
    responses: [{ status: 200, description: 'The key as changed.', schema: 'ApiKey' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'POST /admin/v1/accounts/:id/keys/:keyId/regenerate': {
    tag: 'admin',
    summary: 'Regenerate an API key’s secret in place',
    description:
      'A new secret for a live key of the account: the same key id, limits and spent budget. The old secret is refused at once in every gateway process, and dashboard sessions opened with it end. An unknown account, a key of another account, an unknown or a revoked key: 404.',
    pathParams: { id: ACCOUNT_ID, keyId: 'The key id.' },
    responses: [{ status: 200, description: 'The key with its new secret in `key`, shown only here.', schema: 'ApiKey' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'DELETE /admin/v1/keys/:keyId': {
    tag: 'admin',
    summary: 'Revoke an API key',
    pathParams: { keyId: 'The key id.' },
    responses: [{ status: 204, description: 'Revoked.' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'POST /admin/v1/accounts/:id/webhook-secret': {
    tag: 'admin',
    summary: 'Rotate the account webhook secret',
    pathParams: { id: ACCOUNT_ID },
    responses: [{ status: 201, description: 'The new secret.', schema: 'WebhookSecret' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'GET /admin/v1/accounts/:id/ledger': {
    tag: 'admin',
    summary: 'An account’s ledger, oldest first, with the filters of the account’s own ledger',
    pathParams: { id: ACCOUNT_ID },
    query: queryFromSchema(LEDGER_QUERY_SCHEMA, FINANCE_QUERY_TEXT),
    responses: [{ status: 200, description: 'A page of ledger entries (or CSV).', schema: 'LedgerPage' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'GET /admin/v1/usage': {
    tag: 'admin',
    summary: 'Usage across accounts, groupable by account_id and by the channel that served',
    query: queryFromSchema(USAGE_QUERY_SCHEMA, FINANCE_QUERY_TEXT),
    responses: [{ status: 200, description: 'The totals per group.', schema: 'List' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /admin/v1/accounts/:id/statements/:month': {
    tag: 'admin',
    summary: 'An account’s statement of a month (YYYY-MM)',
    pathParams: { id: ACCOUNT_ID, month: 'The month, `YYYY-MM`.' },
    query: queryFromSchema(STATEMENT_QUERY_SCHEMA, FINANCE_QUERY_TEXT),
    responses: [{ status: 200, description: 'Opening, credits, charges by model, refunds, closing (or CSV).', schema: { type: 'object' } }],
    errors: [...GUARD_ERRORS, 404],
  },
  'GET /admin/v1/consumers': {
    tag: 'admin',
    summary: 'Read models and process managers: position, lag, lease',
    responses: [{ status: 200, description: 'Every consumer’s status.', schema: { type: 'object' } }],
    errors: [...GUARD_ERRORS],
  },
  'GET /admin/v1/jobs': {
    tag: 'admin',
    summary: 'Background jobs',
    query: [{ name: 'failing', description: '`true`: only jobs whose last attempt failed.', schema: { type: 'string', enum: ['true', 'false'] } }],
    responses: [{ status: 200, description: 'The jobs.', schema: 'List' }],
    errors: [...GUARD_ERRORS],
  },
  'POST /admin/v1/catalog/reload': {
    tag: 'admin',
    summary: 'Reload the model catalog from its file',
    responses: [{ status: 200, description: 'The catalog as loaded.', schema: { type: 'object' } }],
    errors: [...GUARD_ERRORS],
  },
};
