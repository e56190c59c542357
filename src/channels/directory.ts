import { isChannelEvent } from '../domain/channel/events';
import type { EventStore, GlobalPosition, LogSubscription, RecordedEvent } from '../eventstore/port';
import type { Logger } from '../log';
import type { ChannelConfig } from '../upstreams/channel';
import type { ChannelService } from './service';

/** What the directory drives: the process's channel set (src/upstreams/registry.ts's Upstreams). */
export interface ChannelSink {
  /** The channels the fallback serves when CHANNELS is unset; a channel of the log of the same name replaces one. */
  readonly fallbackConfigs: readonly ChannelConfig[];
  update(configs: readonly ChannelConfig[]): void;
  setEnabled(name: string, enabled: boolean, reason?: string): void;
  /** An operator's enable: what the router learnt of the channel (a refusal of its credentials, a cooldown, a circuit) is forgotten. */
  mend(name: string): void;
}

/**
 * This process's copy of the channels the log records, kept in step with it: every channel event
 * appended by any process reaches the directory with the log's next notification, which loads
 * that channel's stream, opens its credentials and hands the whole set to the upstreams. So a
 * credential rotated through one gateway is used by every gateway from its next call on.
 *
 * Channel streams are read one by one (a channel has few events); the read model only says which
 * channels exist when the directory starts.
 */
export class ChannelDirectory {
  private readonly configs = new Map<string, ChannelConfig>();
  private readonly disabled = new Map<string, string>();
  /** Refreshes run one at a time, in the order the log gave their events. */
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly service: ChannelService,
    private readonly sink: ChannelSink,
    private readonly logger: Logger,
  ) {}

  /**
   * At start, after seeding: the channels this process was configured with (CHANNELS), each then
   * replaced by the log's version. A channel whose credentials this process cannot open (its
   * CHANNEL_SECRETS_KEY differs from the one that sealed them) keeps its CHANNELS version rather
   * than vanishing (reload logs the error).
   */
  load(configured: readonly ChannelConfig[]): Promise<void> {
    for (const config of configured) this.configs.set(config.name, config);
    return this.refresh(configured.map((c) => c.name), 'start');
  }

  /**
   * Follows the log from its head; the read model's channel names, once it has folded that head,
   * are loaded too, for the channels created before this process started. A failed subscription
   * resumes from the last position seen.
   */
  follow(
    store: EventStore,
    readModel: { readonly reached: (position: GlobalPosition, timeoutMs: number) => Promise<boolean>; readonly names: () => Promise<readonly string[]> },
  ): { readonly started: Promise<void>; close(): Promise<void> } {
    let subscription: LogSubscription | null = null;
    let retry: NodeJS.Timeout | null = null;
    const start = async (from: GlobalPosition | null, initial: boolean): Promise<void> => {
      let position = from ?? (await store.headPosition());
      if (this.closed) return;
      const head = position;
      subscription = store.subscribe({
        from: position,
        onBatch: async (events: RecordedEvent[]) => {
          const channelEvents = events.filter(isChannelEvent);
          const names = [...new Set(channelEvents.map((e) => e.data.name))];
          const enabled = channelEvents.filter((e) => e.type === 'ChannelEnabled').map((e) => e.data.name);
          if (names.length > 0) await this.refresh(names, 'log', enabled);
          position = events[events.length - 1]!.position;
        },
      });
      subscription.done.catch((err: unknown) => {
        if (this.closed) return;
        this.logger.warn({ err }, 'channel directory: following the log failed; channel changes wait until it resumes');
        retry = setTimeout(() => void start(position, false).catch(() => undefined), 1000);
        retry.unref();
      });
      if (!initial) return;
      while (head && !this.closed && !(await readModel.reached(head, 1000)));
      if (!this.closed) await this.refresh(await readModel.names(), 'start');
    };
    const begin = (): Promise<void> =>
      start(null, true).catch((err: unknown) => {
        if (this.closed) return;
        // Not fatal: the channels seeded here are loaded already. Without a subscription yet, begin again.
        this.logger.error({ err }, 'channel directory: could not load the channels created before this process started');
        if (subscription) return;
        retry = setTimeout(() => void begin(), 1000);
        retry.unref();
      });
    const started = begin();
    return {
      started,
      close: async () => {
        this.closed = true;
        if (retry) clearTimeout(retry);
        await started;
        await subscription?.close();
        await this.queue;
      },
    };
  }

  /** `enabled`: the channels whose events include an operator's enable, mended whatever the state read now. */
  private refresh(names: readonly string[], cause: 'start' | 'log', enabled: readonly string[] = []): Promise<void> {
    const run = this.queue.then(async () => {
      // Each channel's stream revision now applied: what a reader of the log (a test, an operator) waits for.
      const revisions: Record<string, number> = {};
      for (const name of names) revisions[name] = await this.reload(name);
      this.apply();
      for (const name of enabled) this.sink.mend(name);
      if (cause === 'log') this.logger.info({ channels: revisions }, 'channel directory: applied channel changes from the log');
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Loads one channel's stream and keeps what it says; answers the revision loaded. */
  private async reload(name: string): Promise<number> {
    const { state, revision } = await this.service.load(name);
    if (!state.live) {
      this.configs.delete(name);
      this.disabled.delete(name);
      return revision;
    }
    try {
      this.configs.set(name, this.service.configOf(name, state));
    } catch (err) {
      // Its previous config (if any) keeps serving: a process missing a key must not drop a channel.
      this.logger.error({ channel: name, err: (err as Error).message }, 'channel directory: cannot open the channel\'s credentials; it keeps its previous settings here');
      return revision;
    }
    if (state.enabled) this.disabled.delete(name);
    else this.disabled.set(name, state.disabledReason ?? 'disabled by an operator');
    return revision;
  }

  private apply(): void {
    const fallback = this.sink.fallbackConfigs.filter((c) => !this.configs.has(c.name));
    this.sink.update([...fallback, ...this.configs.values()]);
    for (const name of new Set([...this.configs.keys(), ...fallback.map((c) => c.name)])) {
      const reason = this.disabled.get(name);
      this.sink.setEnabled(name, reason === undefined, reason);
    }
  }
}
