/**
 * Volcengine Ark content-generation tasks for the Seedance video models: the requests that create,
 * get and cancel a task, and the reading of Ark's answers into what the gateway keeps.
 *
 * References (Volcengine Ark / BytePlus ModelArk, the same API under `…/api/v3`):
 * - create: https://www.volcengine.com/docs/82379/1520757 (BytePlus: https://docs.byteplus.com/en/docs/ModelArk/1520757)
 * - get: https://www.volcengine.com/docs/82379/1521309 (statuses `queued`, `running`, `cancelled`,
 *   `succeeded`, `failed`, `expired`; `content.video_url` valid for 24 hours; `usage`
 *   `{completion_tokens, total_tokens}`; the task's `duration`, `resolution`, `ratio`, `seed`,
 *   `framespersecond`, `service_tier`, `execution_expires_after` at the top level)
 * - cancel or delete: https://www.volcengine.com/docs/82379/1521720 (`DELETE …/tasks/{id}`: a
 *   queued task becomes `cancelled`; a finished one is deleted; a running one cannot be)
 * - errors: https://www.volcengine.com/docs/82379/1299023 (read by the protocol's errorOf, protocol.ts)
 */
import { protocolError, recordOf } from '../answer-fields';
import type { VideoTaskAdapter, VideoTaskAsk, VideoTaskReading } from '../video-task';
import type { WireAnswer, WireRequest } from '../wire';
import { arkProtocol } from './protocol';

const TASKS_PATH = '/contents/generations/tasks';

/**
 * `POST /contents/generations/tasks`. The final step of a draft sends only the draft task and what
 * Ark lets it choose anew (resolution, watermark, last frame, tier): the prompt, references,
 * duration, ratio, seed and audio come from the draft. `camera_fixed` is sent only when asked for
 * and not with reference images, which Ark's reference says it does not take; `draft` and
 * `generate_audio` only when they apply. The gateway's task id goes as `X-Client-Request-Id`, the
 * request id Ark takes for tracing (whether Ark dedupes on it is not checked against the provider).
 */
export function createSeedanceTask(request: VideoTaskAsk, clientRequestId: string): WireRequest {
  const draft = request.draft_task;
  const finalOfDraft = draft !== null;
  const content = draft ? [{ type: 'draft_task', draft_task: { id: draft.upstream_id } }] : request.content;
  const body = {
    model: request.model,
    content,
    resolution: request.resolution,
    ...(finalOfDraft ? {} : { ratio: request.ratio, duration: request.duration, seed: request.seed }),
    ...(!finalOfDraft && request.draft ? { draft: true } : {}),
    ...(!finalOfDraft && request.generate_audio !== null ? { generate_audio: request.generate_audio } : {}),
    ...(!finalOfDraft && request.camera_fixed && request.mode !== 'references' ? { camera_fixed: true } : {}),
    return_last_frame: request.return_last_frame,
    watermark: request.watermark,
    service_tier: request.service_tier,
    ...(request.safety_identifier ? { safety_identifier: request.safety_identifier } : {}),
  };
  return { method: 'POST', path: TASKS_PATH, headers: { 'x-client-request-id': clientRequestId }, body, model: request.model };
}

/** `GET /contents/generations/tasks/{id}`. */
export function getSeedanceTask(upstreamId: string): WireRequest {
  return { method: 'GET', path: taskPath(upstreamId) };
}

/** `DELETE /contents/generations/tasks/{id}`: cancels a queued task (and deletes a finished one's record). */
export function cancelSeedanceTask(upstreamId: string): WireRequest {
  return { method: 'DELETE', path: taskPath(upstreamId) };
}

function taskPath(upstreamId: string): string {
  return `${TASKS_PATH}/${encodeURIComponent(upstreamId)}`;
}

/** The answer to a create: Ark's task id; an error answer throws the gateway's error for it (the protocol's errorOf). */
export function readCreatedSeedanceTask(answer: WireAnswer, channel: string): { upstreamId: string } {
  const body = okBody(answer, channel);
  const id = body['id'];
  if (typeof id !== 'string' || id === '') throw protocolError(channel, 'a created task without an id');
  return { upstreamId: id };
}

/**
 * The answer to a cancel. Ark answers a task it cannot cancel (running, already cancelled, unknown)
 * with an error, which is thrown as the gateway's (the caller decides whether a refusal matters).
 */
export function readCancelledSeedanceTask(answer: WireAnswer, channel: string): void {
  if (answer.status >= 400) throw arkProtocol.errorOf(answer, channel);
}

/** How long Ark keeps a generated video's URL valid, by its reference: 24 hours. */
export const ARK_VIDEO_URL_VALIDITY_SECONDS = 86_400;

