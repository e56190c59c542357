/**
 * A simulated provider: one module per provider under simulator/providers/, reachable the way the
 * real one is: at its protocol's prefix on the one simulator server (src/upstreams/<protocol>/
 * protocol.ts `simulatorPrefix`, the prefix the fallback rewrites base URLs onto), then the real
 * base URL's path (Ark's `/api/v3`), then the provider's own paths.
 */
import { protocolNamed } from '../../src/upstreams/protocols';
import type { ExtraRoute, SocketRoute } from '../route';

export interface SimulatedProvider {
  /** The protocol it speaks (src/upstreams/protocols.ts). */
  readonly protocol: string;
  /** What it simulates, for `npm run simulator`'s list. */
  readonly title: string;
  /** The path of the real provider's base URL (`/api/v3`), served under the protocol's prefix. */
  readonly basePath: string;
  /** Its routes, paths relative to the base URL (`/contents/generations/tasks/:id`). */
  routes(): readonly ExtraRoute[];
  /** Its WebSocket endpoints, paths relative to the base URL (`/sami/podcasttts`). */
  sockets?(): readonly SocketRoute[];
}

/** Where a provider's base URL is on the simulator: `/ark/api/v3`. */
export function mountPath(provider: SimulatedProvider): string {
  return `${protocolNamed(provider.protocol).simulatorPrefix}${provider.basePath}`;
}

/** The provider's routes at their full paths on the simulator. */
export function mounted(provider: SimulatedProvider): ExtraRoute[] {
  return provider.routes().map((route) => ({ ...route, path: `${mountPath(provider)}${route.path}` }));
}

/** The provider's WebSocket endpoints at their full paths on the simulator. */
export function mountedSockets(provider: SimulatedProvider): SocketRoute[] {
  return (provider.sockets?.() ?? []).map((route) => ({ ...route, path: `${mountPath(provider)}${route.path}` }));
}
