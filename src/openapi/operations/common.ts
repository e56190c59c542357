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
