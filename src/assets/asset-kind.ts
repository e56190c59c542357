import { NO_CHARGE } from '../billing/money';
import type { Catalog } from '../billing/catalog';
import { NO_DATA, objectCodec, type NoData } from '../tasks/codec';
import type { CreationPolicy } from '../tasks/creation';
import type { KindRow, KindTask, TaskKind, TaskKindCodec, UpstreamPoll } from '../tasks/kind';
import { pollBackoff, submitOnChannels, taskChannel, type TaskRouter } from '../tasks/upstream-task';
import type { TaskRow } from '../tasks/view-row';
import type { Upstreams } from '../upstreams/registry';
import { createAssetRequest, getAssetRequest, readAsset, readCreatedAsset } from '../upstreams/volcengine-openapi/ark-assets';
import type { AssetRequest } from './request';

export const ASSET_KIND = 'asset';

export type AssetStatus = 'processing' | 'active' | 'failed';

/**
 * One reference image of a verified group, processed by the provider's asset library (CreateAsset
 * in the provider's group, GetAsset by id; src/upstreams/volcengine-openapi/ark-assets.ts): `processing`, then `active` (usable as `asset://<id>` in video tasks) or
 * `failed`. Free: the verification fee covers a group's images, so the task reserves and settles 0.
 */
/** Submitted by the submit job; the answer is the asset as created (`processing`). */
export const ASSET_CREATION: CreationPolicy = {
  endpoint: 'POST /v1/asset-groups/{group_id}/assets',
  rateLimit: 'after_checks',
  submission: 'background',
  whenUnreachable: null,
  whenRefused: null,
  refusedParam: null,
  status: 200,
};

export const ASSET_TASK: TaskKindCodec<AssetRequest, NoData, NoData> = {
  kind: ASSET_KIND,
  idPrefix: 'asset',
  request: objectCodec<AssetRequest>('asset request', { group_id: true, upstream_group_id: true, url: true }),
  result: NO_DATA,
  usage: NO_DATA,
};

type AssetTask = KindTask<AssetRequest, NoData, NoData>;

export function assetKind(deps: { catalog: Catalog; upstreams: Upstreams; router: TaskRouter; pollMs: number }): TaskKind<AssetRequest, NoData, NoData> {
  return {
    ...ASSET_TASK,

    async submit(task: AssetTask) {
      const request = createAssetRequest({ groupId: task.request.upstream_group_id, url: task.request.url });
      // The group lives in one provider account: only its channel can add to it.
      return submitOnChannels(deps, task, async (_model, channel) => ({ upstreamId: readCreatedAsset(await channel.call(request), channel.name) }), task.request.upstream_channel);
    },

    async poll(task: AssetTask): Promise<UpstreamPoll<NoData, NoData>> {
      const { channel } = taskChannel(deps, task);
      const asset = readAsset(await channel.call(getAssetRequest(task.upstreamId!)), channel.name);
      if (asset.status === 'active') return { state: 'succeeded', result: {}, usage: {}, artifacts: [] };
      if (asset.status === 'failed') return { state: 'failed', error: asset.error };
      return { state: 'pending', upstreamStatus: 'running' };
    },

    pollDelayMs: pollBackoff(deps.pollMs, 3_000),

    succeedsBeforeArchive: () => true,

    settlement: () => ({ pricing: NO_CHARGE, usage: {} }),

    render(row: KindRow<AssetRequest, NoData, NoData>) {
      const r = row.request;
      const status = assetStatus(row);
      return {
        id: row.task_id,
        object: 'asset',
        group_id: r.group_id,
        uri: `asset://${row.task_id}`,
        url: r.url,
        status,
        error: status === 'failed' ? row.error : null,
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
      };
    },
  };
}

export function assetStatus(row: Pick<TaskRow, 'status'>): AssetStatus {
  if (row.status === 'succeeded') return 'active';
  if (row.status === 'failed' || row.status === 'cancelled') return 'failed';
  return 'processing';
}
