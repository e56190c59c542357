import type { FeatureFactory } from '../gateway';
import { assetKind } from './asset-kind';
import { assetGroupsRouter } from './routes';
import { sessionKind } from './session-kind';

/**
 * Real-person reference assets: verification sessions and the images of verified groups, two
 * task kinds on the task engine; their groups are a core projection (projections/asset-groups.ts).
 */
export const assetsFeature: FeatureFactory = (core) => {
  const common = { catalog: core.catalog, upstreams: core.upstreams, pollMs: core.config.taskPollMs };
  core.tasks.register(sessionKind({ ...common, clock: core.clock }));
  core.tasks.register(assetKind(common));
  return { routers: [assetGroupsRouter(core)] };
};
