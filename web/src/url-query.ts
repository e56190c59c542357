import { useEffect, useState } from 'react';

/** The named parameters of the page's URL query, each '' when absent. */
function read<K extends string>(names: readonly K[]): Record<K, string> {
  const params = new URLSearchParams(window.location.search);
  return Object.fromEntries(names.map((name) => [name, params.get(name) ?? ''])) as Record<K, string>;
}

/**
 * Filters kept in the page's URL query, so that a reload or a shared link shows the same view:
 * `values` as the URL has them, and `keep` writing new ones (empty ones left out) in place of the
 * current history entry.
 */
export function useUrlQuery<K extends string>(names: readonly K[]): { values: Record<K, string>; keep: (next: Record<K, string>) => void } {
  const [values, setValues] = useState(() => read(names));
  useEffect(() => {
    const update = () => setValues(read(names));
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const keep = (next: Record<K, string>) => {
    const params = new URLSearchParams();
    for (const name of names) if (next[name] !== '') params.set(name, next[name]);
    const search = params.toString();
    window.history.replaceState(null, '', `${window.location.pathname}${search ? `?${search}` : ''}`);
    setValues(next);
  };
  return { values, keep };
}
