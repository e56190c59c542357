import { addDays, startOfDayIn } from './format';

/**
 * What a page's filter may hold (the API answers anything else with a 400). Filters taken from the
 * address (web/src/url-query.ts) keep only what their rule accepts, so an edited or outdated
 * address shows the page without that filter rather than on an error until someone edits it.
 */
export type FilterRule = (value: string) => boolean;

/** Free text as the API's filters take it (their `maxLength`). */
export const filterText: FilterRule = (value) => value.length <= 200;

/** One of the values the API knows (a type, an outcome, a status). */
export function oneOf(values: readonly string[]): FilterRule {
  return (value) => values.includes(value);
}

/** The filters a query string (`?outcome=settled&from=…`) names, as far as their rules accept them; '' for none. */
export function filtersIn<K extends string>(search: string, rules: Readonly<Record<K, FilterRule>>): Record<K, string> {
  const params = new URLSearchParams(search);
  return Object.fromEntries(
    Object.entries<FilterRule>(rules).map(([name, accepts]) => {
      const value = params.get(name) ?? '';
      return [name, value !== '' && accepts(value) ? value : ''];
    }),
  ) as Record<K, string>;
}

/**
 * Day filters as the API's instants: both days are included and read in `timeZone`, so `from` is
 * the first instant of its day there and `to` (which the API takes as exclusive) the first instant
 * of the day after. Every page's "From day" and "To day (included)" mean this.
 */
export function setDayFilters(params: URLSearchParams, days: { readonly from: string; readonly to: string }, timeZone: string): void {
  if (days.from) params.set('from', startOfDayIn(days.from, timeZone).toISOString());
  if (days.to) params.set('to', startOfDayIn(addDays(days.to, 1), timeZone).toISOString());
}
