import type { Config } from '../config';
import type { FeatureFactory } from '../feature-types';
import type { UrlSigner } from '../files/signed-urls';
import type { FileStore } from '../files/store';
import type { Logger } from '../log';
import type { Consumer } from '../projections-runtime/consumer';
import type { Upstreams } from '../upstreams/registry';
import type { Router } from '../upstreams/routing/router';
import { FileProbe } from './file-probe';
import { minutesKind } from './kind';
import { minutesRouter, summariesRouter, type MinutesRouteDeps } from './routes';
import { minutesJobHandlers, minutesProcessManager } from './summary-stage';
import { summaryKind } from './summary-kind';

/**
 * Meeting minutes (POST /v1/audio/minutes): `service-minutes` (file ASR, then a report version 2
 * written by a fast chat model of the catalog, with a durable summary timeout) and
 * `partner-minutes` (a partner's minutes API); new summaries on request (POST /v1/summaries).
 * Errors of these endpoints use shape B.
 */
export type MinutesDeps = MinutesRouteDeps & {
  readonly upstreams: Upstreams;
  /** Picks the summary model's channel, failing over before an answer (src/upstreams/routing). */
  readonly router: Pick<Router, 'attempt'>;
  readonly logger: Logger;
  readonly files: FileStore;
  readonly signer: UrlSigner;
  readonly config: Pick<Config, 'taskPollMs' | 'fileUrlAllowPrivateTargets' | 'minutesSummaryTimeoutMs'>;
};

/** The minutes process manager (the durable summary timeout); it needs settings only. */
export function minutesConsumers(config: Pick<Config, 'minutesSummaryTimeoutMs'>): Consumer[] {
  return [minutesProcessManager({ summaryTimeoutMs: config.minutesSummaryTimeoutMs })];
}

export const minutesFeature: FeatureFactory<MinutesDeps> = (deps) => {
  deps.tasks.register(minutesKind({ catalog: deps.catalog, upstreams: deps.upstreams, router: deps.router, pollMs: deps.config.taskPollMs }));
  deps.tasks.register(summaryKind({ catalog: deps.catalog, router: deps.router, loadTask: (stream) => deps.tasks.load(stream), pollMs: deps.config.taskPollMs }));
  const probe = new FileProbe({ files: deps.files, signer: deps.signer, allowPrivateTargets: deps.config.fileUrlAllowPrivateTargets });
  return {
    routers: [minutesRouter(deps, probe), summariesRouter(deps)],
    jobHandlers: minutesJobHandlers({
      engine: deps.tasks,
      catalog: deps.catalog,
      router: deps.router,
      logger: deps.logger,
      summaryTimeoutMs: deps.config.minutesSummaryTimeoutMs,
    }),
    stop: () => probe.close(),
  };
};
