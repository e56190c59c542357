import { DROPPED_WEBHOOKS_QUERY_SCHEMA } from '../../http/routes/dropped-webhooks';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS, queryFromSchema } from './common';

/** What the operator's dashboard pages read beyond the account API (src/http/routes/{operations,dropped-webhooks}.ts). */
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
};
