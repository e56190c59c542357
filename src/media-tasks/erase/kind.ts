import type { Catalog } from '../../billing/catalog';
import type { UrlSigner } from '../../files/signed-urls';
import type { CreationPolicy } from '../../tasks/creation';
import { objectCodec, OPEN_DATA, type TaskData } from '../../tasks/codec';
import { recordedUsage, type KindRow, type KindTask, type TaskKind, type TaskKindCodec, type UpstreamPoll } from '../../tasks/kind';
import { billableSeconds, cancelUpstreamTask, pollBackoff, pricingModel, submitUpstreamTask, taskChannel, unsucceededPoll, type UpstreamTaskStatus } from '../../tasks/upstream-task';
import type { Upstreams } from '../../upstreams/registry';
import { archivedUrl, renderProcessingTask } from '../common';
import { eraseCapabilities } from '../model-types';
import { eraseCharge, type NormalizedEraseRequest } from './request';

interface UpstreamErase extends UpstreamTaskStatus {
  id: string;
  result?: Record<string, unknown> & { video_url?: string; duration?: number };
}

export const ERASE_TASK_KIND = 'erase';

export interface EraseUsage {
  readonly duration_seconds: number;
}

/** The result is the provider's own `result` object, shown to the client with the gateway's link in it. */
/** Submitted by the submit job; the answer is the task as created. */
export const ERASE_CREATION: CreationPolicy = {
  endpoint: 'POST /v1/videos/erase-subtitle',
  rateLimit: 'after_checks',
  submission: 'background',
  whenUnreachable: null,
  whenRefused: null,
  refusedParam: null,
  status: 200,
};

export const ERASE_TASK: TaskKindCodec<NormalizedEraseRequest, TaskData, EraseUsage> = {
  kind: ERASE_TASK_KIND,
  idPrefix: 'ers',
  request: objectCodec<NormalizedEraseRequest>('subtitle erase request', { video_url: true, regions: true, duration_seconds: true, output: true, billed_seconds: true }),
  result: OPEN_DATA,
  usage: objectCodec<EraseUsage>('subtitle erase usage', { duration_seconds: true }),
};

type EraseTask = KindTask<NormalizedEraseRequest, TaskData, EraseUsage>;

/**
 * Subtitle erase on an erase task API (create, poll by id, cancel). The erased video is archived
 * into the file store before the task succeeds; `video_url` and `result.video_url` are the same
 * signed gateway link (the provider's own link is not handed out: it may expire or need its
 * credentials). Billed per second of video: frozen for the declared duration (or the model's
 * default), settled for the duration the provider processed.
 */
export function eraseKind(deps: { catalog: Catalog; upstreams: Upstreams; videoUrlTtlMs: number; pollMs: number }): TaskKind<NormalizedEraseRequest, TaskData, EraseUsage> {
  const taskPath = (task: EraseTask) => `/videos/erase-subtitle/${encodeURIComponent(task.upstreamId!)}`;

  return {
    ...ERASE_TASK,

    async submit(task: EraseTask) {
      const { model, channel } = taskChannel(deps, task.model);
      const r = task.request;
      const body = {
        model: eraseCapabilities(model).upstream_model ?? model.id,
        video_url: r.video_url,
        ...(r.regions ? { regions: r.regions } : {}),
        ...(r.duration_seconds !== null ? { duration_seconds: r.duration_seconds } : {}),
        output: r.output,
      };
      return submitUpstreamTask(channel, '/videos/erase-subtitle', body, task);
    },

    async poll(task: EraseTask): Promise<UpstreamPoll<TaskData, EraseUsage>> {
      const t = await taskChannel(deps, task.model).channel.json<UpstreamErase>('GET', taskPath(task));
      const unsucceeded = unsucceededPoll(t);
      if (unsucceeded) return unsucceeded;
      const videoUrl = t.result?.video_url;
      if (typeof videoUrl !== 'string' || videoUrl === '') return { state: 'failed', error: { code: 'task_failed', message: 'the upstream reported success without a video' } };
      const duration = billableSeconds(t.result?.duration, task.request.billed_seconds, eraseCapabilities(pricingModel(deps.catalog, task)).max_duration_seconds);
      return {
        state: 'succeeded',
        result: t.result!,
        usage: { duration_seconds: duration },
        artifacts: [{ name: 'video', sourceUrl: videoUrl, contentType: 'video/mp4' }],
      };
    },

    async cancelUpstream(task: EraseTask) {
      await cancelUpstreamTask(taskChannel(deps, task.model).channel, taskPath(task));
    },

    pollDelayMs: pollBackoff(deps.pollMs, 3_000),

    succeedsBeforeArchive: () => false,

    settlement(task: EraseTask) {
      const usage = recordedUsage(task);
      return { pricing: eraseCharge(pricingModel(deps.catalog, task), usage.duration_seconds), usage: { model: task.model, task_id: task.taskId, duration_seconds: usage.duration_seconds } };
    },

    render(row: KindRow<NormalizedEraseRequest, TaskData, EraseUsage>, signer: UrlSigner) {
      return renderProcessingTask(row, {
        model: false,
        succeeded: () => {
          const url = archivedUrl(row, 'video', signer, deps.videoUrlTtlMs);
          return { video_url: url, result: { ...(row.result ?? {}), video_url: url } };
        },
      });
    },
  };
}
