/**
 * A page's filters kept in the address's query (?type=settlement&key=key_…), so that a reload or
 * going back to the page shows what it showed. Applying filters replaces the current history
 * entry rather than adding one: Back leaves the page, as it does elsewhere.
 */
export function readQuery<K extends string>(names: readonly K[]): Record<K, string> {
  const params = new URLSearchParams(window.location.search);
  return Object.fromEntries(names.map((name) => [name, params.get(name) ?? ''])) as Record<K, string>;
}

export function writeQuery(values: Readonly<Record<string, string>>): void {
  const params = new URLSearchParams(window.location.search);
  for (const [name, value] of Object.entries(values)) {
    if (value) params.set(name, value);
    else params.delete(name);
  }
  const search = params.toString();
  window.history.replaceState(window.history.state, '', `${window.location.pathname}${search ? `?${search}` : ''}${window.location.hash}`);
}
