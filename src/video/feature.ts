import type { Config } from '../config';
import type { FeatureFactory } from '../feature-types';
import type { Upstreams } from '../upstreams/registry';
import type { TaskRouter } from '../tasks/upstream-task';
import { videoKind } from './kind';
import { videoRouter, type VideoRouteDeps } from './routes';

/** Video generation tasks: polled, or delivered by signed webhook; the draft flow. */
export type VideoDeps = VideoRouteDeps & {
  readonly upstreams: Upstreams;
  readonly router: TaskRouter;
  readonly config: Pick<Config, 'videoUrlTtlMs' | 'taskPollMs'>;
};

export const videoFeature: FeatureFactory<VideoDeps> = (deps) => {
  deps.tasks.register(videoKind({ catalog: deps.catalog, upstreams: deps.upstreams, router: deps.router, clock: deps.clock, videoUrlTtlMs: deps.config.videoUrlTtlMs, pollMs: deps.config.taskPollMs }));
  return { routers: [videoRouter(deps)] };
};
