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
 * A provider that serves every channel CHANNELS leaves out, started on first need: it resolves its
 * base URL. The entry point passes one that starts the upstream simulator, so a fresh clone runs
 * with no provider account; its owner closes it after the gateway.
 */
export type FallbackUpstream = () => Promise<string>;

/**
 * The channels the catalog's models are served by. With CHANNELS unset, the fallback provider
 * serves every channel the catalog names (also one a reloaded catalog adds). With CHANNELS set, a
 * channel the catalog names that CHANNELS leaves out is served by the fallback too (with a warning
 * at start); when CHANNELS lists them all, the fallback is not started and a reload naming another
 * channel is refused (Catalog.requireChannels), so a request never meets a model whose channel is
 * missing. Without a fallback, a catalog channel missing from CHANNELS fails the start.
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
    if (config.channels && (missing.length === 0 || !fallback)) {
      upstreams = new Upstreams(new Map(config.channels.map((c) => [c.name, new Channel(c, observe)])), null, 0, observe);
    } else if (config.channels) {
      // The README's one-channel example names only `default`; the catalog's search and agent
      // models use channels of their own. Those are served by the fallback, said loudly once.
      const url = await fallback!();
      const models = catalog.list().filter((m) => missing.includes(m.channel)).map((m) => m.id);
      logger.warn({ channels: missing, models, url }, 'channels the catalog names are missing from CHANNELS: the fallback provider serves their models (add them to CHANNELS for a real provider)');
      upstreams = new Upstreams(new Map(config.channels.map((c) => [c.name, new Channel(c, observe)])), url, config.upstreamTimeoutMs, observe);
    } else {
      if (!fallback) throw new Error('no CHANNELS configured and no fallback provider to serve the models');
      const url = await fallback();
      logger.info({ url }, 'no CHANNELS configured: serving every model from the fallback provider');
      const options = { timeoutMs: config.upstreamTimeoutMs, maxConcurrency: FALLBACK_CONCURRENCY };
      upstreams = new Upstreams(new Map(channelsServedBy(url, catalog, options).map((c) => [c.name, new Channel(c, observe)])), url, config.upstreamTimeoutMs, observe);
    }
    try {
      catalog.requireChannels((name) => upstreams.serves(name));
    } catch (err) {
      await upstreams.close();
      throw err;
    }
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
