import { keySettingsSchema } from '../../http/routes/accounts';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS, PAGE_QUERY } from './common';

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
    summary: 'The caller’s ledger, oldest first',
    query: PAGE_QUERY,
    responses: [{ status: 200, description: 'A page of ledger entries.', schema: 'LedgerPage' }],
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
