/** The minutes adapters by the protocol a channel speaks (src/upstreams/minutes-task.ts): one line per protocol. */
import type { Channel } from './channel';
import type { MinutesTaskAdapter } from './minutes-task';
import { tingwuMinutes } from './tingwu/offline-tasks';
import { volcengineSpeechMinutes } from './volcengine-speech/recording-recognition';

const MINUTES_ADAPTERS: Readonly<Record<string, MinutesTaskAdapter>> = {
  tingwu: tingwuMinutes,
  volcengine_speech: volcengineSpeechMinutes,
};

/** The minutes adapter of a channel's protocol; a protocol without one cannot serve minutes (its `serves` says so). */
export function minutesAdapterOf(channel: Channel): MinutesTaskAdapter {
  const adapter = MINUTES_ADAPTERS[channel.config.protocol];
  if (!adapter) throw new Error(`channel ${channel.name} speaks ${channel.config.protocol}, which has no minutes adapter`);
  return adapter;
}
