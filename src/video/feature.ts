import type { FeatureFactory } from '../gateway';
import { videoKind } from './kind';
import { videoRouter } from './routes';

/** Video generation tasks: polled, or delivered by signed webhook; the draft flow. */
export const videoFeature: FeatureFactory = (core) => {
  core.tasks.register(videoKind({ catalog: core.catalog, upstreams: core.upstreams, clock: core.clock, videoUrlTtlMs: core.config.videoUrlTtlMs, pollMs: core.config.taskPollMs }));
  return { routers: [videoRouter(core)] };
};
