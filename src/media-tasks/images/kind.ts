import type { Catalog, ModelEntry } from '../../billing/catalog';
import type { UrlSigner } from '../../files/signed-urls';
import type { CreationPolicy } from '../../tasks/creation';
import { objectCodec } from '../../tasks/codec';
import type { KindRow, KindTask, TaskKind, TaskKindCodec, UpstreamPoll } from '../../tasks/kind';
import { isRefusal, pricingModel, routeTaskWork, taskChannel, type TaskRouter } from '../../tasks/upstream-task';
import { UpstreamError } from '../../upstreams/errors';
import { generateImages } from '../../upstreams/image-protocols';
import { BASE_LAYER, type GeneratedImage, type ImageGenerationAnswer } from '../../upstreams/images';
import type { Upstreams } from '../../upstreams/registry';
import { unixSeconds } from '../common';
import { imageCall, imageSettlement, tokenUsageOf, type ImageTokenUsage, type NormalizedImageRequest } from './request';

/** What an async image task keeps of its request: the normalized request and how it is billed. */
export interface ImageTaskRequest extends NormalizedImageRequest {
  readonly billing: 'per_image' | 'tokens';
}

/** Artifact names: `image_<i>` for image i (the gallery's), `layer_<i>_<k>_<name>` for its k-th other layer. */
const LAYER_ARTIFACT = /^layer_(\d+)_(\d+)_(.+)$/;

export const IMAGE_TASK_KIND = 'image';

export interface ImageTaskResult {
  /** The provider's creation time (unix seconds), if it said. */
  readonly created: number | null;
  readonly images: number;
}

/** Images made, and for token-billed models their tokens. */
export interface ImageTaskUsage extends Partial<ImageTokenUsage> {
  readonly images?: number;
}

/** Submitted by the submit job; the answer is the task as created. */
export const IMAGE_CREATION: CreationPolicy = {
  endpoint: 'POST /v1/images/async',
  rateLimit: 'after_checks',
  submission: 'background',
  whenUnreachable: null,
  whenRefused: null,
  refusedParam: null,
  status: 200,
};

export const IMAGE_TASK: TaskKindCodec<ImageTaskRequest, ImageTaskResult, ImageTaskUsage> = {
  kind: IMAGE_TASK_KIND,
  idPrefix: 'imt',
  request: objectCodec<ImageTaskRequest>('async image request', { prompt: true, n: true, size: true, response_format: true, output_format: true, billing: true }),
  result: objectCodec<ImageTaskResult>('async image result', { created: true, images: true }),
  usage: objectCodec<ImageTaskUsage>('async image usage', {}),
};

type ImageTask = KindTask<ImageTaskRequest, ImageTaskResult, ImageTaskUsage>;
type ImageRow = KindRow<ImageTaskRequest, ImageTaskResult, ImageTaskUsage>;

/**
 * A failed generation that fails the task at once (its reservation released): the provider
 * refused it (4xx but 429 and its refusal of the gateway's key), answered its own failure (5xx,
 * no images), or may have made it without the answer arriving: a timeout or a connection lost
 * once the request was sent. Calling again would be a new generation the provider bills, with no
 * way to tell it apart from the first (its API has no idempotency key). Retried by the engine:
 * a rate limit, a refused key, and a connection that was never made (the provider never saw the
 * request).
 */
export function failsTheTask(err: unknown): err is UpstreamError {
  return isRefusal(err) || (err instanceof UpstreamError && (err.status >= 500 || err.kind === 'protocol' || err.kind === 'timeout' || err.kind === 'network'));
}

/** The task's error message: the provider's, or for an answer that never came, why it is not asked again. */
function generationFailure(err: UpstreamError): string {
  return err.status === 0 ? `${err.message}: the generation may have been made, so it is not requested again` : err.message;
}

/** The artifacts of a generation: `image_<i>` for image i (the gallery's), `layer_<i>_<k>_<name>` for its k-th other layer. */
function artifactsOf(images: readonly GeneratedImage[], layered: boolean) {
  const linked = <T extends { url?: string }>(item: T): item is T & { url: string } => typeof item.url === 'string';
  return images.filter(linked).flatMap((image, i) => [
    { name: `image_${i}`, sourceUrl: image.url },
    ...(layered ? image.layers.filter(linked).map((l, k) => ({ name: `layer_${i}_${k}_${l.name}`, sourceUrl: l.url })) : []),
  ]);
}

/**
 * Async images: the provider's synchronous generation, run by the task engine (no provider task
 * API is assumed). Submission only records the task (its id is its own upstream id); the first poll
 * moves it to `processing`, the next makes the call on the model's channels as the router orders
 * them (a failure before any result fails over, one whose outcome is unknown never does:
 * routeTaskWork), asking for links, recording the channel that made them for the settlement, and the engine archives
 * each image into the file store before the task succeeds, so the result's links are the
 * gateway's own signed URLs and the gallery picks the images up from the task's events.
 * Statuses: `queued` (waiting for a worker), `processing` (a worker is calling the provider, or
 * storing the images), `succeeded`, `failed` (failsTheTask).
 */
