import type { FeatureFactory } from '../gateway';
import { FileProbe } from './file-probe';
import { minutesKind } from './kind';
import { minutesRouter, summariesRouter } from './routes';
import { minutesJobHandlers, minutesProcessManager } from './summary-stage';
import { summaryKind } from './summary-kind';

/**
 * Meeting minutes (POST /v1/audio/minutes): `service-minutes` (file ASR, then a report version 2
 * written by a fast chat model of the catalog, with a durable summary timeout) and
 * `partner-minutes` (a partner's minutes API); new summaries on request (POST /v1/summaries).
 * Errors of these endpoints use shape B.
 */
export const minutesFeature: FeatureFactory = (core) => {
  core.tasks.register(minutesKind({ catalog: core.catalog, upstreams: core.upstreams, pollMs: core.config.taskPollMs }));
  core.tasks.register(summaryKind({ catalog: core.catalog, upstreams: core.upstreams, loadTask: (stream) => core.tasks.load(stream), pollMs: core.config.taskPollMs }));
  const probe = new FileProbe({ files: core.files, signer: core.signer, allowPrivateTargets: core.config.fileUrlAllowPrivateTargets });
  return {
    routers: [minutesRouter(core, probe), summariesRouter(core)],
    consumers: [minutesProcessManager({ summaryTimeoutMs: core.config.minutesSummaryTimeoutMs })],
    jobHandlers: minutesJobHandlers({
      engine: core.tasks,
      catalog: core.catalog,
      upstreams: core.upstreams,
      logger: core.logger,
      summaryTimeoutMs: core.config.minutesSummaryTimeoutMs,
    }),
    errorShapes: [[/^\/v1\/(audio\/minutes|summaries)(\/|$)/, 'minutes']],
    stop: () => probe.close(),
  };
};
