/**
 * The upstream simulator as a package: every simulated provider API (chat, Responses, video,
 * images, podcasts, subtitle erase, speech, web search, bots, assets) on one HTTP server. The
 * gateway knows nothing of it: the entry point (src/main.ts), the test support and the benches
 * start it and point channels at its URL, exactly as they would at a real provider.
 */
import { allSimulatorRoutes } from './all-routes';
import { providerBaseUrls, providerSocketRoutes } from './providers';
import { createSimulator, type ExtraRoute, type SocketRoute } from './server';

export type { ExtraRoute, SimContext, SimHandler, SocketRoute } from './server';

export interface RunningSimulator {
  /** Base URL, e.g. `http://127.0.0.1:PORT`; each simulated provider lives under its own prefix (`providers`). */
  readonly url: string;
  /** Each simulated provider's base URL (`${url}/v1` for OpenAI, `${url}/ark/api/v3` for Ark…). */
  readonly providers: readonly { protocol: string; title: string; baseUrl: string }[];
  /** Replaces routes (same method and path) or adds them, e.g. a test's spy around a real route. */
  addRoutes(routes: readonly ExtraRoute[]): void;
  /** Replaces WebSocket endpoints (same path) or adds them. */
  addSocketRoutes(routes: readonly SocketRoute[]): void;
  /** Stops listening and drops every open connection. */
  close(): Promise<void>;
}

export interface StartSimulatorOptions {
  /** Default: an ephemeral port. */
  readonly port?: number;
  /** Default: 127.0.0.1. */
  readonly host?: string;
  /** Mounted after every provider API; an identical method and path replaces one of them. */
  readonly routes?: readonly ExtraRoute[];
}

export async function startSimulator(options: StartSimulatorOptions = {}): Promise<RunningSimulator> {
  const simulator = createSimulator({ routes: [...allSimulatorRoutes(), ...(options.routes ?? [])], sockets: providerSocketRoutes() });
  const url = await simulator.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  return {
    url,
    providers: providerBaseUrls(url),
    addRoutes: (routes) => {
      for (const route of routes) simulator.addRoute(route);
    },
    addSocketRoutes: (routes) => {
      for (const route of routes) simulator.addSocketRoute(route);
    },
    close: () => simulator.close(),
  };
}
