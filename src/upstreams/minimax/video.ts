/**
 * MiniMax video generation v2, the API of the MiniMax-H3 model (the gateway's H3 class): create a
 * task, query it by id, cancel it while queued.
 *
 * References:
 * - Create: https://platform.minimax.cn/docs/api-reference/video-generation (`POST /v2/video_generation`,
 *   body `model`, `content[]` of exactly one `text` item plus `image_url` (role `first_frame`,
 *   `last_frame`, `reference_image`), `video_url`, `audio_url` items, `resolution` `768P`|`2K`,
 *   `duration` 4–15, `ratio` (required and concrete for text-to-video), `aigc_watermark`;
 *   answers `{"task_id": "…"}`).
 * - Query: https://platform.minimax.cn/docs/api-reference/video-generation-query
 *   (`GET /v2/query/video_generation/{task_id}`: `task.status` queued | running | succeeded |
 *   failed | cancelled, `task.content.url`, `task.resolution`, `task.duration`, `task.usage`
 *   {output_seconds, input_seconds, input_image_count, total_tokens, …}, `task.error` {code, message}).
 * - Cancel: `DELETE /v2/video_generation/{task_id}` (a queued task only).
 * The v1 API (`/v1/video_generation`, statuses Preparing/Queueing/Processing/Success/Fail, the
 * video fetched by `file_id` through `/v1/files/retrieve`) serves the Hailuo models only, none of
 * the gateway's classes; docs/providers.md says why it is not used.
 */
import { UpstreamError } from '../errors';
import type { VideoTaskAdapter, VideoTaskAsk, VideoTaskReading } from '../video-task';
import type { WireAnswer, WireRequest } from '../wire';
import { minimaxRefusal, record, taskErrorCode } from './errors';

/** What MiniMax-H3 takes of the gateway's video task; `seed`, `camera_fixed`, `return_last_frame`, `service_tier`, `safety_identifier` and drafts it has no field for. */
export type MinimaxVideoTask = Pick<VideoTaskAsk, 'model' | 'content' | 'resolution' | 'duration' | 'ratio' | 'watermark'>;

const CREATE_PATH = '/v2/video_generation';

/**
 * The create request. MiniMax takes exactly one text item: several are joined, one per line. A
 * request without one is sent as it is and MiniMax refuses it: the spec's image-to-video needs no
 * prompt, and no public MiniMax source says what prompt could stand in (docs/providers.md).
 * An `asset://` image (Ark's asset library) means nothing to MiniMax; the catalog keeps them from
 * the H3 class (`asset_images: false`), so this refusal only guards a catalog that does not.
 */
export function createVideoTask(task: MinimaxVideoTask): WireRequest {
  const texts = task.content.filter((item) => item.type === 'text').map((item) => item.text ?? '');
  const media = task.content.filter((item) => item.type !== 'text');
  const asset = media.find((item) => item.image_url?.url.startsWith('asset://'));
  if (asset) throw new UpstreamError(400, `MiniMax cannot take ${asset.image_url!.url}: asset library ids are Ark's`, 'unsupported_by_provider');
  const content = [...(texts.length > 0 ? [{ type: 'text', text: texts.join('\n') }] : []), ...media];
  return {
    method: 'POST',
    path: CREATE_PATH,
    body: { model: task.model, content, resolution: task.resolution, duration: task.duration, ratio: task.ratio, aigc_watermark: task.watermark },
  };
}

export function queryVideoTask(taskId: string): WireRequest {
  return { method: 'GET', path: `/v2/query/video_generation/${encodeURIComponent(taskId)}` };
}

export function cancelVideoTask(taskId: string): WireRequest {
  return { method: 'DELETE', path: `${CREATE_PATH}/${encodeURIComponent(taskId)}` };
}

/** The answer's JSON once MiniMax's error (HTTP status or `base_resp`) is ruled out. */
function successBody(answer: WireAnswer, channel: string): Record<string, unknown> {
  const error = minimaxRefusal(answer, channel);
  if (error) throw error;
  const found = record(answer.json());
  if (!found) throw new UpstreamError(502, `channel ${channel}: MiniMax answered without a JSON object`, null, 'protocol');
  return found;
}

/** The created task's id (MiniMax's ids are strings of digits; a number is read as one). */
export function readCreated(answer: WireAnswer, channel: string): { upstreamId: string } {
  const id = successBody(answer, channel)['task_id'];
  if ((typeof id !== 'string' || id === '') && typeof id !== 'number') throw new UpstreamError(502, `channel ${channel}: MiniMax created a task without a task_id`, null, 'protocol');
  return { upstreamId: String(id) };
}

/** A queried task: pending, failed (a cancel the gateway did not ask for, or an expiry, too), or succeeded with its video and usage. */
export function readTask(answer: WireAnswer, channel: string): VideoTaskReading {
  const task = record(successBody(answer, channel)['task']);
  const status = task?.['status'];
  if (status === 'queued' || status === 'running') return { state: 'pending', upstreamStatus: status };
  if (status === 'failed') {
    const error = record(task?.['error']);
    const message = typeof error?.['message'] === 'string' ? error['message'] : 'the MiniMax task failed';
    return { state: 'failed', error: { code: taskErrorCode(error?.['code']), message } };
  }
  // The gateway polls only tasks it did not cancel: this one was cancelled at MiniMax by someone else.
  if (status === 'cancelled') return { state: 'failed', error: { code: 'upstream_task_cancelled', message: 'the upstream task was cancelled at the provider' } };
  // MiniMax's query reference lists no `expired`, but a task that times out in its queue is an
  // end every video provider has (Ark's `expired`): read as a refunded failure, not as an unknown
  // status retried until the task fails upstream_unavailable (not checked against the provider).
  if (status === 'expired') return { state: 'failed', error: { code: 'upstream_task_expired', message: 'the upstream task expired before it ran' } };
  if (status !== 'succeeded') throw new UpstreamError(502, `channel ${channel}: MiniMax reported an unknown task status ${JSON.stringify(status)}`, null, 'protocol');
  const url = record(task?.['content'])?.['url'];
  if (typeof url !== 'string' || url === '') return { state: 'failed', error: { code: 'task_failed', message: 'MiniMax reported success without a video' } };
  const usage = record(task?.['usage']);
  const tokens = usage?.['completion_tokens'];
  return {
    state: 'succeeded',
    video_url: url,
    // MiniMax returns no last frame, and does not say how long the URL lasts (not checked against the provider).
    last_frame_url: null,
    video_url_expires_at: null,
    usage: { duration_seconds: usage?.['output_seconds'] ?? task?.['duration'], resolution: task?.['resolution'], completion_tokens: typeof tokens === 'number' ? tokens : null },
  };
}

/** The answer to a cancel (`{task_id, action, status}`); MiniMax's refusal (a running task, an unknown id) is thrown as the gateway's. */
export function readCancelled(answer: WireAnswer, channel: string): void {
  successBody(answer, channel);
}

/**
 * MiniMax's video tasks behind the gateway's video-task seam. MiniMax documents no client request
 * id (nor any idempotency key), so the gateway's task id is not sent.
 */
export const minimaxVideoTasks: VideoTaskAdapter = {
  create: async (transport, ask) => readCreated(await transport.call(createVideoTask(ask)), transport.name),
  get: async (transport, upstreamId) => readTask(await transport.call(queryVideoTask(upstreamId)), transport.name),
  cancel: async (transport, upstreamId) => readCancelled(await transport.call(cancelVideoTask(upstreamId)), transport.name),
};
