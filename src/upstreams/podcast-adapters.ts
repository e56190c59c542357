/** The podcast adapters by the protocol a channel speaks (src/upstreams/podcast-synthesis.ts): one line per protocol. */
import type { Channel } from './channel';
import type { PodcastSynthesisAdapter } from './podcast-synthesis';
import { volcenginePodcasts } from './volcengine-speech/podcast';

const PODCAST_ADAPTERS: Readonly<Record<string, PodcastSynthesisAdapter>> = { volcengine_podcast: volcenginePodcasts };

/** The podcast adapter of a channel's protocol; a protocol without one cannot serve podcasts (its `serves` says so). */
export function podcastAdapterOf(channel: Channel): PodcastSynthesisAdapter {
  const adapter = PODCAST_ADAPTERS[channel.config.protocol];
  if (!adapter) throw new Error(`channel ${channel.name} speaks ${channel.config.protocol}, which has no podcast adapter`);
  return adapter;
}
