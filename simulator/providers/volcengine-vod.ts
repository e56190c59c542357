import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { volcengineOpenapiProtocol } from '../../src/upstreams/volcengine-openapi/protocol';
import { directivesOfUrl } from '../directives';
import { originOf, sendBytes } from '../files';
import { HttpError, sendJson } from '../http';
import { mp4 } from '../media';
import type { ExtraRoute } from '../route';
import { SimTaskStore, simTaskPhase, type SimTask } from '../task-store';
import { compactTime, OpenApiError, type ServiceActions } from './volcengine-actions';

/**
 * Volcengine VOD (service `vod`, region `cn-north-1`, the real host https://vod.volcengineapi.com),
 * simulated inside the Volcengine OpenAPI at `/volcengine/` (simulator/providers/volcengine-openapi.ts
 * checks the signature and dispatches here for requests signed for `vod`). The Actions the
 * gateway's subtitle erase uses, at their Versions (src/upstreams/volcengine-openapi/vod-erase.ts
 * cites their references); parameters in the query (GET) or a JSON body (POST):
 *
 * - `UploadMediaByUrl` (2020-08-01) `{SpaceName, URLSets}` (URLSets a JSON array, as text in a
 *   query) → `{Data: [{JobId, SourceUrl}]}`: the pull is `process` for ~30 ms, then `success` with a
 *   new Vid (every call a new pull: VOD documents no idempotency for it); `QueryUploadTaskInfo`
 *   (2020-08-01) `{JobIds}` (comma separated) → `{Data: {MediaInfoList: [{JobId, SourceUrl, State,
 *   Vid, SpaceName, SourceInfo?: {Duration, Format, …}}], NotExistJobIds}}`.
 * - `StartExecution` (2025-01-01) `{SpaceName?, Input: {Type: Vid, Vid}, Operation: {Type: Task,
 *   Task: {Type: Erase, Erase: {Mode: Auto | Manual, Auto?: {Type, Locations?}, Manual?:
 *   {Locations}}}}, Control?}` → `{RunId}`; a Vid of another space than `SpaceName` is not found.
 *   Idempotent as VOD documents it (https://www.volcengine.com/docs/4/1218689): a request whose
 *   space, Input, Operation and `Control.ClientToken` (or its absence) equal an unfinished run's
 *   answers that run's RunId; once it has finished, the same request starts a new run.
 *   `GetExecution` (2025-01-01) `{RunId}` → `{RunId, Status: PendingStart | Running |
 *   Success | Failed, Code?, SpaceName, Meta, Input, Operation, Control, Output?: {Type: Task, Task:
 *   {Type: Erase, Erase: {Duration, File: {Vid, FileName, Size}}}}}`. No Action stops an execution.
 * - `GetPlayInfo` (2020-08-01) `{Vid}` → `{Vid, Duration, PlayInfoList: [{Format: mp4, MainPlayUrl,
 *   …}]}`, the link a real MP4 of the video's length (`GET /volcengine/sim/vod/files/:vid.mp4`).
 *
 * Directives ride in the client's video URL (the upload's SourceUrl), in its `sim` query parameter:
 * `?sim=delay=800` (the erase's time), `?sim=duration=12` (the video's seconds; default 10),
 * `?sim=fail` (the execution `Failed`), `?sim=status=422` (UploadMediaByUrl answers that status),
 * `?sim=upload-fail` (the pull `fail`s), `?sim=hold` (the execution waits for
 * `POST /volcengine/sim/vod/executions/:runId/release`). `GET /volcengine/sim/vod/executions/:runId`
 * shows an execution's status and how often it was read (a test's view of the provider's side).
 */

const MEDIA_VERSION = '2020-08-01';
const EXECUTION_VERSION = '2025-01-01';
const UPLOAD_MS = 30;
const DEFAULT_SECONDS = 10;
const FILES_ROUTE = '/sim/vod/files';

interface SimMedia {
  readonly vid: string;
  readonly space: string;
  readonly sourceUrl: string;
  readonly seconds: number;
  readonly createdAt: number;
}

