import fs from 'node:fs';
import path from 'node:path';
import type { Catalog } from '../billing/catalog';
import { channelConfigs, type Config } from '../config';
import type { Logger } from '../log';
import { PACKAGE_ROOT } from '../package-root';
import { Channel, type ChannelConfig, type UpstreamObserver } from './channel';
import { PROTOCOLS, protocolNamed } from './protocols';

/**
 * The checked-in channels file: one entry per channel the built-in catalog names, with its
 * protocol, the provider's real base URL and placeholder credentials (docs/providers.md). The
 * fallback (no CHANNELS) serves these very entries from the simulator.
 */
export const EXAMPLE_CHANNELS_FILE = path.join(PACKAGE_ROOT, 'deploy', 'channels.example.json');

/** One entry of a channels document, as CHANNELS takes it (docs/configuration.md). */
export interface ChannelEntry {
  readonly name: string;
  readonly protocol?: string;
  readonly base_url: string;
  readonly api_key?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly volcengine?: Readonly<Record<string, string>>;
  readonly alibaba?: Readonly<Record<string, string>>;
  readonly timeout_ms?: number;
  readonly max_concurrency?: number;
}

export interface FallbackChannelOptions {
  readonly timeoutMs: number;
  readonly maxConcurrency: number;
}

/**
 * The channels file's entries served by the simulator at `simulatorUrl`: each base URL's origin
 * becomes the simulator's, under its protocol's prefix (Ark's
 * `https://ark.cn-beijing.volces.com/api/v3` → `${simulatorUrl}/ark/api/v3`); the credentials stay
 * the file's placeholders, which the simulated providers accept. A channel the catalog names that
 * the file lacks is an OpenAI channel at `${simulatorUrl}/v1`. Tests pass these as CHANNELS.
 */
export function channelsServedBy(simulatorUrl: string, catalog: Catalog, options: FallbackChannelOptions, file = EXAMPLE_CHANNELS_FILE): ChannelEntry[] {
  const listed = readEntries(file).map((entry) => ({ ...entry, base_url: simulatedBaseUrl(simulatorUrl, entry), timeout_ms: options.timeoutMs, max_concurrency: options.maxConcurrency }));
  const names = new Set(listed.map((e) => e.name));
  const missing = [...new Set([...catalog.channels(), 'default'])].filter((name) => !names.has(name));
  return [...listed, ...missing.map((name) => openaiFallbackEntry(simulatorUrl, name, options))];
}

/** A base URL of a channels entry moved onto the simulator, under its protocol's prefix. */
export function simulatedBaseUrl(simulatorUrl: string, entry: Pick<ChannelEntry, 'protocol' | 'base_url'>): string {
  const real = new URL(entry.base_url);
  return `${simulatorUrl}${protocolNamed(entry.protocol ?? 'openai').simulatorPrefix}${real.pathname.replace(/\/$/, '')}`;
}

function openaiFallbackEntry(simulatorUrl: string, name: string, options: FallbackChannelOptions): ChannelEntry {
  return { name, protocol: 'openai', base_url: `${simulatorUrl}/v1`, timeout_ms: options.timeoutMs, max_concurrency: options.maxConcurrency };
}

