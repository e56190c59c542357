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