interface SimUpload {
  readonly jobId: string;
  readonly space: string;
  readonly sourceUrl: string;
  readonly readyAt: number;
  readonly fails: boolean;
  readonly vid: string;
}

interface SimExecution extends SimTask {
  readonly source: SimMedia;
  readonly space: string;
  readonly operation: Record<string, unknown>;
  readonly control: Record<string, unknown>;
  /** GetExecution calls so far. */
  reads: number;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

function invalid(message: string): OpenApiError {
  return new OpenApiError(400, 'InvalidParameter', message);
}

function objectAt(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(`${name} must be an object`);
  return value as Record<string, unknown>;
}

/** A list parameter: a JSON array, or its text as a query carries it. */
function listAt(value: unknown, name: string): unknown[] {
  let list = value;
  if (typeof value === 'string') {
    try {
      list = JSON.parse(value);
    } catch {
      throw invalid(`${name} is not a JSON array`);
    }
  }
  if (!Array.isArray(list) || list.length === 0) throw invalid(`${name} must be a non-empty array`);
  return list;
}

/** Locations of an erase: each `{RatioLocation: {TopLeftX, TopLeftY, BottomRightX, BottomRightY}}`, a box inside the frame. */
function checkLocations(value: unknown, name: string): void {
  listAt(value, name).forEach((location, i) => {
    const box = objectAt(objectAt(location, `${name}[${i}]`).RatioLocation, `${name}[${i}].RatioLocation`);
    const [x1, y1, x2, y2] = ['TopLeftX', 'TopLeftY', 'BottomRightX', 'BottomRightY'].map((k) => box[k]);
    const inFrame = [x1, y1, x2, y2].every((n) => typeof n === 'number' && n >= 0 && n <= 1);
    if (!inFrame || (x1 as number) >= (x2 as number) || (y1 as number) >= (y2 as number)) throw invalid(`${name}[${i}].RatioLocation must be a box inside the frame, its top left before its bottom right`);
  });
}

/** JSON text with every object's keys sorted: equal values, equal text, whatever order their members came in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function checkErase(operation: Record<string, unknown>): void {
  const task = objectAt(operation.Task, 'Operation.Task');
  if (operation.Type !== 'Task' || task.Type !== 'Erase') throw invalid('the simulated VOD runs Operation.Type Task of Task.Type Erase only');
  const erase = objectAt(task.Erase, 'Operation.Task.Erase');
  if (erase.Mode === 'Auto') {
    const auto = objectAt(erase.Auto, 'Erase.Auto');
    if (auto.Type !== 'Subtitle' && auto.Type !== 'Text') throw invalid('Erase.Auto.Type must be Subtitle or Text');
    if (auto.Locations !== undefined) checkLocations(auto.Locations, 'Erase.Auto.Locations');
  } else if (erase.Mode === 'Manual') {
    checkLocations(objectAt(erase.Manual, 'Erase.Manual').Locations, 'Erase.Manual.Locations');
  } else {
    throw invalid('Erase.Mode must be Auto or Manual');
  }
}

/** `2026-05-20T16:33:50+08:00`: the provider's times (UTC+8, to the second). */
function beijingTime(ms: number): string {
  return `${new Date(ms + 8 * 3_600_000).toISOString().slice(0, 19)}+08:00`;
}

export interface SimulatedVod {
  readonly actions: ServiceActions;
  readonly routes: ExtraRoute[];
}

export function simulatedVod(): SimulatedVod {
  const media = new Map<string, SimMedia>();
  const uploads = new Map<string, SimUpload>();
  const executions = new SimTaskStore<SimExecution>('vod', 'execution', () => hex(16));
  /** The RunId of each StartExecution request by what VOD's idempotency compares. */
  const runsByRequest = new Map<string, string>();

  const fileUrl = (req: IncomingMessage, vid: string) => `${originOf(req.headers)}${volcengineOpenapiProtocol.simulatorPrefix}${FILES_ROUTE}/${vid}.mp4`;

  /** The erased copy of a finished execution, made on first sight (`NewVid`). */
  function outputOf(execution: SimExecution): SimMedia {
    const vid = `v0${execution.id.slice(0, 18)}erase`;
    let output = media.get(vid);
    if (!output) {
      output = { vid, space: execution.space, sourceUrl: execution.source.sourceUrl, seconds: execution.source.seconds, createdAt: execution.finishAt };
      media.set(vid, output);
    }
    return output;
  }

  function uploadState(upload: SimUpload): 'process' | 'success' | 'fail' {
    if (Date.now() < upload.readyAt) return 'process';
    if (upload.fails) return 'fail';
    if (!media.has(upload.vid)) {
      const d = directivesOfUrl(upload.sourceUrl);
      const declared = typeof d.raw['duration'] === 'string' && /^\d{1,5}$/.test(d.raw['duration']) ? Number(d.raw['duration']) : DEFAULT_SECONDS;
      media.set(upload.vid, { vid: upload.vid, space: upload.space, sourceUrl: upload.sourceUrl, seconds: Math.max(1, declared), createdAt: upload.readyAt });
    }
    return 'success';
  }

  const actions: ServiceActions = {
    UploadMediaByUrl: {
      version: MEDIA_VERSION,
      run(p) {
        const space = p.SpaceName;
        if (typeof space !== 'string' || space === '') throw new OpenApiError(400, 'MissingParameter.SpaceName', 'SpaceName is required');
        const data = listAt(p.URLSets, 'URLSets').map((raw, i) => {
          const set = objectAt(raw, `URLSets[${i}]`);
          const sourceUrl = set.SourceUrl;
          if (typeof sourceUrl !== 'string' || !/^https?:\/\//.test(sourceUrl)) throw invalid(`URLSets[${i}].SourceUrl must be an http(s) URL`);
          const d = directivesOfUrl(sourceUrl);
          if (d.status) throw new OpenApiError(d.status, 'SimulatedError', `simulated HTTP ${d.status}`);
          const jobId = hex(16);
          uploads.set(jobId, { jobId, space, sourceUrl, readyAt: Date.now() + UPLOAD_MS, fails: d.raw['upload-fail'] !== undefined, vid: `v0${hex(9)}sim` });
          return { JobId: jobId, SourceUrl: sourceUrl };
        });
        return { Data: data };
      },
    },
    QueryUploadTaskInfo: {
      version: MEDIA_VERSION,
      run(p) {
        if (typeof p.JobIds !== 'string' || p.JobIds === '') throw new OpenApiError(400, 'MissingParameter.JobIds', 'JobIds is required');
        const ids = p.JobIds.split(',').map((id) => id.trim()).filter(Boolean);
        const known = ids.filter((id) => uploads.has(id));
        const list = known.map((id) => {
          const upload = uploads.get(id)!;
          const state = uploadState(upload);
          const stored = state === 'success' ? media.get(upload.vid)! : null;
          const sourceInfo = stored ? { SourceInfo: { FileType: 'video', Format: 'mp4', Codec: 'h264', Width: 1280, Height: 720, Duration: stored.seconds, Size: mp4(stored.seconds, stored.createdAt).length } } : {};
          return { JobId: id, SourceUrl: upload.sourceUrl, State: state, Vid: stored ? upload.vid : '', SpaceName: upload.space, ...sourceInfo };
        });
        return { Data: { MediaInfoList: list, NotExistJobIds: ids.filter((id) => !uploads.has(id)) } };
      },
    },
    StartExecution: {
      version: EXECUTION_VERSION,
      run(p, req) {
        const input = objectAt(p.Input, 'Input');
        if (input.Type !== 'Vid') throw invalid('the simulated VOD takes Input.Type Vid only');
        const source = typeof input.Vid === 'string' ? media.get(input.Vid) : undefined;
        if (p.SpaceName !== undefined && typeof p.SpaceName !== 'string') throw invalid('SpaceName must be a string');
        const space = p.SpaceName ?? source?.space;
        if (!source || source.space !== space) throw new OpenApiError(404, 'NotFound.Vid', `no media ${String(input.Vid)} in space ${String(space)}`);
        const operation = objectAt(p.Operation, 'Operation');
        checkErase(operation);
        const control = p.Control === undefined ? {} : objectAt(p.Control, 'Control');
        const request = canonicalJson([space, input, operation, control.ClientToken ?? null]);
        const earlier = executions.get(runsByRequest.get(request) ?? '');
        if (earlier && ['queued', 'running'].includes(simTaskPhase(earlier))) return { RunId: earlier.id };
        const execution = executions.add(req, 'erase', directivesOfUrl(source.sourceUrl), (task) => ({ ...task, source, space, operation, control, reads: 0 }));
        runsByRequest.set(request, execution.id);
        return { RunId: execution.id };
      },
    },
    GetExecution: {
      version: EXECUTION_VERSION,
      run(p) {
        const execution = typeof p.RunId === 'string' ? executions.get(p.RunId) : undefined;
        if (!execution) throw new OpenApiError(404, 'NotFound.RunId', `no execution ${String(p.RunId)}`);
        execution.reads += 1;
        const phase = simTaskPhase(execution);
        const status = ({ queued: 'PendingStart', running: 'Running', succeeded: 'Success', failed: 'Failed', cancelled: 'Terminated' } as const)[phase];
        const ended = phase === 'succeeded' || phase === 'failed';
        const output = phase === 'succeeded' ? outputOf(execution) : null;
        return {
          RunId: execution.id,
          Status: status,
          ...(phase === 'failed' ? { Code: 'SubtitleEraseFailed' } : {}),
          SpaceName: execution.space,
          Meta: {
            SpaceName: execution.space,
            Trigger: 'API',
            CreateTime: beijingTime(execution.createdAt),
            ...(phase !== 'queued' ? { StartTime: beijingTime(execution.createdAt + (execution.finishAt - execution.createdAt) / 5) } : {}),
            ...(ended ? { EndTime: beijingTime(execution.finishAt) } : {}),
          },
          Input: { Type: 'Vid', Vid: execution.source.vid },
          Operation: execution.operation,
          Control: execution.control,
          ...(output
            ? { Output: { Type: 'Task', Task: { Type: 'Erase', Erase: { Duration: output.seconds, File: { Vid: output.vid, FileName: `${output.vid}.mp4`, Size: String(mp4(output.seconds, output.createdAt).length) } } } } }
            : {}),
        };
      },
    },
    GetPlayInfo: {
      version: MEDIA_VERSION,
      run(p, req) {
        const item = typeof p.Vid === 'string' ? media.get(p.Vid) : undefined;
        if (!item) throw new OpenApiError(404, 'NotFound.Vid', `no media ${String(p.Vid)} in this account`);
        const url = fileUrl(req, item.vid);
        const size = mp4(item.seconds, item.createdAt).length;
        return {
          Vid: item.vid,
          Status: 10,
          PosterUrl: '',
          Duration: item.seconds,
          FileType: 'video',
          EnableAdaptive: false,
          TotalCount: 1,
          PlayInfoList: [{ FileId: `${item.vid}-origin`, Md5: '', FileType: 'video', Format: 'mp4', Codec: 'h264', Definition: 'origin', MainPlayUrl: url, BackupPlayUrl: url, Bitrate: 0, Width: 1280, Height: 720, Size: size, Duration: item.seconds }],
        };
      },
    },
  };

  const routes: ExtraRoute[] = [
    {
      method: 'GET',
      path: `${FILES_ROUTE}/:name`,
      handler: ({ res, params }) => {
        const item = media.get(/^(.+)\.mp4$/.exec(params.name!)?.[1] ?? '');
        if (!item) throw new HttpError(404, 'no such file', 'NotFound');
        sendBytes(res, 'video/mp4', mp4(item.seconds, item.createdAt));
      },
    },
    {
      method: 'GET',
      path: '/sim/vod/executions/:id',
      handler: ({ res, params }) => {
        const execution = executions.find(params.id!);
        sendJson(res, 200, { RunId: execution.id, Phase: simTaskPhase(execution), Reads: execution.reads, CreatedAt: compactTime(execution.createdAt) });
      },
    },
    executions.releaseRoute('/sim/vod/executions/:id/release'),
  ];

  return { actions, routes };
}
