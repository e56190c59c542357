import type { QueryParam } from '../types';

/** `?after=&limit=` of every paginated list (src/http/pagination.ts). */
export const PAGE_QUERY: readonly QueryParam[] = [
  { name: 'after', description: 'Cursor: `next_after` of the previous page.', schema: { type: 'string' } },
  { name: 'limit', description: 'Items per page, 1 to 100 (default 20).', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
];

export const TASK_ID = 'The task id returned by the creation call.';

/**
 * What the route guard (src/http/routing.ts) may answer on a route with a credential and no spec
 * list: 400 for bad text in the query, 401 for a missing or wrong credential, 429 while the
 * client address is locked out after failed credentials.
 */
export const GUARD_ERRORS = [400, 401, 429] as const;

/**
 * The query parameters of a route whose handler validates its query with an ajv schema: one
 * parameter per property, its schema the handler's own, so the document cannot drift from it.
 */
export function queryFromSchema(schema: { readonly properties: Readonly<Record<string, object>> }, descriptions: Readonly<Record<string, string>>): QueryParam[] {
  return Object.entries(schema.properties).map(([name, property]) => ({ name, description: descriptions[name] ?? name, schema: property as QueryParam['schema'] }));
}

export const FINANCE_QUERY_TEXT: Readonly<Record<string, string>> = {
  key_id: 'Only entries made with this API key id.',
  model: 'Only entries for this model.',
  type: 'Only entries of this type.',
  from: 'From this instant on (ISO 8601 with offset).',
  to: 'Before this instant (ISO 8601 with offset).',
  format: '`csv` for text/csv (UTF-8 with a byte-order mark); `Accept: text/csv` does the same.',
  after: 'Cursor: `next_after` of the previous page.',
  limit: 'Items per page, 1 to 100 (default 20).',
  group_by: 'Comma-separated groups: `day` (in the account time zone), `model`, `key`, `endpoint` (and `account_id` and `channel`, the channel that served, on the admin route).',
  account_id: 'Only this account (admin route).',
};

/** The request log's query (GET /admin/v1/requests and GET /v1/account/requests). */
export const REQUEST_LOG_QUERY_TEXT: Readonly<Record<string, string>> = {
  ...FINANCE_QUERY_TEXT,
  key_id: 'Only calls made with this API key id.',
  model: 'Only calls for this model.',
  endpoint: 'Only calls of this endpoint, e.g. `POST /v1/chat/completions`.',
  channel: 'Only calls whose main call this channel served (admin route).',
  outcome: '`open`, `settled` (and not refunded), `released`, or `refunded` (settled, then refunded in part or whole).',
  from: 'Reserved from this instant on (ISO 8601 with offset).',
  to: 'Reserved before this instant (ISO 8601 with offset).',
  account_id: 'Only this account (admin route).',
};
