import type { Config } from '../config';
import type { FeatureFactory } from '../feature-types';
import type { FileStore } from '../files/store';
import type { Logger } from '../log';
import { isTerminal } from '../tasks/decider';
import { taskStream } from '../tasks/events';
import type { Upstreams } from '../upstreams/registry';
import { eraseKind } from './erase/kind';
import { imageTaskKind } from './images/kind';
import { PODCAST_TASK_KIND, podcastKind } from './podcasts/kind';
import { mediaTaskRouter, type MediaTaskDeps } from './routes';

/**
 * Images (synchronous, asynchronous, the gallery), podcasts and subtitle erase: three task kinds
 * on the task engine plus one metered synchronous call. The gallery read model is a core
 * projection (projections/gallery.ts) so that audits and rebuilds always cover it.
 */
export type MediaTasksDeps = MediaTaskDeps & {
  readonly upstreams: Upstreams;
  /** Podcasts also read back the audio they stage (src/media-tasks/podcasts/audio-file.ts). */
  readonly files: Pick<FileStore, 'put' | 'open' | 'delete'>;
  readonly config: Pick<Config, 'taskPollMs' | 'imageUrlTtlMs' | 'podcastUrlTtlMs' | 'eraseUrlTtlMs'>;
  /** Podcasts log what a provider's refusal said, which the client is not told. */
  readonly logger: Logger;
};

export const mediaTasksFeature: FeatureFactory<MediaTasksDeps> = (deps) => {
  const common = { catalog: deps.catalog, upstreams: deps.upstreams, router: deps.router, pollMs: deps.config.taskPollMs };
  deps.tasks.register(imageTaskKind({ ...common, imageUrlTtlMs: deps.config.imageUrlTtlMs }));
  const unfinished = async (taskId: string) => !isTerminal((await deps.tasks.load(taskStream(PODCAST_TASK_KIND, taskId))).status);
  deps.tasks.register(podcastKind({ ...common, files: deps.files, unfinished, audioUrlTtlMs: deps.config.podcastUrlTtlMs, logger: deps.logger }));
  deps.tasks.register(eraseKind({ ...common, videoUrlTtlMs: deps.config.eraseUrlTtlMs }));
  return { routers: [mediaTaskRouter(deps)] };
};
