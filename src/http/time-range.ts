import { ApiError } from './errors';

/**
 * The `from`/`to` query parameters every list with a time window takes (already validated as
 * date-times by the route's schema): an instant each, and `from` no later than `to`.
 */
export function timeRange(from: string | undefined, to: string | undefined): { from?: Date; to?: Date } {
  const out = { ...(from ? { from: new Date(from) } : {}), ...(to ? { to: new Date(to) } : {}) };
  if (out.from && out.to && out.from > out.to) throw new ApiError(400, 'invalid_request', 'from must not be after to', { param: 'from' });
  return out;
}
