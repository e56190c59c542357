import type { FeatureFactory } from '../gateway';
import { filesRouter } from './routes';
import { UploadService } from './service';

/** File uploads (POST /v1/files and the owner's reads and deletes); the `files` read model is a core projection. */
export const filesFeature: FeatureFactory = (core) => {
  const uploads = new UploadService({
    pool: core.pool,
    store: core.store,
    logger: core.logger,
    progress: core.progress,
    files: core.files,
    signer: core.signer,
    clock: core.clock,
    projectionWaitMs: core.config.projectionWaitMs,
    urlTtlMs: core.config.uploadUrlTtlMs,
  });
  return { routers: [filesRouter(core, uploads)] };
};
