import type { Catalog } from '../billing/catalog';
import type { Config } from '../config';
import type { Logger } from '../log';
import { Channel, type ChannelConfig, type UpstreamObserver } from './channel';

/** One channel per name the catalog uses (and `default`), all served by one provider at `baseUrl`. */
export function channelsServedBy(baseUrl: string, catalog: Catalog, options: FallbackChannelOptions): ChannelConfig[] {
  return [...new Set([...catalog.channels(), 'default'])].map((name) => fallbackChannel(baseUrl, name, options));
}

export interface FallbackChannelOptions {
  readonly timeoutMs: number;
  readonly maxConcurrency: number;
}

function fallbackChannel(baseUrl: string, name: string, options: FallbackChannelOptions): ChannelConfig {
  return { name, base_url: `${baseUrl}/v1`, timeout_ms: options.timeoutMs, max_concurrency: options.maxConcurrency };
}

/** The concurrency limit of each channel the fallback provider serves. */
const FALLBACK_CONCURRENCY = 256;

/**
 * A provider that serves every channel when CHANNELS is unset, started on first need: it resolves
 * its base URL. The entry point passes one that starts the upstream simulator, so a fresh clone
 * runs with no provider account; its owner closes it after the gateway.
 */
export type FallbackUpstream = () => Promise<string>;

/**
 * The channels the catalog's models are served by. With CHANNELS unset, the fallback provider
 * serves every channel the catalog names (also one a reloaded catalog adds). With CHANNELS set,
 * only those channels serve: a model whose channel CHANNELS leaves out is unavailable
 * (Catalog.bindChannels; a warning at start), never sent to the fallback, so a real deployment
 * that forgot a channel does not sell simulated answers.
 */
export class Upstreams {
  private constructor(
    private readonly channels: Map<string, Channel>,
    /** The fallback provider's base URL, when it serves. */
    readonly fallbackUrl: string | null,
    private readonly fallbackTimeoutMs: number,
    private readonly observe: UpstreamObserver,
  ) {}

  static async start(config: Config, catalog: Catalog, logger: Logger, observe: UpstreamObserver = () => undefined, fallback?: FallbackUpstream): Promise<Upstreams> {
    let upstreams: Upstreams;
    const missing = config.channels ? [...catalog.channels()].filter((name) => !config.channels!.some((c) => c.name === name)) : [];
    if (config.channels && missing.length === 0) {
      upstreams = new Upstreams(new Map(config.channels.map((c) => [c.name, new Channel(c, observe)])), null, 0, observe);
    } else if (config.channels) {
      // The README's one-channel example names only `default`; the catalog's search and agent
      // models use channels of their own. Their models are not sold (Catalog), said loudly once.
      const models = catalog.list().filter((m) => missing.includes(m.channel)).map((m) => m.id);
      logger.warn({ channels: missing, models }, 'channels the catalog names are missing from CHANNELS: their models are unavailable until those channels are configured');
      upstreams = new Upstreams(new Map(config.channels.map((c) => [c.name, new Channel(c, observe)])), null, 0, observe);
    } else {
      if (!fallback) throw new Error('no CHANNELS configured and no fallback provider to serve the models');
      const url = await fallback();
      logger.info({ url }, 'no CHANNELS configured: serving every model from the fallback provider');
      const options = { timeoutMs: config.upstreamTimeoutMs, maxConcurrency: FALLBACK_CONCURRENCY };
      upstreams = new Upstreams(new Map(channelsServedBy(url, catalog, options).map((c) => [c.name, new Channel(c, observe)])), url, config.upstreamTimeoutMs, observe);
    }
    catalog.bindChannels((name) => upstreams.serves(name));
    return upstreams;
  }

  /** Whether `channel(name)` answers: a configured channel, or any name when the fallback serves. */
  serves(name: string): boolean {
    return this.channels.has(name) || this.fallbackUrl !== null;
  }

  channel(name: string): Channel {
    let channel = this.channels.get(name);
    if (!channel && this.fallbackUrl !== null) {
      // A channel a reloaded catalog added: the fallback serves it like the others.
      channel = new Channel(fallbackChannel(this.fallbackUrl, name, { timeoutMs: this.fallbackTimeoutMs, maxConcurrency: FALLBACK_CONCURRENCY }), this.observe);
      this.channels.set(name, channel);
    }
    if (!channel) throw new Error(`channel ${name} is not configured`);
    return channel;
  }

  async close(): Promise<void> {
    await Promise.all([...this.channels.values()].map((c) => c.close()));
  }
}
