import type { Catalog } from '../billing/catalog';
import type { Config } from '../config';
import type { Logger } from '../log';
import { Channel, type ChannelConfig, type UpstreamObserver } from './channel';
import { createSimulator, type ExtraRoute, type Simulator } from './simulator/server';

/** One channel per name the catalog uses (and `default`), all served by one simulator at `baseUrl`. */
export function channelsServedBy(baseUrl: string, catalog: Catalog, options: SimulatedChannelOptions): ChannelConfig[] {
  return [...new Set([...catalog.channels(), 'default'])].map((name) => simulatedChannel(baseUrl, name, options));
}

export interface SimulatedChannelOptions {
  readonly timeoutMs: number;
  readonly maxConcurrency: number;
}

function simulatedChannel(baseUrl: string, name: string, options: SimulatedChannelOptions): ChannelConfig {
  return { name, base_url: `${baseUrl}/v1`, timeout_ms: options.timeoutMs, max_concurrency: options.maxConcurrency };
}

/** The concurrency limit of each channel the built-in simulator serves. */
const SIMULATOR_CONCURRENCY = 256;

/**
 * The channels the catalog's models are served by. With CHANNELS unset, one built-in simulator is
 * started in this process and serves every channel the catalog names (also one a reloaded catalog
 * adds), so a fresh clone runs with no provider account. With CHANNELS set, a channel the catalog
 * names that CHANNELS leaves out is served by the built-in simulator too (with a warning at
 * start); when CHANNELS lists them all, no simulator runs and a reload naming another channel is
 * unavailable (Catalog.bindChannels), so a request never meets a model whose channel is missing.
 */
export class Upstreams {
  private constructor(
    private readonly channels: Map<string, Channel>,
    private readonly simulator: Simulator | null,
    readonly simulatorUrl: string | null,
    private readonly simulatorTimeoutMs: number,
    private readonly observe: UpstreamObserver,
  ) {}

  static async start(config: Config, catalog: Catalog, logger: Logger, observe: UpstreamObserver = () => undefined): Promise<Upstreams> {
    let upstreams: Upstreams;
    const missing = config.channels ? [...catalog.channels()].filter((name) => !config.channels!.some((c) => c.name === name)) : [];
    if (config.channels && missing.length === 0) {
      upstreams = new Upstreams(new Map(config.channels.map((c) => [c.name, new Channel(c, observe)])), null, null, 0, observe);
    } else if (config.channels) {
      // The README's one-channel example names only `default`; the catalog's search and agent
      // models use channels of their own. Their models are not sold (Catalog), said loudly once.
      const models = catalog.list().filter((m) => missing.includes(m.channel)).map((m) => m.id);
      logger.warn({ channels: missing, models }, 'channels the catalog names are missing from CHANNELS: their models are unavailable until those channels are configured');
      upstreams = new Upstreams(new Map(config.channels.map((c) => [c.name, new Channel(c, observe)])), null, null, 0, observe);
    } else {
      const simulator = createSimulator();
      const url = await simulator.listen(0, '127.0.0.1');
      logger.info({ url }, 'no CHANNELS configured: serving every model from the built-in simulator');
      const options = { timeoutMs: config.upstreamTimeoutMs, maxConcurrency: SIMULATOR_CONCURRENCY };
      upstreams = new Upstreams(new Map(channelsServedBy(url, catalog, options).map((c) => [c.name, new Channel(c, observe)])), simulator, url, config.upstreamTimeoutMs, observe);
    }
    catalog.bindChannels((name) => upstreams.serves(name));
    return upstreams;
  }

  /** Whether `channel(name)` answers: a configured channel, or any name when the built-in simulator serves. */
  serves(name: string): boolean {
    return this.channels.has(name) || this.simulatorUrl !== null;
  }

  /** Mounts more simulated provider endpoints (no-op with real channels). */
  addSimulatorRoutes(routes: readonly ExtraRoute[]): void {
    for (const route of routes) this.simulator?.addRoute(route);
  }

  channel(name: string): Channel {
    let channel = this.channels.get(name);
    if (!channel && this.simulatorUrl !== null) {
      // A channel a reloaded catalog added: the built-in simulator serves it like the others.
      channel = new Channel(simulatedChannel(this.simulatorUrl, name, { timeoutMs: this.simulatorTimeoutMs, maxConcurrency: SIMULATOR_CONCURRENCY }), this.observe);
      this.channels.set(name, channel);
    }
    if (!channel) throw new Error(`channel ${name} is not configured`);
    return channel;
  }

  async close(): Promise<void> {
    await Promise.all([...this.channels.values()].map((c) => c.close()));
    await this.simulator?.close();
  }
}
