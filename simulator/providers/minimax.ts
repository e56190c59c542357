import type { ServerResponse } from 'node:http';
import { parseDirectives } from '../directives';
import { originOf, sendBytes } from '../files';
import { passGate } from '../gates';
import { sendJson } from '../http';
import { mp4 } from '../media';
import type { ExtraRoute, SimContext } from '../route';
import { simTaskPhase, SimTaskStore, type SimTask } from '../task-store';
import { hasAcceptedBearer } from './credentials';
import { mountPath, type SimulatedProvider } from './provider';

/**
 * MiniMax's video generation v2 (the MiniMax-H3 model), as https://platform.minimax.cn/docs/api-reference/video-generation
 * describes it, at the simulator's `/minimax` prefix (the base URL of a MiniMax channel):
 * `POST /v2/video_generation` → `{task_id}`, `GET /v2/query/video_generation/{task_id}` →
 * `{task: {id, status, content: {url}, resolution, duration, usage, error}}`, `DELETE
 * /v2/video_generation/{task_id}` (a queued task is cancelled, a finished one deleted, a running one
 * refused). Ids are strings of digits, statuses queued | running | succeeded | failed | cancelled,
 * and a refusal is `{type: "error", error: {type, message, http_code}, request_id}` with MiniMax's
 * error types; the Bearer key (the channels file's placeholder) is checked first (authorized_error 401).
 *
 * It checks what the reference says the provider checks: the model, exactly one non-empty text
 * item, the resolution and duration of the model, a concrete ratio for text-to-video, frames never
 * mixed with references. Directives in the text, as the other simulated video providers:
 * `[sim:fail]` the task fails (code 1013), `[sim:task-error=CODE]` it fails with MiniMax's CODE,
 * `[sim:delay=MS]`, `[sim:hold]` (released by `POST /minimax/sim/videos/{id}/release`),
 * `[sim:gate=NAME]`, `[sim:url-ttl=MS]` (the `expires` of the video URL; MiniMax reports none),
 * `[sim:usage-duration=S]` and `[sim:usage-resolution=R]` (what the finished task reports),
 * `[sim:expire]` (it ends `expired` instead of succeeding, as Ark's simulated tasks do: MiniMax's
 * reference lists no such status, so this one is not checked against the provider). An
 * image URL containing `sim-real-person` is refused as sensitive input (422). The simulator's own
 * controls (release, the video files) sit under its mount, at `/minimax/sim/`.
 */

const MODELS: Readonly<Record<string, { resolutions: readonly string[]; minSeconds: number }>> = {
  'MiniMax-H3': { resolutions: ['768P', '2K'], minSeconds: 4 },
  'MiniMax-H3-Max': { resolutions: ['480P', '768P'], minSeconds: 5 },
};
const MAX_SECONDS = 15;
const RATIOS = ['adaptive', '21:9', '16:9', '4:3', '1:1', '3:4', '9:16'];
const FRAME_ROLES = ['first_frame', 'last_frame'];

interface MinimaxSimTask extends SimTask {
  readonly resolution: string;
  readonly duration: number;
  readonly ratio: string;
  readonly images: number;
  readonly urlTtlMs: number;
  readonly taskError: number | undefined;
  readonly usageDuration: number | undefined;
  readonly usageResolution: string | undefined;
  /** `[sim:expire]`: the task ends `expired` when its time comes. */
  readonly expire: boolean;
  deleted: boolean;
}

interface CreateBody {
  model?: unknown;
  content?: unknown;
  resolution?: unknown;
  duration?: unknown;
  ratio?: unknown;
}

interface Item {
  type?: unknown;
  text?: unknown;
  role?: unknown;
  image_url?: { url?: unknown };
}

type ErrorType = 'bad_request_error' | 'authorized_error' | 'unprocessable_entity_error';
const STATUS: Readonly<Record<ErrorType, number>> = { bad_request_error: 400, authorized_error: 401, unprocessable_entity_error: 422 };

