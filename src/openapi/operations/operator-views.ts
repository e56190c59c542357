import { DROPPED_WEBHOOKS_QUERY_SCHEMA } from '../../http/routes/dropped-webhooks';
import { KEY_SEARCH_QUERY_SCHEMA } from '../../http/routes/all-keys';
import { ADMIN_REQUESTS_QUERY_SCHEMA } from '../../http/routes/request-log';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS, queryFromSchema, REQUEST_LOG_QUERY_TEXT } from './common';

/** What the operator's dashboard pages read beyond the account API (src/http/routes/{operations,dropped-webhooks,request-log,all-keys}.ts). */
export const OPERATOR_VIEW_DOCS: OperationDocs = {
  'GET /admin/v1/catalog': {
    tag: 'admin',
    summary: 'The model catalog as loaded, every model with whether it is sold',
    description: 'Every model of the catalog file, sorted by id, as the file states it, with `available`: false when its channel is not configured (it is not sold).',
    responses: [{ status: 200, description: 'The models.', schema: 'CatalogList' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /admin/v1/webhooks/dropped': {
    tag: 'admin',
    summary: 'Webhook deliveries dropped after their last failed attempt, newest first, across accounts',
    query: queryFromSchema(DROPPED_WEBHOOKS_QUERY_SCHEMA, {
      account_id: 'Only this account’s deliveries.',
      after: 'Cursor: `next_after` of the previous page.',
      limit: 'Items per page, 1 to 100 (default 20).',
    }),
    responses: [{ status: 200, description: 'A page of dropped deliveries, each with its task.', schema: 'DroppedWebhookList' }],
    errors: [...GUARD_ERRORS],
  },
  'POST /admin/v1/audit': {
    tag: 'admin',
    summary: 'Run the audit of `npm run audit` in the background',
    description:
      'Replays the log against every read model and checks the ledger invariants, as `npm run audit` does, in the gateway, on connections of its own. ' +
      'Answers at once with the run; `GET /admin/v1/audit` shows it running, then its result. One audit at a time across gateway processes.',
    responses: [{ status: 202, description: 'The run, started.', schema: 'AuditRun' }],
    errors: [...GUARD_ERRORS, 409],
  },
  'GET /admin/v1/audit': {
    tag: 'admin',
    summary: 'The audit running now, if any, and the last one that finished',
    responses: [{ status: 200, description: '`{object: "audit", running, last}`, each a run or null.', schema: 'AuditStatus' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /admin/v1/requests': {
    tag: 'admin',
    summary: 'The request log: one line per reserved call across accounts, newest first, with the channel that served',
    description:
      'One line per reservation (a synchronous request or a task): when, account, key (id and name), model, endpoint, the channel that served its main call, units, amount, ' +
      'and its outcome (`open`, `settled`, `released`, or `refunded` once a refund followed). A request refused before it reserved (invalid input, 402 for want of balance, ' +
      'a rate limit) has no line. Folded from the account events by the `request_log` read model, which the audit replays. CSV with `format=csv` or `Accept: text/csv`, ' +
      'with the ledger CSV’s cell rules.',
    query: queryFromSchema(ADMIN_REQUESTS_QUERY_SCHEMA, REQUEST_LOG_QUERY_TEXT),
    responses: [{ status: 200, description: 'A page of lines (or CSV).', schema: 'RequestLogPage' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /admin/v1/keys': {
    tag: 'admin',
    summary: 'Every account’s keys, newest first, searched by name, prefix or id',
    description: 'Each key with its account’s name, status, lifetime spend (charged less refunded) and last use. Never a secret or a hash.',
    query: queryFromSchema(KEY_SEARCH_QUERY_SCHEMA, {
      q: 'A case-insensitive part of the key’s name, the start of its prefix (`tr-…`), or its whole id.',
      account_id: 'Only this account’s keys.',
      status: '`active`, `expired` or `revoked`.',
      after: 'Cursor: `next_after` of the previous page.',
      limit: 'Items per page, 1 to 100 (default 20).',
    }),
    responses: [{ status: 200, description: 'A page of keys.', schema: 'KeyListingPage' }],
    errors: [...GUARD_ERRORS],
  },
};
