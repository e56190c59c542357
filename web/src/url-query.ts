import { useEffect, useState } from 'react';
import { filtersIn, type FilterRule } from './filters';

/**
 * A page's filters kept in the address's query (?type=settlement&key=key_…), so that a reload, a
 * shared link or going back to the page shows what it showed. Writing replaces the current history
 * entry rather than adding one: Back leaves the page, as it does elsewhere.
 */
export function readQuery<K extends string>(names: readonly K[]): Record<K, string> {
  const params = new URLSearchParams(window.location.search);
  return Object.fromEntries(names.map((name) => [name, params.get(name) ?? ''])) as Record<K, string>;
}

/** Sets the given parameters (an empty value removes its parameter); the others stay. */
export function writeQuery(values: Readonly<Record<string, string>>): void {
  const params = new URLSearchParams(window.location.search);
  for (const [name, value] of Object.entries(values)) {
    if (value) params.set(name, value);
    else params.delete(name);
  }
  const search = params.toString();
  window.history.replaceState(window.history.state, '', `${window.location.pathname}${search ? `?${search}` : ''}${window.location.hash}`);
}

/** The page's filters in the address, as far as they are filters (web/src/filters.ts). */
export function filtersFromAddress<K extends string>(rules: Readonly<Record<K, FilterRule>>): Record<K, string> {
  return filtersIn(window.location.search, rules);
}

/** The filters as state that follows the address (filtersFromAddress), and `keep` to change them (writeQuery). */
export function useUrlQuery<K extends string>(rules: Readonly<Record<K, FilterRule>>): { values: Record<K, string>; keep: (next: Record<K, string>) => void } {
  const [values, setValues] = useState(() => filtersFromAddress(rules));
  useEffect(() => {
    const update = () => setValues(filtersFromAddress(rules));
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const keep = (next: Record<K, string>) => {
    writeQuery(next);
    setValues(next);
  };
  return { values, keep };
}

