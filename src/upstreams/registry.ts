import type { Catalog } from '../billing/catalog';
import type { Config } from '../config';
import type { Logger } from '../log';
import { Channel, type ChannelConfig } from './channel';
import { createSimulator, type ExtraRoute, type Simulator } from './simulator/server';

/** One channel per name the catalog uses (and `default`), all served by one simulator at `baseUrl`. */
export function channelsServedBy(baseUrl: string, catalog: Catalog, options: { timeoutMs: number; maxConcurrency: number }): ChannelConfig[] {
  return [...new Set([...catalog.channels(), 'default'])].map((name) => ({
    name,
    base_url: `${baseUrl}/v1`,
    timeout_ms: options.timeoutMs,
    max_concurrency: options.maxConcurrency,
  }));
}

/**
 * The channels the catalog's models are served by. With CHANNELS unset, one built-in simulator is
 * started in this process and serves every channel the catalog names, so a fresh clone runs with
 * no provider account. With CHANNELS set, every channel the catalog names must be configured.
 */
export class Upstreams {
  private constructor(
    private readonly channels: ReadonlyMap<string, Channel>,
    private readonly simulator: Simulator | null,
    readonly simulatorUrl: string | null,
  ) {}

  static async start(config: Config, catalog: Catalog, logger: Logger): Promise<Upstreams> {
    if (config.channels) {
      const channels = new Map(config.channels.map((c) => [c.name, new Channel(c)]));
      const missing = [...catalog.channels()].filter((name) => !channels.has(name));
      if (missing.length > 0) throw new Error(`the catalog names channels that CHANNELS does not configure: ${missing.join(', ')}`);
      return new Upstreams(channels, null, null);
    }
    const simulator = createSimulator();
    const url = await simulator.listen(0, '127.0.0.1');
    logger.info({ url }, 'no CHANNELS configured: serving every model from the built-in simulator');
    const channels = new Map(channelsServedBy(url, catalog, { timeoutMs: config.upstreamTimeoutMs, maxConcurrency: 256 }).map((c) => [c.name, new Channel(c)]));
    return new Upstreams(channels, simulator, url);
  }

  /** Mounts more simulated provider endpoints (no-op with real channels). */
  addSimulatorRoutes(routes: readonly ExtraRoute[]): void {
    for (const route of routes) this.simulator?.addRoute(route);
  }

  channel(name: string): Channel {
    const channel = this.channels.get(name);
    if (!channel) throw new Error(`channel ${name} is not configured`);
    return channel;
  }

  async close(): Promise<void> {
    await Promise.all([...this.channels.values()].map((c) => c.close()));
    await this.simulator?.close();
  }
}
