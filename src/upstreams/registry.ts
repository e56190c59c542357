import fs from 'node:fs';
import path from 'node:path';
import type { Catalog, ModelEntry } from '../billing/catalog';
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
 * OpenAI channel, as long as the log holds no channel (withdrawFallback). With CHANNELS set, only those channels serve: a model whose channel CHANNELS
 * leaves out is unavailable (Catalog.bindChannels; a warning at start), never sent to the
 * fallback, so a real deployment that forgot a channel does not sell simulated answers. A model
 * whose channel's protocol cannot serve its type is unavailable likewise, said loudly at start.
 */
export class Upstreams {
  /** Channels an operator disabled (setEnabled, from src/channels/directory.ts), with the reason given. */
  private readonly disabled = new Map<string, string>();
  private readonly mendListeners: ((name: string) => void)[] = [];
  /** When each log channel's current credentials were set (ISO time), as update was told. */
  private sinces: ReadonlyMap<string, string> = new Map();
  /** Called after update() replaced the channel set. */
  private readonly changeListeners: (() => void)[] = [];

  private constructor(
    private readonly channels: Map<string, Channel>,
    /** The fallback provider's base URL, while it serves. */
    private fallback: string | null,
    private readonly fallbackTimeoutMs: number,
    private readonly observe: UpstreamObserver,
    /** The simulator's channels, while the fallback serves (no CHANNELS, and a log that never held a channel): they stay out of the log. */
    private fallbackChannels: readonly ChannelConfig[],
  ) {}

  /** The fallback provider's base URL, while it serves. */
  get fallbackUrl(): string | null {
    return this.fallback;
  }

  get fallbackConfigs(): readonly ChannelConfig[] {
    return this.fallbackChannels;
  }

  /** The log holds channels (src/channels/directory.ts): the fallback serves nothing more; the next update() drops its channels. */
  withdrawFallback(): void {
    this.fallback = null;
    this.fallbackChannels = [];
  }

  static async start(config: Config, catalog: Catalog, logger: Logger, observe: UpstreamObserver = () => undefined, fallback?: FallbackUpstream): Promise<Upstreams> {
    let configs: readonly ChannelConfig[];
    let fallbackUrl: string | null = null;
    if (config.channels) {
      configs = config.channels;
      const missing = [...catalog.channels()].filter((name) => !configs.some((c) => c.name === name));
      if (missing.length > 0) {
        // The README's one-channel example names only `default`; the catalog's search and agent
        // models use channels of their own. Their models are not sold (Catalog), said loudly once.
        const models = catalog.all().filter((m) => m.channels.some((c) => missing.includes(c.name))).map((m) => m.id);
        logger.warn({ channels: missing, models }, 'channels the catalog names are missing from CHANNELS: their models are unavailable (or, with other channels, served by those alone) until those channels are configured');
      }
    } else {
      if (!fallback) throw new Error('no CHANNELS configured and no fallback provider to serve the models');
      fallbackUrl = await fallback();
      logger.info({ url: fallbackUrl }, 'no CHANNELS configured: serving every model from the simulated providers');
      configs = channelConfigs(channelsServedBy(fallbackUrl, catalog, { timeoutMs: config.upstreamTimeoutMs, maxConcurrency: FALLBACK_CONCURRENCY }), 'the fallback channels');
    }
    const upstreams = new Upstreams(new Map(configs.map((c) => [c.name, new Channel(c, observe)])), fallbackUrl, config.upstreamTimeoutMs, observe, fallbackUrl === null ? [] : configs);
    const mismatched = catalog.all().flatMap((m) => m.channels.filter((c) => upstreams.hasChannel(c.name) && !upstreams.canServe(c.name, m.type)).map((c) => ({ model: m, channel: c.name })));
    if (mismatched.length > 0) {
      logger.warn(
        { models: mismatched.map(({ model: m, channel }) => ({ model: m.id, type: m.type, channel, protocol: upstreams.protocolName(channel) })) },
        "models whose channel's protocol cannot serve their type are unavailable: name a channel of a protocol that serves it (docs/providers.md)",
      );
    }
    upstreams.watchMixedProtocols(catalog, logger);
    catalog.bindChannels((model) => upstreams.protocolOf(model) !== null);
    return upstreams;
  }

  /** Whether `channel(name)` answers: a configured channel, or any name when the fallback serves. */
  hasChannel(name: string): boolean {
    return this.channels.has(name) || this.fallbackUrl !== null;
  }

  /** The protocol a channel speaks (one the fallback would make speaks OpenAI's). */
  protocolName(name: string): string {
    return this.channels.get(name)?.config.protocol ?? 'openai';
  }

  /** Whether a model of `type` on channel `name` can be sold: the channel answers and its protocol serves the type. */
  canServe(name: string, type: string): boolean {
    if (!this.hasChannel(name)) return false;
    return PROTOCOLS.get(this.protocolName(name))?.serves.includes(type) ?? false;
  }

  /**
   * The one protocol a model is served by: that of its channels that are configured and can serve
   * its type. Null when none can, or when they speak several: a feature chooses its adapter (and
   * with it what a request may ask, and who keeps a conversation) by the model's protocol before
   * the router picks the channel, so a model of mixed protocols is not sold (Catalog.bindChannels).
   */
  protocolOf(model: Pick<ModelEntry, 'channels' | 'type'>): string | null {
    let protocol: string | null = null;
    for (const route of model.channels) {
      if (!this.canServe(route.name, model.type)) continue;
      const spoken = this.protocolName(route.name);
      if (protocol !== null && spoken !== protocol) return null;
      protocol = spoken;
    }
    return protocol;
  }

