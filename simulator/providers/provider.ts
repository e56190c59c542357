/**
 * A simulated provider: one module per provider under simulator/providers/, reachable the way the
 * real one is: at its protocol's prefix on the one simulator server (src/upstreams/<protocol>/
 * protocol.ts `simulatorPrefix`, the prefix the fallback rewrites base URLs onto), then the real
 * base URL's path (Ark's `/api/v3`), then the provider's own paths.
 */
import { protocolNamed } from '../../src/upstreams/protocols';
import type { ExtraRoute } from '../route';

export interface SimulatedProvider {
  /** The protocol it speaks (src/upstreams/protocols.ts). */
  readonly protocol: string;
  /** What it simulates, for `npm run simulator`'s list. */
  readonly title: string;
  /** The path of the real provider's base URL (`/api/v3`), served under the protocol's prefix. */
  readonly basePath: string;
  /**
   * Its routes, paths relative to the base URL (`/contents/generations/tasks/:id`), and the
   * simulator's own controls of it (a release, its files), whose paths begin with `/sim/` and stay
   * at the simulator's root.
   */
  routes(): readonly ExtraRoute[];
}

/** Where a provider's base URL is on the simulator: `/ark/api/v3`. */
export function mountPath(provider: SimulatedProvider): string {
  return `${protocolNamed(provider.protocol).simulatorPrefix}${provider.basePath}`;
}

/** The provider's routes at their full paths on the simulator (its `/sim/` controls at the root). */
export function mounted(provider: SimulatedProvider): ExtraRoute[] {
  return provider.routes().map((route) => (route.path.startsWith('/sim/') ? route : { ...route, path: `${mountPath(provider)}${route.path}` }));
}
