/**
 * What the simulated search providers (tavily.ts, bocha.ts) share, besides the corpus they search
 * (simulator/corpus.ts): a raw JSON body read as an object (each answers a bad one in its own
 * shape), and the directives a query carries, as the simulator's other APIs take them:
 * `[sim:fail]` (HTTP 500), `[sim:status=NNN]` (HTTP NNN, 400..599), `[sim:retry-after=V]` (sent
 * with either), `[sim:delay=MS]` (before answering). Directives are not search terms.
 */
import type { ServerResponse } from 'node:http';
import { parseDirectives, stripDirectives } from '../directives';
import { waitUnlessGone } from '../http';

/** What a query asks of the simulated provider: a refusal, or a search for its terms. */
export type SearchSteering =
  | { readonly refuse: number; readonly headers: Readonly<Record<string, string>> }
  | { readonly terms: string };

/** The steering of `query`, after its delay; null when the client left during the delay. */
export async function steerSearch(query: string, res: ServerResponse): Promise<SearchSteering | null> {
  const d = parseDirectives(query);
  if (d.delayMs !== undefined && !(await waitUnlessGone(res, d.delayMs))) return null;
  const status = d.status ?? (d.fail ? 500 : undefined);
  if (status !== undefined) return { refuse: status, headers: d.retryAfter !== undefined ? { 'retry-after': d.retryAfter } : {} };
  return { terms: stripDirectives(query).trim() };
}

/** A request body as a JSON object, or null when it is not one. */
export function bodyObject(raw: Buffer | undefined): Record<string, unknown> | null {
  try {
    const body: unknown = JSON.parse(raw?.toString('utf8') ?? '');
    return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
