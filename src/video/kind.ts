import type { Catalog, ModelEntry } from '../billing/catalog';
import type { UrlSigner } from '../files/signed-urls';
import type { Upstreams } from '../upstreams/registry';
import type { Router } from '../upstreams/routing/router';
import { videoTaskAdapterOf } from '../upstreams/video-adapters';
import { objectCodec } from '../tasks/codec';
import type { CreationPolicy } from '../tasks/creation';
import { recordedUsage, type KindRow, type KindTask, type TaskKind, type TaskKindCodec, type UpstreamPoll } from '../tasks/kind';
import { billableSeconds, pollBackoff, pricingModel, submitOnChannels, taskChannel } from '../tasks/upstream-task';
import { videoCapabilities } from './model-type';
import { assetIdOf, billedResolution, videoCharge, type ContentItem, type NormalizedVideoRequest } from './request';

/** An `asset://` image as the provider knows it: by the provider's id of the asset, not the gateway's. */
function withUpstreamAsset(item: ContentItem, upstreamIds: Readonly<Record<string, string>> | undefined): ContentItem {
  const assetId = assetIdOf(item);
  const upstreamId = assetId ? upstreamIds?.[assetId] : undefined;
  return upstreamId ? { ...item, image_url: { url: `asset://${upstreamId}` } } : item;
}

/** What a succeeded video task keeps of the provider's answer. */
export interface VideoResult {
  readonly content: { readonly video_url?: string; readonly last_frame_url?: string };
  /** Unix seconds; null when the provider does not say. */
  readonly video_url_expires_at: number | null;
}

/** What a video task is billed by: the provider's report as it bills, and the report itself when that reads otherwise. */
export interface VideoUsage {
  readonly duration_seconds: number;
  readonly resolution: string;
  readonly completion_tokens: number | null;
  readonly reported?: { readonly duration?: unknown; readonly resolution?: unknown };
}

export const VIDEO_TASK: TaskKindCodec<NormalizedVideoRequest, VideoResult, VideoUsage> = {
  kind: 'video',
  idPrefix: 'vid',
  request: objectCodec<NormalizedVideoRequest>('video request', {
    content: true,
    mode: true,
    video_url_mode: true,
    video_url_mode_explicit: true,
    resolution: true,
    ratio: true,
    duration: true,
    seed: true,
    generate_audio: true,
    draft: true,
    return_last_frame: true,
    camera_fixed: true,
    watermark: true,
    service_tier: true,
    safety_identifier: true,
    has_reference_video: true,
    draft_task: true,
    billed_seconds: true,
  }),
  result: objectCodec<VideoResult>('video result', { content: true, video_url_expires_at: true }),
  usage: objectCodec<VideoUsage>('video usage', { duration_seconds: true, resolution: true, completion_tokens: true }),
};

/**
 * Submitted inline, so the answer carries the provider's id. A provider out of reach leaves the
 * task queued for the submit job, which retries in the background; a refusal fails the task (its
 * error is on the task, as for any failure). Either way the answer is the queued task.
 */
export const VIDEO_CREATION: CreationPolicy = {
  endpoint: 'POST /v1/videos/generations',
  rateLimit: 'after_checks',
  submission: 'inline',
  whenUnreachable: 'leave_queued',
  whenRefused: 'answer_the_task',
  refusedParam: null,
  status: 200,
};

type VideoTask = KindTask<NormalizedVideoRequest, VideoResult, VideoUsage>;
type VideoRow = KindRow<NormalizedVideoRequest, VideoResult, VideoUsage>;

/** Native provider URLs are used only while they stay valid at least this much longer. */
const NATIVE_URL_MARGIN_MS = 5 * 60_000;

/**
 * A provider's usage report as it bills: whole seconds started, at most the model's longest video,
 * at a resolution the model prices (billableSeconds, billedResolution); the report itself kept
 * beside it when it reads otherwise (`reported`), so that the charge can be traced to it.
 */
function billedUsage(
  model: ModelEntry,
  request: NormalizedVideoRequest,
  report: { readonly duration_seconds?: unknown; readonly resolution?: unknown; readonly completion_tokens: number | null; readonly reported?: VideoUsage['reported'] },
): VideoUsage {
  const duration_seconds = billableSeconds(report.duration_seconds, request.billed_seconds, videoCapabilities(model).durations.max);
  const resolution = billedResolution(model, request, report.resolution);
  const asReported = duration_seconds === report.duration_seconds && resolution === report.resolution;
  const reported = report.reported ?? (asReported ? undefined : { duration: report.duration_seconds, resolution: report.resolution });
  return { duration_seconds, resolution, completion_tokens: report.completion_tokens, ...(reported ? { reported } : {}) };
}

/**
 * Video generation on a content-generation task API (create, then poll by id). The gateway
 * archives every finished video; `video_url_mode` decides which URL a client sees and whether the
 * task waits for the archive (`tos`).
 */
