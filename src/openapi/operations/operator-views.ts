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
};
