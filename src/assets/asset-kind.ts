import { NO_CHARGE } from '../billing/money';
import type { Catalog } from '../billing/catalog';
import { NO_DATA, objectCodec, type NoData } from '../tasks/codec';
import type { CreationPolicy } from '../tasks/creation';
import type { KindRow, KindTask, TaskKind, TaskKindCodec, UpstreamPoll } from '../tasks/kind';
import { pollBackoff, submitUpstreamTask, taskChannel } from '../tasks/upstream-task';
import type { TaskRow } from '../tasks/view-row';
import type { Upstreams } from '../upstreams/registry';
import type { AssetRequest } from './request';

export const ASSET_KIND = 'asset';

export type AssetStatus = 'processing' | 'active' | 'failed';

interface UpstreamAsset {
  id: string;
  status: 'processing' | 'active' | 'failed';
  error?: { code?: string; message?: string };
}

/**
 * One reference image of a verified group, processed by the provider (create in the provider's
 * group, poll by id): `processing`, then `active` (usable as `asset://<id>` in video tasks) or
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

export function assetKind(deps: { catalog: Catalog; upstreams: Upstreams; pollMs: number }): TaskKind<AssetRequest, NoData, NoData> {
  return {
    ...ASSET_TASK,

    async submit(task: AssetTask) {
      const r = task.request;
      return submitUpstreamTask(taskChannel(deps, task.model).channel, `/asset-groups/${encodeURIComponent(r.upstream_group_id)}/assets`, { url: r.url }, task);
    },

    async poll(task: AssetTask): Promise<UpstreamPoll<NoData, NoData>> {
      const a = await taskChannel(deps, task.model).channel.json<UpstreamAsset>('GET', `/assets/${encodeURIComponent(task.upstreamId!)}`);
      if (a.status === 'active') return { state: 'succeeded', result: {}, usage: {}, artifacts: [] };
      if (a.status === 'failed') return { state: 'failed', error: { code: a.error?.code ?? 'asset_processing_failed', message: a.error?.message ?? 'the provider could not process the image' } };
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