  /**
   * Says loudly, at start and whenever the channel set changes (a protocol changed through the
   * admin API), which models are unavailable because their channels speak several protocols; once
   * per change of that list.
   */
  watchMixedProtocols(catalog: Pick<Catalog, 'all'>, logger: Pick<Logger, 'warn' | 'info'>): void {
    let said = '';
    const check = (): void => {
      const mixed = catalog.all().filter((m) => this.mixesProtocols(m));
      const now = mixed.map((m) => m.id).join(',');
      if (now === said) return;
      said = now;
      if (mixed.length === 0) {
        logger.info('no model is served by channels of different protocols any more');
        return;
      }
      logger.warn(
        { models: mixed.map((m) => ({ model: m.id, channels: m.channels.filter((c) => this.canServe(c.name, m.type)).map((c) => ({ channel: c.name, protocol: this.protocolName(c.name) })) })) },
        'models whose channels speak different protocols are unavailable: every channel of a model must speak one protocol (docs/operations.md, Routing)',
      );
    };
    check();
    this.changeListeners.push(check);
  }

  /** Channels of the model that can serve it, speaking more than one protocol between them. */
  private mixesProtocols(model: ModelEntry): boolean {
    return this.protocolOf(model) === null && model.channels.some((c) => this.canServe(c.name, model.type));
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

  /** When the channel's current credentials were set in the log (its rotation or creation); undefined for a channel the log does not hold. */
  credentialsSince(name: string): string | undefined {
    return this.sinces.get(name);
  }

  /** Whether `channel` is its name's channel now: false once an update replaced or removed it (calls in flight keep it). */
  isCurrent(channel: Channel): boolean {
    return this.channels.get(channel.config.name) === channel;
  }

  /** The names of the channels configured now (the fallback's included once asked for). */
  names(): string[] {
    return [...this.channels.keys()];
  }

  /** Whether an operator left the channel enabled (a channel is, until setEnabled says otherwise). */
  isEnabled(name: string): boolean {
    return this.disabled.size === 0 || !this.disabled.has(name);
  }

  /** Why an operator disabled the channel; null when enabled. */
  disabledReason(name: string): string | null {
    return this.disabled.get(name) ?? null;
  }

  /**
   * An operator's enable or disable. Enabling a disabled channel also mends it: what the router
   * learnt of it (a refusal of its credentials, an open circuit, a cooldown) is forgotten.
   */
  setEnabled(name: string, enabled: boolean, reason = 'disabled by an operator'): void {
    if (enabled) {
      // Only a change mends: the directory says every channel's state whenever any channel changes.
      if (this.disabled.delete(name)) this.mend(name);
    } else {
      this.disabled.set(name, reason);
    }
  }

  /** Called with a channel's name whenever it is mended (new configuration, or enabled): the router clears its health. */
  onMended(listener: (name: string) => void): void {
    this.mendListeners.push(listener);
  }

  /**
   * Forgets what the router learnt of a channel (a refusal of its credentials, a cooldown, an
   * open circuit), whatever its state: an operator's word that the channel is well again (PATCH
   * {enabled: true}, always recorded). The directory mends on every enable the log records: by the
   * time it reads the channel's stream, a disable and the enable after it may both be behind it, so
   * setEnabled sees no change.
   */
  mend(name: string): void {
    for (const listener of this.mendListeners) listener(name);
  }

  /**
   * Replaces the whole set of channels (the channels feature calls it when the log changes them).
   * A channel whose configuration is unchanged keeps its object and its pool; a changed one gets a
   * new object (and is mended: its credentials may be the rotated ones a refusal asked for); a
   * removed or replaced one's pool is closed once the calls in flight on it have ended (undici's
   * close waits for them). Calls that already hold the old object finish on it.
   */
  update(configs: readonly ChannelConfig[], credentialsSince: ReadonlyMap<string, string> = new Map()): Promise<void> {
    this.sinces = credentialsSince;
    const next = new Map<string, Channel>();
    const retired: Channel[] = [];
    for (const config of configs) {
      const current = this.channels.get(config.name);
      if (current && sameConfig(current.config, config)) {
        next.set(config.name, current);
      } else {
        next.set(config.name, new Channel(config, this.observe));
        if (current) retired.push(current);
        this.mend(config.name);
      }
    }
    for (const [name, channel] of this.channels) if (!next.has(name)) retired.push(channel);
    this.channels.clear();
    for (const [name, channel] of next) this.channels.set(name, channel);
    for (const listener of this.changeListeners) listener();
    // A pool that fails to close is nobody's to handle: its calls have ended and the object is dropped.
    return Promise.all(retired.map((c) => c.close().catch(() => undefined))).then(() => undefined);
  }

  async close(): Promise<void> {
    await Promise.all([...this.channels.values()].map((c) => c.close()));
  }
}

/** Two configurations alike in everything a call uses (credentials included): JSON of plain data. */
function sameConfig(a: ChannelConfig, b: ChannelConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
