/** The subtitle erase adapters by the protocol a channel speaks (src/upstreams/erase-task.ts): one line per protocol. */
import type { Channel } from './channel';
import type { EraseTaskAdapter } from './erase-task';
import { vodSubtitleErase } from './volcengine-openapi/vod-erase';

const ERASE_ADAPTERS: Readonly<Record<string, EraseTaskAdapter>> = { volcengine_openapi: vodSubtitleErase };

/** The erase adapter of a channel's protocol; a protocol without one cannot serve subtitle erase (its `serves` says so). */
export function eraseAdapterOf(channel: Channel): EraseTaskAdapter {
  const adapter = ERASE_ADAPTERS[channel.config.protocol];
  if (!adapter) throw new Error(`channel ${channel.name} speaks ${channel.config.protocol}, which has no subtitle erase adapter`);
  return adapter;
}
