import type { QueryParam } from '../types';

/** `?after=&limit=` of every paginated list (src/http/pagination.ts). */
export const PAGE_QUERY: readonly QueryParam[] = [
  { name: 'after', description: 'Cursor: `next_after` of the previous page.', schema: { type: 'string' } },
  { name: 'limit', description: 'Items per page, 1 to 100 (default 20).', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
];

export const TASK_ID = 'The task id returned by the creation call.';

/** Every API-key route also answers 401, and 429 when its address is locked out after failed credentials. */
export const API_KEY_ERRORS = [401, 429] as const;
