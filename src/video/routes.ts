import Router from '@koa/router';
import { readJson } from '../http/body';
import { authOf, type GatewayState } from '../http/context';
import { ApiError } from '../http/errors';
import { resolveModel } from '../http/models-access';
import { listBody, pageParams } from '../http/pagination';
import { createTask } from '../tasks/creation';
import { checkCallbackTarget } from '../webhooks/target-guard';
import { findAssets } from '../assets/lookup';
import { VIDEO_CREATION, VIDEO_TASK } from './kind';
import { normalizeVideoRequest } from './normalize';
import { assetIdsOf, checkAssetRefs, checkAssetsOfOneChannel, parseVideoRequest, videoCharge, type DraftInfo, type NormalizedVideoRequest } from './request';
import type { AccountService } from '../accounts/service';
import type { Catalog } from '../billing/catalog';
import type { Config } from '../config';
import type { Clock } from '../feature-types';
import type { UrlSigner } from '../files/signed-urls';
import type { RateLimiter } from '../http/rate-limit';
import type { TaskEngine } from '../tasks/engine';

/** What the video endpoints use. */
export interface VideoRouteDeps {
  readonly tasks: TaskEngine;
  readonly catalog: Catalog;
  readonly accounts: Pick<AccountService, 'get' | 'webhookSecret'>;
  readonly rateLimiter: Pick<RateLimiter, 'take'>;
  readonly signer: UrlSigner;
  readonly clock: Clock;
  readonly config: Pick<Config, 'webhookAllowPrivateTargets' | 'fileUrlAllowPrivateTargets'>;
}

/** The spec's cap on a video creation body. */
export const VIDEO_BODY_LIMIT = 5 * 1024 * 1024;

export function videoRouter(deps: VideoRouteDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/v1/videos/generations', sensitive: true });
  const tasks = deps.tasks;

  async function draftInfo(accountId: string, id: string): Promise<DraftInfo | null> {
    const row = await tasks.readDecoded(VIDEO_TASK, id, accountId);
    return row ? { model: row.model, status: row.status, createdAt: row.created_at, request: row.request, upstreamId: row.upstream_id, channel: row.upstream_channel } : null;
  }

  router.post('/', (ctx) =>
    createTask(deps, ctx, {
      kind: VIDEO_TASK,
      policy: VIDEO_CREATION,
      async check(ctx) {
        const auth = authOf(ctx);
        const body = parseVideoRequest(await readJson(ctx, { limit: VIDEO_BODY_LIMIT, oversizeStatus: 413 }));
        const model = resolveModel(deps.catalog, auth, body.model, ['video']);
        const draftId = body.content.find((c) => c.type === 'draft_task')?.draft_task?.id;
        const account = await deps.accounts.get(auth.accountId);
        const draft = draftId ? await draftInfo(auth.accountId, draftId) : null;
        const normalized = normalizeVideoRequest(model, body, {
          draft,
          now: deps.clock(),
          accountDefaultMode: account?.settings.default_video_url_mode ?? 'auto',
          allowPrivateTargets: deps.config.fileUrlAllowPrivateTargets,
        });
        const assetIds = assetIdsOf(body.content).map((a) => a.assetId);
        const assets = assetIds.length > 0 ? await findAssets(tasks, auth.accountId, assetIds) : new Map<string, null>();
        const assetUpstreamIds = assetIds.length > 0 ? checkAssetRefs(body.content, assets) : null;
        checkAssetsOfOneChannel(body.content, assets);
        // A draft is the provider's, in the account that made it: its final goes there only.
        const held = draft?.channel ?? null;
        const request: NormalizedVideoRequest = { ...normalized, ...(assetUpstreamIds ? { asset_upstream_ids: assetUpstreamIds } : {}), ...(held === null ? {} : { upstream_channel: held }) };
        return { body, model, request };
      },
      async complete({ body, model, request }, ctx) {
        const accountId = authOf(ctx).accountId;
        const estimate = videoCharge(model, request, request.resolution, request.billed_seconds).amount;
        if (!body.callback_url) return { model, request, estimate, callback: null };
        const secret = await deps.accounts.webhookSecret(accountId);
        if (request.video_url_mode_explicit && !secret) {
          throw new ApiError(400, 'webhook_secret_required', 'a callback_url with an explicit video_url_mode needs the account webhook secret; create one first', { param: 'callback_url' });
        }
        const refused = await checkCallbackTarget(body.callback_url, deps.config.webhookAllowPrivateTargets);
        if (refused) throw new ApiError(400, 'invalid_callback_url', refused, { param: 'callback_url' });
        return { model, request, estimate, callback: { url: body.callback_url, signed: secret !== null } };
      },
      // The queued task; upstream_id is null when the provider did not take it (see VIDEO_CREATION).
      answer: ({ row, upstreamId }) => ({ id: row.task_id, upstream_id: upstreamId, model: row.model, status: 'queued', created_at: row.created_at.toISOString() }),
    }),
  );

  router.get('/', async (ctx) => {
    const page = pageParams(ctx.query);
    const { rows, hasMore } = await tasks.list('video', authOf(ctx).accountId, page);
    ctx.body = listBody(
      rows.map((r) => tasks.kind('video').render(r, deps.signer)),
      hasMore,
      (t) => String(t.id),
    );
  });

  router.get('/:id', async (ctx) => {
    const row = await tasks.read('video', ctx.params.id!, authOf(ctx).accountId);
    if (!row) throw new ApiError(404, 'task_not_found', `video task ${ctx.params.id} not found`);
    ctx.body = tasks.kind('video').render(row, deps.signer);
  });

  router.post('/:id/webhook/redeliver', async (ctx) => {
    const deliveryId = await tasks.redeliver('video', ctx.params.id!, authOf(ctx).accountId, ctx.state.requestId);
    ctx.status = 202;
    ctx.body = { delivery_id: deliveryId, status: 'pending' };
  });

  return router;
}