function readEntries(file: string): ChannelEntry[] {
  const source = `channels file ${file}`;
  const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  // Checked as CHANNELS is, so the file stays a valid CHANNELS value.
  channelConfigs(parsed, source);
  return parsed as ChannelEntry[];
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
 * The channels the catalog's models are served by. With CHANNELS unset, the simulator serves the
 * checked-in channels file (channelsServedBy), and any channel a reloaded catalog adds as an
 * OpenAI channel. With CHANNELS set, only those channels serve: a model whose channel CHANNELS
 * leaves out is unavailable (Catalog.bindChannels; a warning at start), never sent to the
 * fallback, so a real deployment that forgot a channel does not sell simulated answers. A model
 * whose channel's protocol cannot serve its type is unavailable likewise, said loudly at start.
 */
export class Upstreams {
  /** Channels an operator disabled, with the reason (src/channels/directory.ts). */
  private readonly disabled = new Map<string, string>();

  private constructor(
    private readonly channels: Map<string, Channel>,
    /** The fallback provider's base URL, when it serves. */
    readonly fallbackUrl: string | null,
    private readonly fallbackTimeoutMs: number,
    private readonly observe: UpstreamObserver,
    /** The simulator's channels, when the fallback serves (no CHANNELS): they stay out of the log, and a channel of the log of the same name replaces one. */
    readonly fallbackConfigs: readonly ChannelConfig[],
  ) {}

  static async start(config: Config, catalog: Catalog, logger: Logger, observe: UpstreamObserver = () => undefined, fallback?: FallbackUpstream): Promise<Upstreams> {
    let configs: readonly ChannelConfig[];
    let fallbackUrl: string | null = null;
    if (config.channels) {
      configs = config.channels;
      const missing = [...catalog.channels()].filter((name) => !configs.some((c) => c.name === name));
      if (missing.length > 0) {
        // The README's one-channel example names only `default`; the catalog's search and agent
        // models use channels of their own. Their models are not sold (Catalog), said loudly once.
        const models = catalog.all().filter((m) => missing.includes(m.channel)).map((m) => m.id);
        logger.warn({ channels: missing, models }, 'channels the catalog names are missing from CHANNELS: their models are unavailable until those channels are configured');
      }
    } else {
      if (!fallback) throw new Error('no CHANNELS configured and no fallback provider to serve the models');
      fallbackUrl = await fallback();
      logger.info({ url: fallbackUrl }, 'no CHANNELS configured: serving every model from the simulated providers');
      configs = channelConfigs(channelsServedBy(fallbackUrl, catalog, { timeoutMs: config.upstreamTimeoutMs, maxConcurrency: FALLBACK_CONCURRENCY }), 'the fallback channels');
    }
    const upstreams = new Upstreams(new Map(configs.map((c) => [c.name, new Channel(c, observe)])), fallbackUrl, config.upstreamTimeoutMs, observe, fallbackUrl === null ? [] : configs);
    const mismatched = catalog.all().filter((m) => upstreams.hasChannel(m.channel) && !upstreams.canServe(m.channel, m.type));
    if (mismatched.length > 0) {
      logger.warn(
        { models: mismatched.map((m) => ({ model: m.id, type: m.type, channel: m.channel, protocol: upstreams.channel(m.channel).config.protocol })) },
        "models whose channel's protocol cannot serve their type are unavailable: name a channel of a protocol that serves it (docs/providers.md)",
      );
    }
    catalog.bindChannels((channel, type) => upstreams.canServe(channel, type));
    return upstreams;
  }

  /** Whether `channel(name)` answers: a configured channel, or any name when the fallback serves. */
  private hasChannel(name: string): boolean {
    return this.channels.has(name) || this.fallbackUrl !== null;
  }

  /**
   * The whole channel set becomes `configs` (channels managed at run time, src/channels/): a
   * channel whose config is unchanged keeps its pool; a changed or removed one is replaced and its
   * pool closed once its calls in flight end (undici's Pool.close waits for them).
   * Interim: the routing branch (issue 43 part 1) owns this method; it replaces this body.
   */
  update(configs: readonly ChannelConfig[]): void {
    const wanted = new Map(configs.map((c) => [c.name, c]));
    for (const [name, channel] of this.channels) {
      const next = wanted.get(name);
      if (next && JSON.stringify(next) === JSON.stringify(channel.config)) continue;
      this.channels.delete(name);
      void channel.close().catch(() => undefined);
    }
    for (const config of configs) if (!this.channels.has(config.name)) this.channels.set(config.name, new Channel(config, this.observe));
  }

  /** An operator's enable or disable (interim, as `update`): a disabled channel serves nothing. */
  setEnabled(name: string, enabled: boolean, reason = 'disabled by an operator'): void {
    if (enabled) this.disabled.delete(name);
    else this.disabled.set(name, reason);
  }

  /** Whether a model of `type` on channel `name` can be sold: the channel answers and its protocol serves the type. */
  canServe(name: string, type: string): boolean {
    if (!this.hasChannel(name) || this.disabled.has(name)) return false;
    const protocol = this.channels.get(name)?.config.protocol ?? 'openai';
    return PROTOCOLS.get(protocol)?.serves.includes(type) ?? false;
  }

  channel(name: string): Channel {
    let channel = this.channels.get(name);
    if (!channel && this.fallbackUrl !== null) {
      // A channel a reloaded catalog added: the fallback serves it like the others.
      const entry = openaiFallbackEntry(this.fallbackUrl, name, { timeoutMs: this.fallbackTimeoutMs, maxConcurrency: FALLBACK_CONCURRENCY });
      channel = new Channel(channelConfigs([entry], 'the fallback channels')[0]!, this.observe);
      this.channels.set(name, channel);
    }
    if (!channel) throw new Error(`channel ${name} is not configured`);
    return channel;
  }

  async close(): Promise<void> {
    await Promise.all([...this.channels.values()].map((c) => c.close()));
  }
}
