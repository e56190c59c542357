import type { Catalog } from '../../billing/catalog';
import type { UrlSigner } from '../../files/signed-urls';
import type { CreationPolicy } from '../../tasks/creation';
import { objectCodec, OPEN_DATA, type TaskData } from '../../tasks/codec';
import { recordedUsage, type KindRow, type KindTask, type TaskKind, type TaskKindCodec, type UpstreamPoll } from '../../tasks/kind';
import { billableSeconds, isRefusal, pollBackoff, pricingModel, submitOnChannels, taskChannel, type TaskRouter } from '../../tasks/upstream-task';
import { eraseAdapterOf } from '../../upstreams/erase-adapters';
import type { EraseTaskAsk } from '../../upstreams/erase-task';
import type { Upstreams } from '../../upstreams/registry';
import { archivedUrl, renderProcessingTask } from '../common';
import { eraseCapabilities } from '../model-types';
import { eraseCharge, type NormalizedEraseRequest } from './request';

export const ERASE_TASK_KIND = 'erase';

export interface EraseUsage {
  readonly duration_seconds: number;
}

/**
 * Submitted by the submit job; the answer is the task as created. The task's result is the
 * provider's own erase output, shown to the client with the gateway's link in it.
 */
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
 * Subtitle erase through its channel's protocol adapter (src/upstreams/erase-task.ts; Volcengine
 * VOD's in docs/providers.md). The erased video is archived into the file store before the task
 * succeeds; `video_url` and `result.video_url` are the same signed gateway link (the provider's own
 * link is not handed out: it may expire or need its credentials). Billed per second of video:
 * frozen for the declared duration (or the model's default), settled for the seconds the provider
 * reports it output. A refusal of the client's video fails the task and releases the freeze.
 */
export function eraseKind(deps: { catalog: Catalog; upstreams: Upstreams; router: TaskRouter; videoUrlTtlMs: number; pollMs: number }): TaskKind<NormalizedEraseRequest, TaskData, EraseUsage> {
  const askOf = (task: EraseTask): EraseTaskAsk => {
    const model = pricingModel(deps.catalog, task);
    const caps = eraseCapabilities(model);
    return { taskId: task.taskId, space: caps.upstream_space ?? model.id, videoUrl: task.request.video_url, regions: task.request.regions, maxSeconds: caps.max_duration_seconds };
  };

  return {
    ...ERASE_TASK,

    async submit(task: EraseTask) {
      return submitOnChannels(deps, task, (_model, channel) => eraseAdapterOf(channel).submit(channel, askOf(task)));
    },

    async poll(task: EraseTask): Promise<UpstreamPoll<TaskData, EraseUsage>> {
      const { channel } = taskChannel(deps, task);
      let reading;
      try {
        reading = await eraseAdapterOf(channel).get(channel, task.upstreamId!, askOf(task));
      } catch (err) {
        // A step the provider refuses for good (its erase of the stored video): the task fails, released.
        if (isRefusal(err)) return { state: 'failed', error: { code: err.code ?? 'upstream_rejected', message: err.message } };
        throw err;
      }
      if (reading.state !== 'succeeded') return reading;
      const duration = billableSeconds(reading.durationSeconds, task.request.billed_seconds, eraseCapabilities(pricingModel(deps.catalog, task)).max_duration_seconds);
      return {
        state: 'succeeded',
        result: { ...reading.result },
        usage: { duration_seconds: duration },
        artifacts: [{ name: 'video', sourceUrl: reading.videoUrl, contentType: 'video/mp4' }],
      };
    },

    async cancelUpstream(task: EraseTask) {
      const { channel } = taskChannel(deps, task);
      // A provider without a cancel (VOD): the gateway only stops polling; the reservation is released all the same.
      await eraseAdapterOf(channel).cancel?.(channel, task.upstreamId!);
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
