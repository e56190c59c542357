import type { GatewayContext } from './context';
import { ApiError } from './errors';

/** The `format` query parameter of a list that also answers CSV. */
export const FORMAT = { type: 'string', enum: ['json', 'csv'] } as const;

/** CSV when `format=csv`, or when the client accepts text/csv and not JSON (`format` decides when given). */
export function wantsCsv(ctx: GatewayContext, format: string | undefined): boolean {
  if (format !== undefined) return format === 'csv';
  return ctx.accepts('application/json', 'text/csv') === 'text/csv' && !ctx.get('accept').includes('application/json');
}

/** Answers `csv` (made by accounts/csv toCsv) as a download named `filename`. */
export function sendCsv(ctx: GatewayContext, filename: string, csv: string): void {
  ctx.type = 'text/csv; charset=utf-8';
  ctx.set('content-disposition', `attachment; filename="${filename}"`);
  ctx.body = csv;
}

/** Rows one CSV download may hold: it is built in memory, so a larger one asks for a narrower `from`/`to`. */
export const CSV_MAX_ROWS = 100_000;

/**
 * Every item a paged listing selects, for one CSV: pages of 1,000 until the last; more than
 * CSV_MAX_ROWS is 400 `too_many_entries` (param `from`), nothing being answered.
 */
export async function everyPageForCsv<T, C>(page: (after: C | null, limit: number) => Promise<{ items: readonly T[]; hasMore: boolean }>, cursorOf: (last: T) => C): Promise<T[]> {
  const items: T[] = [];
  for (let after: C | null = null; ; ) {
    const { items: more, hasMore } = await page(after, 1000);
    items.push(...more);
    if (items.length > CSV_MAX_ROWS) throw new ApiError(400, 'too_many_entries', `more than ${CSV_MAX_ROWS} entries match: narrow the range with from and to`, { param: 'from' });
    if (!hasMore || more.length === 0) return items;
    after = cursorOf(more[more.length - 1]!);
  }
}