export function imageTaskKind(deps: { catalog: Catalog; upstreams: Upstreams; router: TaskRouter; imageUrlTtlMs: number }): TaskKind<ImageTaskRequest, ImageTaskResult, ImageTaskUsage> {
  return {
    ...IMAGE_TASK,

    async submit(task: ImageTask) {
      taskChannel(deps, task);
      return { upstreamId: task.taskId };
    },

    async poll(task: ImageTask): Promise<UpstreamPoll<ImageTaskResult, ImageTaskUsage>> {
      if (task.upstreamStatus !== 'running') return { state: 'pending', upstreamStatus: 'running' };
      const r = task.request;
      let model: ModelEntry;
      let answer: ImageGenerationAnswer;
      let channel: string;
      try {
        ({ value: { model, answer }, channel } = await routeTaskWork(deps, task, async (m, ch) => ({ model: m, answer: await generateImages(ch, imageCall(m, r, 'url')) })));
      } catch (err) {
        if (failsTheTask(err)) return { state: 'failed', error: { code: err.code ?? 'upstream_failed', message: generationFailure(err) } };
        throw err;
      }
      const artifacts = artifactsOf(answer.images, r.layered === true);
      const images = artifacts.filter((a) => a.name.startsWith('image_')).length;
      if (images === 0) return { state: 'failed', error: { code: 'no_images', message: 'the upstream returned no image links' } };
      const tokens: ImageTokenUsage | null = r.billing === 'tokens' ? tokenUsageOf(model, r, images, answer.tokens) : null;
      return {
        state: 'succeeded',
        result: { created: answer.created, images },
        usage: { images, ...(tokens ?? {}) },
        artifacts,
        channels: [channel],
      };
    },

    // The one pending poll is the first (it shows the task processing): the call follows at once.
    pollDelayMs: () => 0,

    // The result links are the gateway's: the task succeeds once its images are stored.
    succeedsBeforeArchive: () => false,

    settlement(task: ImageTask) {
      const model = pricingModel(deps.catalog, task);
      const usage = task.usage ?? {};
      const images = usage.images ?? task.artifacts.filter((a) => a.name.startsWith('image_')).length;
      const tokens = task.request.billing === 'tokens' ? tokenUsageOf(model, task.request, images, usage) : null;
      const { pricing, usage: record } = imageSettlement(model, task.request, images, tokens);
      return { pricing, usage: { ...record, task_id: task.taskId } };
    },

    render(row: ImageRow, signer: UrlSigner) {
      return renderImageTask(row, signer, deps.imageUrlTtlMs);
    },
  };
}

/** The spec's async image task: `error` only when failed, `result` only when succeeded. */
function renderImageTask(row: ImageRow, signer: UrlSigner, ttlMs: number): Record<string, unknown> {
  const r = row.request;
  const status = row.status === 'queued' ? 'queued' : row.status === 'running' ? 'processing' : row.status === 'succeeded' ? 'succeeded' : 'failed';
  const body: Record<string, unknown> = { id: row.task_id, status, model: row.model, created_at: unixSeconds(row.created_at) };
  if (status === 'failed') body.error = row.status === 'cancelled' ? 'the task was cancelled' : (row.error?.message ?? 'the task failed');
  if (status === 'succeeded') {
    const usage = row.usage ?? {};
    const archived = row.archived ?? [];
    const images = archived.filter((a) => a.name.startsWith('image_')).sort((a, b) => Number(a.name.slice(6)) - Number(b.name.slice(6)));
    const link = (key: string) => signer.url(key, ttlMs).url;
    const layersOf = (i: number) =>
      archived
        .flatMap((a) => {
          const m = LAYER_ARTIFACT.exec(a.name);
          return m && Number(m[1]) === i ? [{ k: Number(m[2]), name: m[3]!, key: a.key }] : [];
        })
        .sort((a, b) => a.k - b.k);
    body.result = {
      created: unixSeconds(row.finished_at ?? row.updated_at),
      // A layered model: each image (layer `base`), then its other layers, as the sync call answers.
      data: images.flatMap((a, i) =>
        r.layered ? [{ url: link(a.key), layer: BASE_LAYER }, ...layersOf(i).map((l) => ({ url: link(l.key), layer: l.name }))] : [{ url: link(a.key) }],
      ),
      ...(r.billing === 'tokens' ? { usage: { input_tokens: usage.input_tokens ?? 0, output_tokens: usage.output_tokens ?? 0, total_tokens: usage.total_tokens ?? 0 } } : {}),
    };
  }
  return body;
}
