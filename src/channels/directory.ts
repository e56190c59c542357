import { isChannelEvent } from '../domain/channel/events';
import { followLog, type LogFollower } from '../eventstore/follow-log';
import type { EventStore, GlobalPosition, RecordedEvent } from '../eventstore/port';
import type { Logger } from '../log';
import type { ChannelConfig } from '../upstreams/channel';
import type { ChannelService } from './service';

/** What the directory drives: the process's channel set (src/upstreams/registry.ts's Upstreams). */
export interface ChannelSink {
  /** The channels the fallback serves when CHANNELS is unset, while the log holds no channel. */
  readonly fallbackConfigs: readonly ChannelConfig[];
  /** `credentialsSince`: when each channel's current credentials were set in the log (its rotation or creation). */
  update(configs: readonly ChannelConfig[], credentialsSince: ReadonlyMap<string, string>): void;
  /** The log holds (or held) a channel: the fallback serves no channel from now on, not even one a reloaded catalog adds. */
  withdrawFallback(): void;
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
  private readonly credentialsSince = new Map<string, string>();
  /**
   * Whether the log holds or held any channel (a deleted one counts). From then on the log alone
   * says what serves: a simulated channel standing in for a missing or deleted real one would sell
   * simulated answers at real prices, so the fallback serves only a log that never held a channel.
   */
  private logHoldsChannels = false;
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
   * are loaded too, for the channels created before this process started. `started` resolves once
   * they are applied (a failure is retried until they are: src/eventstore/follow-log.ts).
   */
  follow(
    store: EventStore,
    readModel: { readonly reached: (position: GlobalPosition, timeoutMs: number) => Promise<boolean>; readonly names: () => Promise<readonly string[]> },
  ): LogFollower {
    return followLog(store, {
      name: 'channel directory',
      meanwhile: 'channel changes wait',
      logger: this.logger,
      onBatch: async (events: RecordedEvent[]) => {
        const channelEvents = events.filter(isChannelEvent);
        const names = [...new Set(channelEvents.map((e) => e.data.name))];
        const enabled = channelEvents.filter((e) => e.type === 'ChannelEnabled').map((e) => e.data.name);
        if (names.length > 0) await this.refresh(names, 'log', enabled);
      },
      catchUp: async (head) => {
        while (head && !this.closed && !(await readModel.reached(head, 1000)));
        if (!this.closed) await this.refresh(await readModel.names(), 'start');
      },
      onClose: async () => {
        this.closed = true;
        await this.queue;
      },
    });
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
    if (state.everCreated) this.logHoldsChannels = true;
    if (!state.live) {
      this.configs.delete(name);
      this.disabled.delete(name);
      this.credentialsSince.delete(name);
      return revision;
    }
    try {
      this.configs.set(name, this.service.configOf(name, state));
      const since = state.credentialsRotatedAt ?? state.createdAt;
      if (since === null) this.credentialsSince.delete(name);
      else this.credentialsSince.set(name, since);
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
    if (this.logHoldsChannels && this.sink.fallbackConfigs.length > 0) {
      this.logger.warn('channel directory: the log holds channels, so the simulated providers serve none from now on: only the log\'s channels serve');
      this.sink.withdrawFallback();
    }
    const fallback = this.logHoldsChannels ? [] : this.sink.fallbackConfigs;
    this.sink.update([...fallback, ...this.configs.values()], new Map(this.credentialsSince));
    for (const name of new Set([...this.configs.keys(), ...fallback.map((c) => c.name)])) {
      const reason = this.disabled.get(name);
      this.sink.setEnabled(name, reason === undefined, reason);
    }
  }
}
