import type { Channel } from '../upstreams/channel';
import { createSeedanceTask, getSeedanceTask, readCreatedSeedanceTask, readSeedanceTask, type SeedanceTaskReading } from '../upstreams/ark/video-tasks';
import type { WireTransport } from '../upstreams/wire';
import type { NormalizedVideoRequest } from './request';

/** A video task as a provider is asked for it: the gateway's request, the provider's model id, images naming the provider's assets. */
export type VideoTaskAsk = NormalizedVideoRequest & { readonly model: string };

/** A provider's task as the video kind reads it: pending, failed with an error, or its video and the usage it reported. */
export type VideoTaskReading = SeedanceTaskReading;

/**
 * What the video kind needs of a provider protocol's adapter: create a task and read it. (The
 * spec gives video tasks no cancel, so the kind never stops one; Ark's adapter can, for when it
 * does.) The adapters build and read the wire (src/upstreams/<protocol>/); this only sends through
 * the channel, which authenticates.
 */
export interface VideoProvider {
  submit(channel: WireTransport, ask: VideoTaskAsk, taskId: string): Promise<{ upstreamId: string }>;
  poll(channel: WireTransport, upstreamId: string): Promise<VideoTaskReading>;
}

/** Volcengine Ark's content-generation tasks (the Seedance classes). */
const ARK: VideoProvider = {
  submit: async (channel, ask, taskId) => readCreatedSeedanceTask(await channel.call(createSeedanceTask(ask, taskId)), channel.name),
  poll: async (channel, upstreamId) => readSeedanceTask(await channel.call(getSeedanceTask(upstreamId)), channel.name),
};

/** The video adapters by the protocol a channel speaks. */
const VIDEO_PROVIDERS: Readonly<Record<string, VideoProvider>> = { ark: ARK };

/** The adapter of a channel's protocol; a channel of a protocol without one is a configuration error the catalog check prevents. */
export function videoProviderOf(channel: Channel): VideoProvider {
  const provider = VIDEO_PROVIDERS[channel.config.protocol];
  if (!provider) throw new Error(`channel ${channel.name} speaks ${channel.config.protocol}, which has no video adapter`);
  return provider;
}
