import Router from '@koa/router';
import type { Core } from '../gateway';
import { readJson } from '../http/body';
import { authOf, endpointOf, type GatewayContext, type GatewayState } from '../http/context';
import { resolveModel } from '../http/models-access';
import { specStatuses } from '../http/routing';
import { idempotencyOf } from '../tasks/idempotency';
import type { TaskKindCodec } from '../tasks/kind';
import { cancelTask, readPolledTask } from './common';
import { eraseCharge, eraseModelId, normalizeEraseRequest, parseEraseRequest } from './erase/request';
import { ERASE_TASK, ERASE_TASK_KIND } from './erase/kind';
import { handleGallery } from './images/gallery';
import { IMAGE_TASK, IMAGE_TASK_KIND, type ImageTaskRequest } from './images/kind';
import { imageEstimate, normalizeImageRequest, parseImageRequest } from './images/request';
import { handleImageGeneration } from './images/sync';
import { imagePricing } from './model-types';
import { PollThrottle } from './poll-throttle';
import { PODCAST_TASK, PODCAST_TASK_KIND } from './podcasts/kind';
import { normalizePodcastRequest, parsePodcastRequest, podcastEstimate } from './podcasts/request';

/**
 * Images (sync, async, gallery), podcasts and subtitle erase. Creation endpoints reserve the
 * estimate and record the task (Idempotency-Key honoured); status endpoints answer the spec's
 * shapes, 404 for unknown ids and other accounts' tasks, 429 when one key polls one task faster
 * than POLL_MIN_INTERVAL_MS_*; podcasts and erase tasks can be cancelled while unfinished.
 */
export function mediaTaskRouter(core: Core): Router<GatewayState> {
  const router = new Router<GatewayState>({ sensitive: true });
  const now = () => core.clock().getTime();
  const throttles: Record<string, PollThrottle> = {
    [IMAGE_TASK_KIND]: new PollThrottle(core.config.pollMinIntervalMsImage, now),
    [PODCAST_TASK_KIND]: new PollThrottle(core.config.pollMinIntervalMsPodcast, now),
    [ERASE_TASK_KIND]: new PollThrottle(core.config.pollMinIntervalMsErase, now),
  };

  /** Reserves, records and answers the task as it was created (also on an idempotent replay). */
  async function create<Request>(ctx: GatewayContext, kind: TaskKindCodec<Request, unknown, unknown>, model: string, request: Request, estimate: number): Promise<void> {
    const auth = authOf(ctx);
    core.rateLimiter.take(auth.keyId, auth.rateLimitPerMinute);
    const { row, replayed } = await core.tasks.create({
      kind,
      accountId: auth.accountId,
      actor: auth.keyId,
      endpoint: endpointOf(ctx),
      model,
      request,
      estimate,
      callback: null,
      idempotency: idempotencyOf(ctx),
      requestId: ctx.state.requestId,
    });
    if (replayed) ctx.set('idempotent-replayed', 'true');
    const asCreated = { ...row, status: 'queued' as const, updated_at: row.created_at, finished_at: null, result: null, usage: null, archived: null, error: null };
    ctx.body = core.tasks.kind(kind.kind).render(asCreated, core.signer);
  }

  function statusRoutes(path: string, kind: string, label: string, cancellable: boolean): void {
    router.get(`${path}/:taskId`, specStatuses(401, 404, 429), async (ctx) => {
      const row = await readPolledTask(core, ctx, kind, label, throttles[kind]!);
      ctx.body = core.tasks.kind(kind).render(row, core.signer);
    });
    if (!cancellable) return;
    router.post(`${path}/:taskId/cancel`, async (ctx) => {
      const row = await cancelTask(core, ctx, kind, label);
      ctx.body = core.tasks.kind(kind).render(row, core.signer);
    });
  }

  router.post('/v1/images/generations', (ctx) => handleImageGeneration(core, ctx));

  router.post('/v1/images/async', async (ctx) => {
    const body = parseImageRequest(await readJson(ctx));
    const model = resolveModel(core.catalog, authOf(ctx), body.model, ['image']);
    const normalized = normalizeImageRequest(model, body, 'async');
    const request: ImageTaskRequest = { ...normalized, billing: imagePricing(model).billing };
    await create(ctx, IMAGE_TASK, model.id, request, imageEstimate(model, normalized));
  });
  statusRoutes('/v1/images/async', IMAGE_TASK_KIND, 'async image', false);
  router.get('/v1/gallery', (ctx) => handleGallery(core, ctx));

  router.post('/v1/audio/podcasts', async (ctx) => {
    const body = parsePodcastRequest(await readJson(ctx));
    const model = resolveModel(core.catalog, authOf(ctx), body.model, ['podcast']);
    const request = normalizePodcastRequest(model, body);
    await create(ctx, PODCAST_TASK, model.id, request, podcastEstimate(model, request));
  });
  statusRoutes('/v1/audio/podcasts', PODCAST_TASK_KIND, 'podcast', true);

  router.post('/v1/videos/erase-subtitle', async (ctx) => {
    const body = parseEraseRequest(await readJson(ctx));
    const model = resolveModel(core.catalog, authOf(ctx), eraseModelId(core.catalog, body), ['subtitle_erase']);
    const request = normalizeEraseRequest(model, body, { allowPrivateTargets: core.config.fileUrlAllowPrivateTargets });
    await create(ctx, ERASE_TASK, model.id, request, eraseCharge(model, request.billed_seconds).amount);
  });
  statusRoutes('/v1/videos/erase-subtitle', ERASE_TASK_KIND, 'subtitle erase', true);

  return router;
}
