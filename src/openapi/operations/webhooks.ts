import { DELIVERY_LIST_QUERY_SCHEMA } from '../../http/routes/webhook-deliveries';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS, PAGE_QUERY, TASK_ID } from './common';

/** A video task's webhook delivery log (src/http/routes/webhook-deliveries.ts). */
export const WEBHOOK_DOCS: OperationDocs = {
  'GET /v1/videos/generations/:id/webhook/deliveries': {
    tag: 'video',
    summary: 'A video task’s webhook deliveries, newest first, with every attempt',
    description:
      'Each attempt: when, `ok`, the receiver’s HTTP status or the error, its duration, and the `X-Service-Timestamp` and `X-Service-Signature` values it sent ' +
      '(`signature` null when unsigned; both null for attempts recorded before the gateway kept them).',
    pathParams: { id: TASK_ID },
    query: PAGE_QUERY.filter((q) => q.name in DELIVERY_LIST_QUERY_SCHEMA.properties),
    responses: [{ status: 200, description: 'A page of deliveries, with the task’s `callback_url` and whether it is `signed`.', schema: 'WebhookDeliveryList' }],
    errors: [...GUARD_ERRORS, 404],
  },
};
