/**
 * Subtitle erase on Volcengine VOD (视频点播), Actions of the `vod` service of the Volcengine
 * OpenAPI at `https://vod.volcengineapi.com` (region `cn-north-1`), signed by the channel. VOD erases
 * media it stores, so one gateway task is a chain of two provider tasks:
 *
 * 1. `UploadMediaByUrl` (Version 2020-08-01, GET, `SpaceName` and `URLSets` as JSON text) pulls the
 *    client's video into the operator's space → `Result.Data[].JobId`; `QueryUploadTaskInfo`
 *    (`JobIds`) reads it → `Result.Data.MediaInfoList[] {JobId, State: init | process | success |
 *    fail, Vid, SourceInfo {Duration, …}}`. The pull is not idempotent: a repeat pulls a second copy.
 * 2. `StartExecution` (Version 2025-01-01, POST JSON) with `SpaceName`, `Input {Type: Vid}` and
 *    `Operation.Task {Type: Erase, Erase {Mode, Auto {Type, SubtitleFilter, Locations[].RatioLocation
 *    {TopLeftX, TopLeftY, BottomRightX, BottomRightY}}, NewVid}}`, `Control.ClientToken` →
 *    `Result.RunId`; `GetExecution` (`RunId`, GET) → `Result.Status` (PendingStart, Running,
 *    Success, Failed, Terminated), `Result.Code`, `Result.Output.Task.Erase {Duration, File {Vid,
 *    FileName, Size}, Info}`: the seconds of video output, which VOD bills by. VOD's idempotency
 *    (幂等行为说明): a StartExecution whose SpaceName, input, Operation and ClientToken all match an
 *    earlier one's answers that one's RunId while it has not finished, and starts a new run after.
 *
 * The erased copy is a new media (`NewVid`), fetched through `GetPlayInfo` (Version 2020-08-01,
 * `Vid`, `NeedOriginal=1`, `Ssl=1`) → `Result.PlayInfoList[].MainPlayUrl`. VOD publishes no way to
 * stop an execution: there is no cancel.
 *
 * References: 精细化字幕擦除 https://www.volcengine.com/docs/4/1555155 (billed by the output's
 * duration; the output keeps the input's resolution, at most 1080p), StartExecution
 * https://www.volcengine.com/docs/4/2124630 and its erase task page (BytePlus:
 * https://docs.byteplus.com/en/docs/byteplus-vod/reference-startexecution, `SpaceName`), 幂等行为说明
 * https://www.volcengine.com/docs/4/1218689, GetExecution https://www.volcengine.com/docs/4/1477170
 * (statuses), the request and answer structures of the official Go SDK
 * (github.com/volcengine/volcengine-go-sdk, service/vod20250101: StartExecutionInput with SpaceName,
 * EraseForStartExecutionInput, ConvertEraseForGetExecutionOutput), GetPlayInfo
 * https://www.volcengine.com/docs/4/2918, and the official Node SDK `@volcengine/openapi` (its VOD
 * service's UploadMediaByUrl, QueryUploadTaskInfo with `SourceInfo`, and GetPlayInfo, types and
 * Versions); ByteDance's own VOD erase sample (github.com/bytedance/agentkit-samples,
 * byted-byteplus-vod-precision-erasure) sends `Auto {Type: Subtitle, SubtitleFilter: {}}` as this
 * adapter does. What none of these settles is listed in docs/providers.md as not checked against
 * the provider.
 */
import { TaskRejected } from '../../tasks/kind';
import { isFetchableProviderLink, protocolError, recordOf } from '../answer-fields';
import type { EraseRegion, EraseTaskAdapter, EraseTaskAsk, EraseTaskReading } from '../erase-task';
import type { WireAnswer, WireRequest, WireTransport } from '../wire';
import { actionRequest, queryActionRequest, resultOf, stringField } from './envelope';

/** The Version of VOD's media Actions (upload, playback). */
export const VOD_MEDIA_VERSION = '2020-08-01';
/** The Version of VOD's media processing Actions (StartExecution, GetExecution). */
export const VOD_EXECUTION_VERSION = '2025-01-01';

/** The gateway's id of the provider's work: which of the two provider tasks it is, and its id there. */
const UPLOAD = 'upload:';
const RUN = 'run:';

/** Pulls the client's video into the space; the job's id is read by readUploadJob. */
export function uploadByUrlRequest(ask: EraseTaskAsk): WireRequest {
  const urlSet = { SourceUrl: ask.videoUrl, FileExtension: fileExtensionOf(ask.videoUrl), CallbackArgs: ask.taskId };
  return queryActionRequest('UploadMediaByUrl', VOD_MEDIA_VERSION, { SpaceName: ask.space, URLSets: JSON.stringify([urlSet]) });
}

