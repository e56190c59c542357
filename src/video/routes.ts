import Router from '@koa/router';
import type { Core } from '../gateway';
import { readJson } from '../http/body';
import { authOf, endpointOf, type GatewayContext, type GatewayState } from '../http/context';
import { ApiError } from '../http/errors';
import { resolveModel } from '../http/models-access';
import { listBody, pageParams } from '../http/pagination';
import { taskStream } from '../tasks/events';
import { idempotencyOf } from '../tasks/idempotency';
import { UpstreamError } from '../upstreams/channel';
import { checkCallbackTarget } from '../webhooks/target-guard';
import { findAssets } from '../assets/lookup';
import { VIDEO_TASK } from './kind';
import { assetIdsOf, checkAssetRefs, normalizeVideoRequest, parseVideoRequest, videoCharge, type DraftInfo, type NormalizedVideoRequest } from './request';

/** The spec's cap on a video creation body. */
export const VIDEO_BODY_LIMIT = 5 * 1024 * 1024;

export function videoRouter(core: Core): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/v1/videos/generations', sensitive: true });
  const tasks = core.tasks;

  async function draftInfo(accountId: string, id: string): Promise<DraftInfo | null> {
    const row = await tasks.readDecoded(VIDEO_TASK, id, accountId);
    return row ? { model: row.model, status: row.status, createdAt: row.created_at, request: row.request, upstreamId: row.upstream_id } : null;
  }

  router.post('/', async (ctx) => {
    const auth = authOf(ctx);
    const body = parseVideoRequest(await readJson(ctx, { limit: VIDEO_BODY_LIMIT, oversizeStatus: 413 }));
    const model = resolveModel(core.catalog, auth, body.model, ['video']);
    const draftId = body.content.find((c) => c.type === 'draft_task')?.draft_task?.id;
    const account = await core.accounts.get(auth.accountId);
    const normalized = normalizeVideoRequest(model, body, {
      draft: draftId ? await draftInfo(auth.accountId, draftId) : null,
      now: core.clock(),
      accountDefaultMode: account?.settings.default_video_url_mode ?? 'auto',
    });
    const assetIds = assetIdsOf(body.content).map((a) => a.assetId);
    const assetUpstreamIds = assetIds.length > 0 ? checkAssetRefs(body.content, await findAssets(tasks, auth.accountId, assetIds)) : null;
    const request: NormalizedVideoRequest = assetUpstreamIds ? { ...normalized, asset_upstream_ids: assetUpstreamIds } : normalized;
    let callback = null;
    if (body.callback_url) {
      const secret = await core.accounts.webhookSecret(auth.accountId);
      if (request.video_url_mode_explicit && !secret) {
        throw new ApiError(400, 'webhook_secret_required', 'a callback_url with an explicit video_url_mode needs the account webhook secret; create one first', { param: 'callback_url' });
      }
      const refused = await checkCallbackTarget(body.callback_url, core.config.webhookAllowPrivateTargets);
      if (refused) throw new ApiError(400, 'invalid_callback_url', refused, { param: 'callback_url' });
      callback = { url: body.callback_url, signed: secret !== null };
    }
    core.rateLimiter.take(auth.keyId, auth.rateLimitPerMinute);
    const idempotency = idempotencyOf(ctx);
    const { row, replayed } = await tasks.create({
      kind: VIDEO_TASK,
      accountId: auth.accountId,
      actor: auth.keyId,
      endpoint: endpointOf(ctx),
      model: model.id,
      request,
      estimate: videoCharge(model, request, request.resolution, request.billed_seconds).amount,
      callback,
      idempotency,
      requestId: ctx.state.requestId,
      submitsInline: true,
    });
    if (replayed) ctx.set('idempotent-replayed', 'true');
    const upstreamId = replayed ? row.upstream_id : await submitNow(row.task_id, ctx);
    ctx.body = { id: row.task_id, upstream_id: upstreamId, model: row.model, status: 'queued', created_at: row.created_at.toISOString() };
  });

  /**
   * Hands the task to the provider inside the request, so the answer carries the provider's id. A
   * refusal fails the task (its error is on the task, as for any failure); a provider out of reach
   * leaves it queued for the submit job, which retries in the background. Either way the answer is
   * the queued task; upstream_id is null when the provider did not take it.
   */
  async function submitNow(taskId: string, ctx: GatewayContext): Promise<string | null> {
    const stream = taskStream('video', taskId);
    try {
      await tasks.submitOnce(stream, { requestId: ctx.state.requestId });
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      ctx.state.logger.warn({ err, taskId }, 'provider unreachable at creation; the submit job retries');
    }
    return (await tasks.load(stream)).upstreamId;
  }

  router.get('/', async (ctx) => {
    const page = pageParams(ctx.query);
    const { rows, hasMore } = await tasks.list('video', authOf(ctx).accountId, page);
    ctx.body = listBody(
      rows.map((r) => tasks.kind('video').render(r, core.signer)),
      hasMore,
      (t) => String(t.id),
    );
  });

  router.get('/:id', async (ctx) => {
    const row = await tasks.read('video', ctx.params.id!, authOf(ctx).accountId);
    if (!row) throw new ApiError(404, 'task_not_found', `video task ${ctx.params.id} not found`);
    ctx.body = tasks.kind('video').render(row, core.signer);
  });

  router.post('/:id/webhook/redeliver', async (ctx) => {
    const deliveryId = await tasks.redeliver('video', ctx.params.id!, authOf(ctx).accountId, ctx.state.requestId);
    ctx.status = 202;
    ctx.body = { delivery_id: deliveryId, status: 'pending' };
  });

  return router;
}
