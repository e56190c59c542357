import Router from '@koa/router';
import { readJson } from '../http/body';
import { authOf, type GatewayContext, type GatewayState } from '../http/context';
import { ApiError } from '../http/errors';
import { resolveModel } from '../http/models-access';
import { listBody, pageParams } from '../http/pagination';
import { newId } from '../ids';
import type { ModelEntry, Catalog } from '../billing/catalog';
import type { AuthenticatedKey } from '../accounts/service';
import { taskStream } from '../tasks/events';
import { createTask, nothingOutside } from '../tasks/creation';
import { decodeRow } from '../tasks/kind';
import type { TaskRow } from '../tasks/view-row';
import { ASSET_CREATION, ASSET_KIND, ASSET_TASK } from './asset-kind';
import { listGroupAssets, readGroup, renderGroup, type AssetGroupRow } from './groups';
import { verificationFee } from './model-type';
import { checkImageUrl, parseAssetRequest, parseSessionRequest, type AssetRequest, type SessionRequest } from './request';
import { SESSION_CREATION, SESSION_KIND, SESSION_TASK } from './session-kind';
import type { Pool } from 'pg';
import type { Config } from '../config';
import type { UrlSigner } from '../files/signed-urls';
import type { RateLimiter } from '../http/rate-limit';
import type { ConsumerProgress } from '../projections-runtime/progress';
import type { TaskEngine } from '../tasks/engine';

/** What the asset group endpoints use. */
export interface AssetGroupsDeps {
  readonly tasks: TaskEngine;
  readonly catalog: Catalog;
  readonly pool: Pool;
  readonly progress: Pick<ConsumerProgress, 'waitForStream'>;
  readonly rateLimiter: Pick<RateLimiter, 'take'>;
  readonly signer: UrlSigner;
  readonly config: Pick<Config, 'projectionWaitMs' | 'fileUrlAllowPrivateTargets'>;
}

const GROUP_VIEWS = ['asset-groups'];

/** The channel holding a verified group, as a task's request records it (the task is sent there only). */
function heldBy(group: AssetGroupRow | null): { upstream_channel?: string } {
  return group?.upstream_channel ? { upstream_channel: group.upstream_channel } : {};
}

/**
 * The asset group API: open a verification session for a new or existing group, read it until
 * it is verified, failed or expired; add images to a verified group and read them until active.
 * Unknown ids and other accounts' ids answer the same 404.
 */
export function assetGroupsRouter(deps: AssetGroupsDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/v1/asset-groups', sensitive: true });
  const tasks = deps.tasks;
  const waitMs = deps.config.projectionWaitMs;

  /** The verification service: the catalog's first model of the type, checked against the key like any model. */
  function verificationModel(auth: AuthenticatedKey): ModelEntry {
    const id = deps.catalog.list('asset_verification')[0]?.id ?? 'asset-verification';
    return resolveModel(deps.catalog, auth, id, ['asset_verification']);
  }

  async function groupOf(ctx: GatewayContext, groupId: string): Promise<AssetGroupRow> {
    const group = await readGroup(deps.pool, groupId, authOf(ctx).accountId);
    if (!group) throw new ApiError(404, 'asset_group_not_found', `asset group ${groupId} not found`, { param: 'group_id' });
    return group;
  }

  async function sessionRow(accountId: string, sessionId: string): Promise<TaskRow | null> {
    // Both views: a client that saw `verified` here finds its group verified too.
    await deps.progress.waitForStream(taskStream(SESSION_KIND, sessionId), ['tasks', ...GROUP_VIEWS], waitMs);
    return tasks.read(SESSION_KIND, sessionId, accountId);
  }

  router.post('/validate-session', (ctx) =>
    createTask(deps, ctx, {
      kind: SESSION_TASK,
      policy: SESSION_CREATION,
      async check(ctx) {
        const body = parseSessionRequest(await readJson(ctx));
        const model = verificationModel(authOf(ctx));
        const existing = body.group_id === undefined ? null : await groupOf(ctx, body.group_id);
        const request: SessionRequest = {
          group_id: existing?.group_id ?? newId('grp'),
          name: body.name ?? existing?.name ?? null,
          upstream_group_id: existing?.upstream_group_id ?? null,
          ...heldBy(existing),
        };
        return { model, request, estimate: verificationFee(model), callback: null };
      },
      complete: nothingOutside,
      // As the inline submission left it: with its verification_url once the provider took it.
      answer: ({ row }) => tasks.kind(SESSION_KIND).render(row, deps.signer),
    }),
  );

  router.get('/validate-session/:sessionId', async (ctx) => {
    const row = await sessionRow(authOf(ctx).accountId, ctx.params.sessionId!);
    if (!row) throw new ApiError(404, 'session_not_found', `verification session ${ctx.params.sessionId} not found`);
    ctx.body = tasks.kind(SESSION_KIND).render(row, deps.signer);
  });

  router.get('/:groupId', async (ctx) => {
    ctx.body = renderGroup(await groupOf(ctx, ctx.params.groupId!));
  });

  router.post('/:groupId/assets', (ctx) =>
    createTask(deps, ctx, {
      kind: ASSET_TASK,
      policy: ASSET_CREATION,
      async check(ctx) {
        let group = await groupOf(ctx, ctx.params.groupId!);
        if (group.status !== 'verified') {
          // The client may have just read its session as verified from the other view.
          await deps.progress.waitForStream(taskStream(SESSION_KIND, group.last_session_id), GROUP_VIEWS, waitMs);
          group = await groupOf(ctx, group.group_id);
        }
        const body = parseAssetRequest(await readJson(ctx));
        const url = checkImageUrl(body.url, { allowPrivateTargets: deps.config.fileUrlAllowPrivateTargets });
        if (group.status !== 'verified' || !group.upstream_group_id) {
          throw new ApiError(409, 'asset_group_not_verified', `asset group ${group.group_id} is not verified: open a verification session and have the person complete it first`, { param: 'group_id' });
        }
        const model = verificationModel(authOf(ctx));
        const request: AssetRequest = { group_id: group.group_id, upstream_group_id: group.upstream_group_id, url, ...heldBy(group) };
        // Free: the verification fee covers a group's images.
        return { model, request, estimate: 0, callback: null };
      },
      complete: nothingOutside,
      answer: ({ row }) => tasks.kind(ASSET_KIND).render(row, deps.signer),
    }),
  );

  router.get('/:groupId/assets', async (ctx) => {
    const group = await groupOf(ctx, ctx.params.groupId!);
    const { rows, hasMore } = await listGroupAssets(deps.pool, group.group_id, group.account_id, pageParams(ctx.query));
    ctx.body = listBody(
      rows.map((r) => tasks.kind(ASSET_KIND).render(r, deps.signer)),
      hasMore,
      (a) => String(a.id),
    );
  });

  router.get('/:groupId/assets/:assetId', async (ctx) => {
    const auth = authOf(ctx);
    const row = await tasks.read(ASSET_KIND, ctx.params.assetId!, auth.accountId);
    if (!row || decodeRow(ASSET_TASK, row).request.group_id !== ctx.params.groupId) {
      throw new ApiError(404, 'asset_not_found', `asset ${ctx.params.assetId} not found in group ${ctx.params.groupId}`);
    }
    ctx.body = tasks.kind(ASSET_KIND).render(row, deps.signer);
  });

  return router;
}
