import type { FeatureFactory } from '../gateway';
import { eraseKind } from './erase/kind';
import { imageTaskKind } from './images/kind';
import { podcastKind } from './podcasts/kind';
import { mediaTaskRouter } from './routes';

/**
 * Images (synchronous, asynchronous, the gallery), podcasts and subtitle erase: three task kinds
 * on the task engine plus one metered synchronous call. The gallery read model is a core
 * projection (projections/gallery.ts) so that audits and rebuilds always cover it.
 */
export const mediaTasksFeature: FeatureFactory = (core) => {
  const common = { catalog: core.catalog, upstreams: core.upstreams, pollMs: core.config.taskPollMs };
  core.tasks.register(imageTaskKind({ ...common, imageUrlTtlMs: core.config.imageUrlTtlMs }));
  core.tasks.register(podcastKind({ ...common, audioUrlTtlMs: core.config.podcastUrlTtlMs }));
  core.tasks.register(eraseKind({ ...common, videoUrlTtlMs: core.config.eraseUrlTtlMs }));
  return { routers: [mediaTaskRouter(core)] };
};
