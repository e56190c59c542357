import type { Config } from '../config';
import type { FeatureFactory } from '../feature-types';
import type { Upstreams } from '../upstreams/registry';
import { eraseKind } from './erase/kind';
import { imageTaskKind } from './images/kind';
import { podcastKind } from './podcasts/kind';
import { mediaTaskRouter, type MediaTaskDeps } from './routes';

/**
 * Images (synchronous, asynchronous, the gallery), podcasts and subtitle erase: three task kinds
 * on the task engine plus one metered synchronous call. The gallery read model is a core
 * projection (projections/gallery.ts) so that audits and rebuilds always cover it.
 */
export type MediaTasksDeps = MediaTaskDeps & {
  readonly upstreams: Upstreams;
  readonly config: Pick<Config, 'taskPollMs' | 'imageUrlTtlMs' | 'podcastUrlTtlMs' | 'eraseUrlTtlMs'>;
};

export const mediaTasksFeature: FeatureFactory<MediaTasksDeps> = (deps) => {
  const common = { catalog: deps.catalog, upstreams: deps.upstreams, pollMs: deps.config.taskPollMs };
  deps.tasks.register(imageTaskKind({ ...common, imageUrlTtlMs: deps.config.imageUrlTtlMs }));
  deps.tasks.register(podcastKind({ ...common, audioUrlTtlMs: deps.config.podcastUrlTtlMs }));
  deps.tasks.register(eraseKind({ ...common, videoUrlTtlMs: deps.config.eraseUrlTtlMs }));
  return { routers: [mediaTaskRouter(deps)] };
};
