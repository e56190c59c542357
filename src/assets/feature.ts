import type { Upstreams } from '../upstreams/registry';
import type { TaskRouter } from '../tasks/upstream-task';
import type { Config } from '../config';
import type { Clock, FeatureFactory } from '../feature-types';
import { assetKind } from './asset-kind';
import { assetGroupsRouter, type AssetGroupsDeps } from './routes';
import { sessionKind } from './session-kind';

/**
 * Real-person reference assets: verification sessions and the images of verified groups, two
 * task kinds on the task engine; their groups are a core projection (projections/asset-groups.ts).
 */
export type AssetsDeps = AssetGroupsDeps & {
  readonly upstreams: Upstreams;
  readonly router: TaskRouter;
  readonly clock: Clock;
  readonly config: Pick<Config, 'taskPollMs'>;
};

export const assetsFeature: FeatureFactory<AssetsDeps> = (deps) => {
  const common = { catalog: deps.catalog, upstreams: deps.upstreams, router: deps.router, pollMs: deps.config.taskPollMs };
  deps.tasks.register(sessionKind({ ...common, clock: deps.clock }));
  deps.tasks.register(assetKind(common));
  return { routers: [assetGroupsRouter(deps)] };
};
