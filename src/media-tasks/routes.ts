import Router from '@koa/router';
import { readJson } from '../http/body';
import { authOf, type GatewayContext, type GatewayState } from '../http/context';
import { resolveModel } from '../http/models-access';
import { specStatuses } from '../http/routing';
import { createTask, nothingOutside, type CreationPolicy, type TaskDraft } from '../tasks/creation';
import type { TaskKindCodec } from '../tasks/kind';
import { cancelTask, readPolledTask, type TaskReadDeps } from './common';
import { eraseCharge, eraseModelId, normalizeEraseRequest, parseEraseRequest } from './erase/request';
import { ERASE_CREATION, ERASE_TASK, ERASE_TASK_KIND } from './erase/kind';
import { handleGallery, type GalleryDeps } from './images/gallery';
import { IMAGE_CREATION, IMAGE_TASK, IMAGE_TASK_KIND, type ImageTaskRequest } from './images/kind';
import { imageEstimate, normalizeImageRequest, parseImageRequest } from './images/request';
import { handleImageGeneration, type ImageGenerationDeps } from './images/sync';
import { imagePricing } from './model-types';
import { PollThrottle } from './poll-throttle';
import { PODCAST_CREATION, PODCAST_TASK, PODCAST_TASK_KIND } from './podcasts/kind';
import { normalizePodcastRequest, parsePodcastRequest, podcastEstimate } from './podcasts/request';
import type { Catalog } from '../billing/catalog';
import type { Config } from '../config';
import type { UrlSigner } from '../files/signed-urls';
import type { RateLimiter } from '../http/rate-limit';
import type { FleetLimiter } from '../limits/fleet-limiter';
import type { TaskEngine } from '../tasks/engine';

/** What the image, podcast and erase endpoints use. */
export type MediaTaskDeps = TaskReadDeps &
  GalleryDeps &
  ImageGenerationDeps & {
    readonly tasks: TaskEngine;
    readonly catalog: Catalog;
    readonly rateLimiter: Pick<RateLimiter, 'take'>;
    /** Where the polling limits are counted, across the fleet. */
    readonly limits: Pick<FleetLimiter, 'poll'>;
    readonly signer: UrlSigner;
    readonly config: Pick<Config, 'pollMinIntervalMsImage' | 'pollMinIntervalMsPodcast' | 'pollMinIntervalMsErase' | 'fileUrlAllowPrivateTargets'>;
  };

/**
 * Images (sync, async, gallery), podcasts and subtitle erase. Creation endpoints reserve the
 * estimate and record the task (Idempotency-Key honoured); status endpoints answer the spec's
 * shapes, 404 for unknown ids and other accounts' tasks, 429 when one key polls one task faster
 * than POLL_MIN_INTERVAL_MS_*; podcasts and erase tasks can be cancelled while unfinished.
 */
export function mediaTaskRouter(deps: MediaTaskDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ sensitive: true });
  const throttles: Record<string, PollThrottle> = {
    [IMAGE_TASK_KIND]: new PollThrottle(IMAGE_TASK_KIND, deps.config.pollMinIntervalMsImage, deps.limits),
    [PODCAST_TASK_KIND]: new PollThrottle(PODCAST_TASK_KIND, deps.config.pollMinIntervalMsPodcast, deps.limits),
    [ERASE_TASK_KIND]: new PollThrottle(ERASE_TASK_KIND, deps.config.pollMinIntervalMsErase, deps.limits),
  };

  /** Creates a task of a kind whose checks are all local, answered as it was created (also on an idempotent replay). */
  function create<Request>(ctx: GatewayContext, kind: TaskKindCodec<Request, unknown, unknown>, policy: CreationPolicy, check: () => Promise<TaskDraft<Request>>): Promise<void> {
    return createTask(deps, ctx, {
      kind,
      policy,
      check,
      complete: nothingOutside,
      answer({ row }) {
        const asCreated = { ...row, status: 'queued' as const, updated_at: row.created_at, finished_at: null, result: null, usage: null, archived: null, error: null };
        return deps.tasks.kind(kind.kind).render(asCreated, deps.signer);
      },
    });
  }

  function statusRoutes(path: string, kind: string, label: string, cancellable: boolean): void {
    router.get(`${path}/:taskId`, specStatuses(401, 404, 429), async (ctx) => {
      const row = await readPolledTask(deps, ctx, kind, label, throttles[kind]!);
      ctx.body = deps.tasks.kind(kind).render(row, deps.signer);
    });
    if (!cancellable) return;
    router.post(`${path}/:taskId/cancel`, async (ctx) => {
      const row = await cancelTask(deps, ctx, kind, label);
      ctx.body = deps.tasks.kind(kind).render(row, deps.signer);
    });
  }

  router.post('/v1/images/generations', (ctx) => handleImageGeneration(deps, ctx));

  router.post('/v1/images/async', (ctx) =>
    create(ctx, IMAGE_TASK, IMAGE_CREATION, async () => {
      const body = parseImageRequest(await readJson(ctx));
      const model = resolveModel(deps.catalog, authOf(ctx), body.model, ['image']);
      const normalized = normalizeImageRequest(model, body, 'async');
      const request: ImageTaskRequest = { ...normalized, billing: imagePricing(model).billing };
      return { model, request, estimate: imageEstimate(model, normalized), callback: null };
    }),
  );
  statusRoutes('/v1/images/async', IMAGE_TASK_KIND, 'async image', false);
  router.get('/v1/gallery', (ctx) => handleGallery(deps, ctx));

  router.post('/v1/audio/podcasts', (ctx) =>
    create(ctx, PODCAST_TASK, PODCAST_CREATION, async () => {
      const body = parsePodcastRequest(await readJson(ctx));
      const model = resolveModel(deps.catalog, authOf(ctx), body.model, ['podcast']);
      const request = normalizePodcastRequest(model, body);
      return { model, request, estimate: podcastEstimate(model, request), callback: null };
    }),
  );
  statusRoutes('/v1/audio/podcasts', PODCAST_TASK_KIND, 'podcast', true);

  router.post('/v1/videos/erase-subtitle', (ctx) =>
    create(ctx, ERASE_TASK, ERASE_CREATION, async () => {
      const body = parseEraseRequest(await readJson(ctx));
      const model = resolveModel(deps.catalog, authOf(ctx), eraseModelId(deps.catalog, body), ['subtitle_erase']);
      const request = normalizeEraseRequest(model, body, { allowPrivateTargets: deps.config.fileUrlAllowPrivateTargets });
      return { model, request, estimate: eraseCharge(model, request.billed_seconds).amount, callback: null };
    }),
  );
  statusRoutes('/v1/videos/erase-subtitle', ERASE_TASK_KIND, 'subtitle erase', true);

  return router;
}
