/** The video-task adapters by the protocol a channel speaks (src/upstreams/video-task.ts): one line per protocol. */
import { arkVideoTasks } from './ark/video-tasks';
import type { Channel } from './channel';
import { minimaxVideoTasks } from './minimax/video';
import type { VideoTaskAdapter } from './video-task';

const VIDEO_TASK_ADAPTERS: Readonly<Record<string, VideoTaskAdapter>> = { ark: arkVideoTasks, minimax: minimaxVideoTasks };

/** The video-task adapter of a channel's protocol; a protocol without one cannot serve video (its `serves` says so). */
export function videoTaskAdapterOf(channel: Channel): VideoTaskAdapter {
  const adapter = VIDEO_TASK_ADAPTERS[channel.config.protocol];
  if (!adapter) throw new Error(`channel ${channel.name} speaks ${channel.config.protocol}, which has no video-task adapter`);
  return adapter;
}