/** `.mp4` from `https://cdn.example.com/clips/a.MP4?x=1`; `.mp4` when the path names none (VOD stores the file under it). */
function fileExtensionOf(videoUrl: string): string {
  const match = /\.([A-Za-z0-9]{1,8})$/.exec(new URL(videoUrl).pathname);
  return `.${(match?.[1] ?? 'mp4').toLowerCase()}`;
}

export function readUploadJob(answer: WireAnswer, channel: string): string {
  const data = resultOf(answer, channel).Data;
  const first = Array.isArray(data) ? (data[0] as Record<string, unknown> | undefined) : undefined;
  const jobId = first && typeof first.JobId === 'string' && first.JobId !== '' ? first.JobId : null;
  if (!jobId) throw protocolError(channel, 'an upload without a JobId');
  return jobId;
}

export function uploadJobRequest(jobId: string): WireRequest {
  return queryActionRequest('QueryUploadTaskInfo', VOD_MEDIA_VERSION, { JobIds: jobId });
}

export type UploadJob =
  | { readonly state: 'pending' }
  /** `seconds`: the stored video's length (`SourceInfo.Duration`), null when VOD reports none. */
  | { readonly state: 'stored'; readonly vid: string; readonly seconds: number | null }
  | { readonly state: 'failed'; readonly message: string };

/** The pull of one job: pending while `init` or `process`, stored with its Vid and length on `success`, failed on `fail` or an unknown job. */
export function readUploadJobState(answer: WireAnswer, channel: string, jobId: string): UploadJob {
  const data = resultOf(answer, channel).Data as { MediaInfoList?: unknown; NotExistJobIds?: unknown } | undefined;
  if (Array.isArray(data?.NotExistJobIds) && data.NotExistJobIds.includes(jobId)) return { state: 'failed', message: `the provider knows no upload job ${jobId}` };
  const job = Array.isArray(data?.MediaInfoList) ? (data.MediaInfoList as Record<string, unknown>[]).find((m) => m?.JobId === jobId) : undefined;
  if (!job) throw protocolError(channel, `no state of the upload job ${jobId}`);
  const state = job.State;
  if (state === 'init' || state === 'process') return { state: 'pending' };
  if (state === 'fail') return { state: 'failed', message: 'the provider could not fetch the video from video_url' };
  const vid = stringField(job, 'Vid');
  if (state === 'success' && vid) return { state: 'stored', vid, seconds: secondsOf(recordOf(job.SourceInfo)['Duration']) };
  throw protocolError(channel, `an upload state it does not document: ${String(state)}`);
}

function secondsOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : null;
}

/** The erase of a stored video: VOD's OCR finds the subtitles, within the regions when the client gave them. */
export function startEraseRequest(vid: string, ask: EraseTaskAsk): WireRequest {
  const auto = { Type: 'Subtitle', SubtitleFilter: {}, ...(ask.regions ? { Locations: ask.regions.map(ratioLocation) } : {}) };
  return actionRequest('StartExecution', VOD_EXECUTION_VERSION, {
    // The space is part of what VOD's idempotency compares (with the input, Operation and ClientToken).
    SpaceName: ask.space,
    Input: { Type: 'Vid', Vid: vid },
    Operation: { Type: 'Task', Task: { Type: 'Erase', Erase: { Mode: 'Auto', Auto: auto, NewVid: true } } },
    Control: { ClientToken: ask.taskId },
  });
}

/** A region as VOD's corners, fractions of the frame from its top left (rounded off the float noise of x + width). */
function ratioLocation(r: EraseRegion): { RatioLocation: Record<string, number> } {
  const ratio = (n: number) => Math.min(1, Math.round(n * 1e6) / 1e6);
  return { RatioLocation: { TopLeftX: ratio(r.x), TopLeftY: ratio(r.y), BottomRightX: ratio(r.x + r.width), BottomRightY: ratio(r.y + r.height) } };
}

export function readRunId(answer: WireAnswer, channel: string): string {
  const runId = stringField(resultOf(answer, channel), 'RunId');
  if (!runId) throw protocolError(channel, 'an execution without a RunId');
  return runId;
}

export function executionRequest(runId: string): WireRequest {
  return queryActionRequest('GetExecution', VOD_EXECUTION_VERSION, { RunId: runId });
}

export type Execution =
  | { readonly state: 'pending'; readonly upstreamStatus: 'queued' | 'running' }
  | { readonly state: 'succeeded'; readonly outputVid: string; readonly erase: Readonly<Record<string, unknown>> }
  | { readonly state: 'failed'; readonly error: { readonly code: string; readonly message: string } };

