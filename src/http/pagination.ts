import { ApiError } from './errors';

/** `?after=<cursor>&limit=<n>`: limit 1..100, default 20. */
export function pageParams(query: Record<string, string | string[] | undefined>, parseCursor: (raw: string) => boolean = () => true): { after: string | null; limit: number } {
  const rawLimit = single(query.limit);
  const limit = rawLimit === undefined ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError(400, 'invalid_request', 'limit must be an integer from 1 to 100', { param: 'limit' });
  const after = single(query.after) ?? null;
  if (after !== null && !parseCursor(after)) throw new ApiError(400, 'invalid_request', 'after is not a valid cursor', { param: 'after' });
  return { after, limit };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[value.length - 1] : value;
}

/** The list envelope every paginated endpoint answers. */
export function listBody<T>(data: readonly T[], hasMore: boolean, cursorOf: (item: T) => string): { object: 'list'; data: readonly T[]; has_more: boolean; next_after: string | null } {
  const last = data[data.length - 1];
  return { object: 'list', data, has_more: hasMore, next_after: hasMore && last !== undefined ? cursorOf(last) : null };
}