/**
 * The answer to a get. Ark's `expired` (a task that did not run within its
 * `execution_expires_after`, a `flex` task's wait) and `cancelled` become failures with the
 * gateway's codes `upstream_task_expired` and `upstream_task_cancelled`: the gateway polls only the
 * tasks it has not cancelled, so a cancelled one here was cancelled by someone else (in Ark's
 * console, say), and the task must end as the spec's `failed`, refunded, its webhook sent. A
 * failure keeps Ark's code and message (e.g. `OutputVideoSensitiveContentDetected`).
 */
export function readSeedanceTask(answer: WireAnswer, channel: string): VideoTaskReading {
  const task = okBody(answer, channel);
  const status = task['status'];
  switch (status) {
    case 'queued':
    case 'running':
      return { state: 'pending', upstreamStatus: status };
    case 'succeeded':
      return succeeded(task);
    case 'failed':
      return { state: 'failed', error: reportedError(task['error'], 'task_failed', 'the upstream task failed') };
    case 'expired':
      return { state: 'failed', error: { code: 'upstream_task_expired', message: 'the upstream task expired before it ran (its execution_expires_after passed)' } };
    case 'cancelled':
      return { state: 'failed', error: { code: 'upstream_task_cancelled', message: 'the upstream task was cancelled at the provider' } };
    default:
      throw protocolError(channel, `a task with an unknown status ${JSON.stringify(status)}`);
  }
}

function succeeded(task: Readonly<Record<string, unknown>>): VideoTaskReading {
  const content = recordOf(task['content']);
  const videoUrl = content['video_url'];
  if (typeof videoUrl !== 'string' || videoUrl === '') return { state: 'failed', error: { code: 'task_failed', message: 'the upstream reported success without a video' } };
  const lastFrame = content['last_frame_url'];
  const usage = recordOf(task['usage']);
  const tokens = usage['completion_tokens'];
  return {
    state: 'succeeded',
    video_url: videoUrl,
    last_frame_url: typeof lastFrame === 'string' && lastFrame !== '' ? lastFrame : null,
    video_url_expires_at: videoUrlExpiresAt(videoUrl, task['updated_at']),
    usage: {
      duration_seconds: task['duration'],
      resolution: task['resolution'],
      completion_tokens: typeof tokens === 'number' && Number.isFinite(tokens) ? tokens : null,
    },
  };
}

/**
 * When Ark's video URL stops working. Ark's URLs are presigned object-storage (TOS) links: when
 * the link carries its signing time and lifetime (`X-Tos-Date`, `X-Tos-Expires`, TOS's presigned
 * URL query), that is when; otherwise 24 hours, Ark's stated validity, from the task's last update
 * (its success). Unknown (null) when neither is there, which the feature reads as never expiring.
 */
export function videoUrlExpiresAt(videoUrl: string, updatedAt: unknown): number | null {
  const signed = presignedExpiry(videoUrl);
  if (signed !== null) return signed;
  return typeof updatedAt === 'number' && Number.isFinite(updatedAt) ? updatedAt + ARK_VIDEO_URL_VALIDITY_SECONDS : null;
}

const TOS_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

function presignedExpiry(videoUrl: string): number | null {
  let query: URLSearchParams;
  try {
    query = new URL(videoUrl).searchParams;
  } catch {
    return null;
  }
  const date = TOS_DATE.exec(query.get('X-Tos-Date') ?? '');
  const lifetime = Number(query.get('X-Tos-Expires'));
  if (!date || !Number.isInteger(lifetime) || lifetime <= 0) return null;
  const [, y, mo, d, h, mi, s] = date.map(Number) as [number, number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, s) / 1000 + lifetime;
}

function reportedError(error: unknown, fallbackCode: string, fallbackMessage: string): { code: string; message: string } {
  const e = recordOf(error);
  const code = e['code'];
  const message = e['message'];
  return { code: typeof code === 'string' && code !== '' ? code : fallbackCode, message: typeof message === 'string' && message !== '' ? message : fallbackMessage };
}

/** The JSON object of a 2xx answer; an error status throws the gateway's error for it. */
function okBody(answer: WireAnswer, channel: string): Readonly<Record<string, unknown>> {
  if (answer.status >= 400) throw arkProtocol.errorOf(answer, channel);
  const body = answer.json();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw protocolError(channel, 'an answer that is not a JSON object');
  return body as Readonly<Record<string, unknown>>;
}

/** Ark's video tasks as the video feature runs them, through a channel of the `ark` protocol. */
export const arkVideoTasks: VideoTaskAdapter = {
  create: async (transport, ask, taskId) => readCreatedSeedanceTask(await transport.call(createSeedanceTask(ask, taskId)), transport.name),
  get: async (transport, upstreamId) => readSeedanceTask(await transport.call(getSeedanceTask(upstreamId)), transport.name),
  cancel: async (transport, upstreamId) => readCancelledSeedanceTask(await transport.call(cancelSeedanceTask(upstreamId)), transport.name),
};