export function videoKind(deps: { catalog: Catalog; upstreams: Upstreams; router: Pick<Router, 'attempt'>; clock: () => Date; videoUrlTtlMs: number; pollMs: number }): TaskKind<NormalizedVideoRequest, VideoResult, VideoUsage> {
  /** The URL a client gets for the video, by mode: native while usable, else the archive's signed link. */
  function videoUrl(row: Pick<VideoTask, 'result' | 'archived' | 'request'>, signer: UrlSigner, name = 'video') {
    const mode = row.request.video_url_mode;
    const archived = row.archived?.find((a) => a.name === name);
    const archiveUrl = archived ? signer.url(archived.key, deps.videoUrlTtlMs) : null;
    const result = row.result;
    const native = name === 'video' ? result?.content.video_url : result?.content.last_frame_url;
    const nativeExpires = result?.video_url_expires_at ? result.video_url_expires_at * 1000 : null;
    const nativeUsable = native && (nativeExpires === null || nativeExpires - deps.clock().getTime() > NATIVE_URL_MARGIN_MS);
    if (mode === 'tos') return archiveUrl ? { url: archiveUrl.url, source: 'archive', expires_at: archiveUrl.expiresAt } : null;
    if (native && (mode === 'upstream' || nativeUsable)) return { url: native, source: 'upstream', expires_at: nativeExpires ? new Date(nativeExpires).toISOString() : null };
    if (archiveUrl) return { url: archiveUrl.url, source: 'archive', expires_at: archiveUrl.expiresAt };
    return native ? { url: native, source: 'upstream', expires_at: nativeExpires ? new Date(nativeExpires).toISOString() : null } : null;
  }

  return {
    ...VIDEO_TASK,

    async submit(task: VideoTask) {
      const r = task.request;
      return submitOnChannels(deps, task, (model, channel) => {
        const ask = { ...r, model: videoCapabilities(model).upstream_model ?? model.id, content: r.content.map((item) => withUpstreamAsset(item, r.asset_upstream_ids)) };
        return videoTaskAdapterOf(channel).create(channel, ask, task.taskId);
      }, r.upstream_channel);
    },

    async poll(task: VideoTask): Promise<UpstreamPoll<VideoResult, VideoUsage>> {
      const { channel } = taskChannel(deps, task);
      const t = await videoTaskAdapterOf(channel).get(channel, task.upstreamId!);
      if (t.state !== 'succeeded') return t;
      const artifacts = [{ name: 'video', sourceUrl: t.video_url, contentType: 'video/mp4' }];
      if (t.last_frame_url) artifacts.push({ name: 'last_frame', sourceUrl: t.last_frame_url, contentType: 'image/png' });
      return {
        state: 'succeeded',
        result: { content: { video_url: t.video_url, ...(t.last_frame_url ? { last_frame_url: t.last_frame_url } : {}) }, video_url_expires_at: t.video_url_expires_at },
        usage: billedUsage(pricingModel(deps.catalog, task), task.request, t.usage),
        artifacts,
      };
    },

    pollDelayMs: pollBackoff(deps.pollMs, 15_000),

    succeedsBeforeArchive: (task) => task.request.video_url_mode !== 'tos',

    settlement(task: VideoTask) {
      const model = pricingModel(deps.catalog, task);
      // Read again: a task recorded before its poll did so holds the provider's raw report (5.04 s, "720P").
      const usage = billedUsage(model, task.request, recordedUsage(task));
      return { pricing: videoCharge(model, task.request, usage.resolution, usage.duration_seconds), usage: { model: task.model, ...usage } };
    },

    webhookFields(task: VideoTask, signer: UrlSigner) {
      return { video_url: videoUrl(task, signer)?.url ?? null };
    },

    render(row: VideoRow, signer: UrlSigner) {
      const r = row.request;
      const finished = row.status === 'succeeded';
      const video = finished ? videoUrl(row, signer) : null;
      const lastFrame = finished && r.return_last_frame ? videoUrl(row, signer, 'last_frame') : null;
      return {
        id: row.task_id,
        object: 'video.generation',
        model: row.model,
        status: row.status,
        upstream_id: row.upstream_id,
        request: {
          content: r.content,
          resolution: r.resolution,
          ratio: r.ratio,
          duration: r.duration,
          seed: r.seed,
          generate_audio: r.generate_audio,
          draft: r.draft,
          return_last_frame: r.return_last_frame,
          camera_fixed: r.camera_fixed,
          watermark: r.watermark,
          service_tier: r.service_tier,
          video_url_mode: r.video_url_mode,
          safety_identifier: r.safety_identifier,
          callback_url: row.callback?.url ?? null,
        },
        video_url: video?.url ?? null,
        video_url_source: video?.source ?? null,
        video_url_expires_at: video?.expires_at ?? null,
        last_frame_url: lastFrame?.url ?? null,
        archive: { status: row.archived ? 'archived' : row.archive_error ? 'failed' : 'pending', error: row.archive_error },
        usage: row.usage,
        billing: {
          currency: 'CNY',
          reserved: Number(row.reserved_amount),
          status: row.billing_status,
          amount: row.billed_amount === null ? null : Number(row.billed_amount),
        },
        error: row.error,
        webhook: row.callback ? { url: row.callback.url, signed: row.callback.signed, deliveries: row.deliveries } : null,
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
        finished_at: row.finished_at?.toISOString() ?? null,
      };
    },
  };
}