/** An execution's state; on `Success`, the erase output (its `File.Vid` the erased copy). */
export function readExecution(answer: WireAnswer, channel: string): Execution {
  const result = resultOf(answer, channel);
  const status = result.Status;
  if (status === 'PendingStart') return { state: 'pending', upstreamStatus: 'queued' };
  if (status === 'Running') return { state: 'pending', upstreamStatus: 'running' };
  if (status === 'Failed') return { state: 'failed', error: { code: stringField(result, 'Code') ?? 'task_failed', message: 'the provider could not erase the subtitles' } };
  // The gateway never stops an execution (VOD has no cancel), so someone else did.
  if (status === 'Terminated') return { state: 'failed', error: { code: 'upstream_task_cancelled', message: 'the provider terminated the erase' } };
  if (status !== 'Success') throw protocolError(channel, `an execution status it does not document: ${String(status)}`);
  const erase = ((result.Output as { Task?: { Erase?: unknown } } | undefined)?.Task?.Erase ?? null) as Record<string, unknown> | null;
  const file = erase?.File as Record<string, unknown> | undefined;
  const outputVid = file ? stringField(file, 'Vid') : null;
  if (!erase || !outputVid) throw protocolError(channel, 'a finished erase without its output File.Vid');
  return { state: 'succeeded', outputVid, erase };
}

export function playInfoRequest(vid: string): WireRequest {
  return queryActionRequest('GetPlayInfo', VOD_MEDIA_VERSION, { Vid: vid, NeedOriginal: '1', Ssl: '1' });
}

/**
 * A link to the erased video (an MP4 first), or null while VOD has none to play yet. The gateway
 * downloads it, so only a link it may fetch is taken (https on a public host, or the channel's own
 * origin); links that are all of another kind fail the task.
 */
export function readPlayUrl(answer: WireAnswer, channel: string, channelOrigin?: string): string | null {
  const list = resultOf(answer, channel).PlayInfoList;
  const items = (Array.isArray(list) ? list : []).map(recordOf);
  const playable = items.filter((item) => typeof item['MainPlayUrl'] === 'string' && item['MainPlayUrl'] !== '');
  const fetchable = playable.filter((item) => isFetchableProviderLink(item['MainPlayUrl'] as string, channelOrigin));
  if (playable.length > 0 && fetchable.length === 0) {
    throw new TaskRejected({ code: 'upstream_link_refused', message: `channel ${channel} answered play links the gateway does not fetch (https on a public host only)` });
  }
  const chosen = fetchable.find((item) => String(item['Format']).toLowerCase() === 'mp4') ?? fetchable[0];
  return chosen ? (chosen['MainPlayUrl'] as string) : null;
}

async function readUpload(transport: WireTransport, jobId: string, ask: EraseTaskAsk): Promise<EraseTaskReading> {
  const job = readUploadJobState(await transport.call(uploadJobRequest(jobId)), transport.name, jobId);
  if (job.state === 'pending') return { state: 'pending', upstreamStatus: 'queued' };
  if (job.state === 'failed') return { state: 'failed', error: { code: 'video_fetch_failed', message: job.message } };
  // VOD bills the erase by the output's length: a video longer than the model takes is not erased.
  if (job.seconds !== null && job.seconds > ask.maxSeconds) {
    return { state: 'failed', error: { code: 'video_too_long', message: `the video at video_url lasts ${Math.ceil(job.seconds)} s; at most ${ask.maxSeconds} s can be erased` } };
  }
  // A repeat after a crash (the RunId not recorded) sends the same request: VOD answers the first
  // run's RunId while that run is unfinished (幂等行为说明), and starts a second run after it.
  const runId = readRunId(await transport.call(startEraseRequest(job.vid, ask)), transport.name);
  return { state: 'pending', upstreamStatus: 'queued', upstreamId: `${RUN}${runId}` };
}

async function readRun(transport: WireTransport, runId: string): Promise<EraseTaskReading> {
  const execution = readExecution(await transport.call(executionRequest(runId)), transport.name);
  if (execution.state !== 'succeeded') return execution;
  const videoUrl = readPlayUrl(await transport.call(playInfoRequest(execution.outputVid)), transport.name, transport.origin);
  // Erased but not yet playable: read again on the next poll.
  if (!videoUrl) return { state: 'pending', upstreamStatus: 'running' };
  return { state: 'succeeded', videoUrl, durationSeconds: execution.erase.Duration, result: execution.erase };
}

export const vodSubtitleErase: EraseTaskAdapter = {
  submit: async (transport, ask) => ({ upstreamId: `${UPLOAD}${readUploadJob(await transport.call(uploadByUrlRequest(ask)), transport.name)}` }),
  get: async (transport, upstreamId, ask) => {
    if (upstreamId.startsWith(UPLOAD)) return readUpload(transport, upstreamId.slice(UPLOAD.length), ask);
    if (upstreamId.startsWith(RUN)) return readRun(transport, upstreamId.slice(RUN.length));
    // Not an id this adapter recorded: nothing to read, ever.
    throw new TaskRejected({ code: 'upstream_id_unknown', message: `${upstreamId} is not an id of VOD's subtitle erase` });
  },
  cancel: null,
};
