import type { Pool } from 'pg';
import type { Config } from '../config';
import type { EventStore } from '../eventstore/port';
import type { FeatureFactory } from '../feature-types';
import type { UrlSigner } from '../files/signed-urls';
import type { FileStore } from '../files/store';
import type { Logger } from '../log';
import type { ConsumerProgress } from '../projections-runtime/progress';
import { filesRouter, type UploadRouteDeps } from './routes';
import { UploadService } from './service';

/** File uploads (POST /v1/files and the owner's reads and deletes); the `files` read model is a core projection. */
export type UploadsDeps = UploadRouteDeps & {
  readonly pool: Pool;
  readonly store: EventStore;
  readonly logger: Logger;
  readonly progress: ConsumerProgress;
  readonly files: FileStore;
  readonly signer: UrlSigner;
  readonly config: Pick<Config, 'projectionWaitMs' | 'uploadUrlTtlMs'>;
};

export const filesFeature: FeatureFactory<UploadsDeps> = (deps) => {
  const uploads = new UploadService({
    pool: deps.pool,
    store: deps.store,
    logger: deps.logger,
    progress: deps.progress,
    files: deps.files,
    signer: deps.signer,
    clock: deps.clock,
    projectionWaitMs: deps.config.projectionWaitMs,
    urlTtlMs: deps.config.uploadUrlTtlMs,
  });
  return { routers: [filesRouter(deps, uploads)] };
};
