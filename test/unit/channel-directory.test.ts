import { expect } from 'chai';
import { ChannelDirectory, type ChannelSink } from '../../src/channels/directory';
import type { ChannelService } from '../../src/channels/service';
import type { EventStore, RecordedEvent, SubscribeOptions } from '../../src/eventstore/port';
import { createLogger } from '../../src/log';
import type { ChannelConfig } from '../../src/upstreams/channel';

/**
 * The directory reads a channel's stream when the log tells it the channel changed: by then a
 * disable and the enable after it may both be behind it, and the state it reads says enabled, as
 * before the disable. The enable must still mend the channel (forget a refusal of its
 * credentials, a cooldown, a circuit), or an operator's quick disable and enable would do nothing.
 */
describe('channel directory: an enable the log records mends the channel', () => {
  let sinkCalls: string[];
  let deliver: SubscribeOptions['onBatch'];
  let directory: ChannelDirectory;
  let following: { readonly started: Promise<void>; close(): Promise<void> };
  let position = 0;

  const event = (type: string): RecordedEvent => {
    position++;
    return { id: `e${position}`, streamId: 'channel-backup', revision: position, type, data: { name: 'backup', actor: 'admin', at: '2026-12-05T12:00:00Z' }, metadata: {}, position: BigInt(position) as never, recordedAt: new Date() };
  };

  beforeEach(async () => {
    sinkCalls = [];
    const sink: ChannelSink = {
      fallbackConfigs: [],
      update: () => undefined,
      setEnabled: (name, enabled) => sinkCalls.push(`${enabled ? 'enable' : 'disable'} ${name}`),
      mend: (name) => sinkCalls.push(`mend ${name}`),
    };
    // The stream as read after both appends: live and enabled.
    const service = {
      load: async () => ({ state: { live: true, enabled: true, disabledReason: null }, revision: position }),
      configOf: (name: string) => ({ name }) as ChannelConfig,
    } as unknown as ChannelService;
    const store = {
      headPosition: async () => null,
      subscribe: (options: SubscribeOptions) => {
        deliver = options.onBatch;
        return { done: new Promise<void>(() => undefined), close: async () => undefined };
      },
    } as unknown as EventStore;
    directory = new ChannelDirectory(service, sink, createLogger('silent'));
    following = directory.follow(store, { reached: async () => true, names: async () => [] });
    await following.started;
  });
  afterEach(() => following.close());

  it('mends it when the disable and the enable come in one batch, though the state read says enabled', async () => {
    await deliver([event('ChannelDisabled'), event('ChannelEnabled')]);
    expect(sinkCalls).to.deep.equal(['enable backup', 'mend backup']);
  });

  it('mends it when the enable comes in a batch after the disable\'s, which already read enabled', async () => {
    await deliver([event('ChannelDisabled')]);
    await deliver([event('ChannelEnabled')]);
    expect(sinkCalls).to.deep.equal(['enable backup', 'enable backup', 'mend backup']);
  });

  it('mends nothing for other changes', async () => {
    await deliver([event('ChannelChanged'), event('ChannelDisabled')]);
    expect(sinkCalls).to.deep.equal(['enable backup']);
  });
});