class MinimaxError extends Error {
  constructor(
    readonly type: ErrorType,
    message: string,
  ) {
    super(message);
  }
}

let requests = 0;
function sendMinimaxError(res: ServerResponse, type: ErrorType, message: string): void {
  const status = STATUS[type];
  sendJson(res, status, { type: 'error', error: { type, message, http_code: status }, request_id: `sim-req-${++requests}` });
}

/** What MiniMax checks of a create body; the text item's directives. */
function checkCreate(b: CreateBody): { model: string; items: Item[]; text: string; resolution: string; duration: number; ratio: string } {
  const model = typeof b.model === 'string' ? MODELS[b.model] : undefined;
  if (!model) throw new MinimaxError('bad_request_error', `model ${JSON.stringify(b.model)} is not supported`);
  if (!Array.isArray(b.content)) throw new MinimaxError('bad_request_error', 'content is required');
  const items = b.content as Item[];
  const texts = items.filter((i) => i.type === 'text');
  if (texts.length !== 1 || typeof texts[0]!.text !== 'string' || texts[0]!.text === '') throw new MinimaxError('bad_request_error', 'content must hold exactly one non-empty text item');
  if (typeof b.resolution !== 'string' || !model.resolutions.includes(b.resolution)) throw new MinimaxError('bad_request_error', `resolution must be one of ${model.resolutions.join(', ')}`);
  if (typeof b.duration !== 'number' || !Number.isInteger(b.duration) || b.duration < model.minSeconds || b.duration > MAX_SECONDS) {
    throw new MinimaxError('bad_request_error', `duration must be an integer from ${model.minSeconds} to ${MAX_SECONDS}`);
  }
  const ratio = b.ratio ?? 'adaptive';
  if (typeof ratio !== 'string' || !RATIOS.includes(ratio)) throw new MinimaxError('bad_request_error', `ratio must be one of ${RATIOS.join(', ')}`);
  const media = items.filter((i) => i.type !== 'text');
  if (media.length === 0 && ratio === 'adaptive') throw new MinimaxError('bad_request_error', 'text-to-video needs a concrete ratio');
  const frames = media.some((i) => i.type === 'image_url' && (i.role === undefined || FRAME_ROLES.includes(String(i.role))));
  if (frames && media.some((i) => typeof i.role === 'string' && i.role.startsWith('reference_'))) {
    throw new MinimaxError('bad_request_error', 'first/last frames cannot be mixed with reference media');
  }
  for (const item of media) {
    const url = item.image_url?.url;
    if (typeof url === 'string' && url.includes('sim-real-person')) throw new MinimaxError('unprocessable_entity_error', 'input image contains sensitive content');
    if (typeof url === 'string' && !/^https?:\/\//i.test(url) && !url.startsWith('mm_file://')) throw new MinimaxError('bad_request_error', `image url ${url} cannot be fetched`);
  }
  return { model: b.model as string, items, text: texts[0]!.text as string, resolution: b.resolution, duration: b.duration, ratio };
}

function optionalNumber(value: string | true | undefined): number | undefined {
  return typeof value === 'string' && Number.isFinite(Number(value)) ? Number(value) : undefined;
}

function minimaxRoutes(): ExtraRoute[] {
  // MiniMax's task ids are long strings of digits.
  const tasks = new SimTaskStore<MinimaxSimTask>('', 'task', (seq, now) => `${now}${String(seq).padStart(4, '0')}`);

  /** Checks the Bearer key, then runs the handler; MiniMax's refusals answered in its shape. */
  const authed = (handler: (ctx: SimContext) => void | Promise<void>) => async (ctx: SimContext) => {
    if (!hasAcceptedBearer(ctx, 'minimax')) return sendMinimaxError(ctx.res, 'authorized_error', 'invalid api key');
    try {
      await handler(ctx);
    } catch (err) {
      if (!(err instanceof MinimaxError)) throw err;
      sendMinimaxError(ctx.res, err.type, err.message);
    }
  };

  /** A task of this account, not deleted; else MiniMax's 400. */
  const find = (id: string): MinimaxSimTask => {
    const task = tasks.get(id);
    if (!task || task.deleted) throw new MinimaxError('bad_request_error', `task ${id} not found`);
    return task;
  };

  return [
    {
      method: 'POST',
      path: '/v2/video_generation',
      handler: authed(async ({ req, res, body }) => {
        const create = checkCreate((body ?? {}) as CreateBody);
        const d = parseDirectives(create.text);
        if (!(await passGate(d.raw['gate'], res))) return;
        const task = tasks.add(req, create.model, d, (t) => ({
          ...t,
          resolution: create.resolution,
          duration: create.duration,
          ratio: create.ratio,
          images: create.items.filter((i) => i.type === 'image_url').length,
          urlTtlMs: optionalNumber(d.raw['url-ttl']) ?? 86_400_000,
          taskError: optionalNumber(d.raw['task-error']),
          usageDuration: optionalNumber(d.raw['usage-duration']),
          usageResolution: typeof d.raw['usage-resolution'] === 'string' ? d.raw['usage-resolution'] : undefined,
          expire: d.raw['expire'] !== undefined,
          deleted: false,
          ...(d.raw['task-error'] !== undefined ? { fail: true } : {}),
        }));
        sendJson(res, 200, { task_id: task.id });
      }),
    },
    {
      method: 'GET',
      path: '/v2/query/video_generation/:id',
      handler: authed(({ req, res, params }) => {
        const task = find(params.id!);
        const phase = simTaskPhase(task);
        const status = phase === 'succeeded' && task.expire ? 'expired' : phase;
        const base = { id: task.id, model: task.model, status, task_type: 'generation', resolution: task.resolution, duration: task.duration, ratio: task.ratio };
        if (phase === 'failed') {
          const code = task.taskError ?? 1013;
          return sendJson(res, 200, { task: { ...base, error: { code, message: code === 1013 ? 'the simulated generation failed' : `the simulated generation failed with code ${code}` } } });
        }
        if (status !== 'succeeded') return sendJson(res, 200, { task: base });
        const seconds = task.usageDuration ?? task.duration;
        const expires = Math.floor((task.finishAt + task.urlTtlMs) / 1000);
        sendJson(res, 200, {
          task: {
            ...base,
            resolution: task.usageResolution ?? task.resolution,
            content: { url: `${originOf(req.headers)}${mountPath(minimaxProvider)}/sim/files/${task.id}.mp4?expires=${expires}` },
            usage: { total_seconds: seconds, input_seconds: 0, output_seconds: seconds, input_image_count: task.images, input_audio_seconds: 0 },
          },
        });
      }),
    },
    {
      method: 'DELETE',
      path: '/v2/video_generation/:id',
      handler: authed(({ res, params }) => {
        const task = find(params.id!);
        const phase = simTaskPhase(task);
        if (phase === 'running') throw new MinimaxError('bad_request_error', 'a running task cannot be cancelled');
        if (phase === 'queued') task.cancelled = true;
        else task.deleted = true;
        sendJson(res, 200, { task_id: task.id, action: phase === 'queued' ? 'cancelled' : 'deleted', status: simTaskPhase(task) });
      }),
    },
    tasks.releaseRoute('/sim/videos/:id/release'),
    {
      method: 'GET',
      path: '/sim/files/:name',
      handler: ({ res, params }) => {
        const task = tasks.get(/^(\d+)\.mp4$/.exec(params.name!)?.[1] ?? '');
        if (!task) return sendJson(res, 404, { error: 'no such file' });
        sendBytes(res, 'video/mp4', mp4(task.duration, task.createdAt));
      },
    },
  ];
}

/** MiniMax at `/minimax` (the base URL `https://api.minimax.cn` has no path of its own). */
export const minimaxProvider: SimulatedProvider = {
  protocol: 'minimax',
  title: 'MiniMax video generation v2 (MiniMax-H3)',
  basePath: '',
  routes: minimaxRoutes,
};
