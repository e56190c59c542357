import { parseDirectives, stripDirectives } from '../../upstreams/simulator/directives';
import { DIMENSIONS } from './dimensions';

/**
 * Simulator directives of the risk endpoint, written in the last user message. The gateway builds
 * the search queries and the writer prompt itself, so it translates them, and only when the
 * channels are served by the built-in simulator (a real provider never sees a `[sim:…]` marker):
 * - `[sim:search-fail=<targets>]`: `identity`, `all` or dimension data types (comma-separated);
 *   those searches carry `[sim:fail]` to the search simulator (a cached answer is reused first).
 * - `[sim:writer-<directive>]`: `<directive>` goes to the writer's prompt, e.g. `[sim:writer-fail]`
 *   → `[sim:fail]`, `[sim:writer-tokens=5]` → `[sim:tokens=5]`, `[sim:writer-stall]` → `[sim:stall]`.
 */
export interface RiskDirectives {
  /** The directive to add to a search, or undefined. */
  searchDirective(target: string): string | undefined;
  /** Directives to append to the writer's prompt ('' for none). */
  readonly writer: string;
}

const NONE: RiskDirectives = { searchDirective: () => undefined, writer: '' };

export function riskDirectives(lastUserText: string, simulated: boolean): RiskDirectives {
  if (!simulated) return NONE;
  const raw = parseDirectives(lastUserText).raw;
  const failing = new Set(typeof raw['search-fail'] === 'string' ? raw['search-fail'].split(',').map((t) => t.trim()) : []);
  if (failing.has('all')) {
    failing.add('identity');
    for (const d of DIMENSIONS) failing.add(d.data_type);
  }
  const writer = Object.entries(raw)
    .filter(([key]) => key.startsWith('writer-'))
    .map(([key, value]) => `[sim:${key.slice('writer-'.length)}${value === true ? '' : `=${value}`}]`)
    .join(' ');
  return { searchDirective: (target) => (failing.has(target) ? '[sim:fail]' : undefined), writer };
}

export { stripDirectives };
