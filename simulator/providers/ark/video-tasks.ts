/**
 * The simulated Volcengine Ark content-generation tasks (Seedance video), at
 * `/ark/api/v3/contents/generations/tasks`: create, get, list, and cancel or delete, with Ark's
 * fields, statuses (`queued`, `running`, `succeeded`, `failed`, `cancelled`, `expired`) and errors.
 * References: https://www.volcengine.com/docs/82379/1520757 (create),
 * https://www.volcengine.com/docs/82379/1521309 (get), https://www.volcengine.com/docs/82379/1521675
 * (list), https://www.volcengine.com/docs/82379/1521720 (cancel or delete).
 *
 * Deterministic, driven by directives in the prompt text: `[sim:fail]` the task fails,
 * `[sim:delay=MS]` time until it finishes (default 150 ms), `[sim:hold]` it stays queued until
 * `POST /sim/videos/{id}/release`, `[sim:gate=NAME]` the create waits at a gate,
 * `[sim:expire]` it ends `expired` (as a task whose `execution_expires_after` passed in the queue),
 * `[sim:provider-cancel]` it ends `cancelled` (as one cancelled in Ark's console),
 * `[sim:url-ttl=MS]` how long the video URL stays valid (default Ark's 24 hours; the URL is a
 * TOS-style presigned link carrying `X-Tos-Date` and `X-Tos-Expires`), `[sim:usage-duration=S]`
 * and `[sim:usage-resolution=R]` the `duration` and `resolution` the finished task reports instead
 * of the video's own. An image URL containing `sim-real-person` is refused as a real person's
 * likeness (`InputImageSensitiveContentDetected.PrivacyInformation`), as Ark does; an `asset://`
 * image must name an asset the simulated asset library issued. The same X-Client-Request-Id
 * creates the same task once (whether Ark does is not checked against the provider).
 */
import { SIM_ASSET_ID_PREFIX } from '../../assets';
import { parseDirectives } from '../../directives';
import { originOf, sendBytes } from '../../files';
import { passGate } from '../../gates';
import { HttpError } from '../../http';
import { mp4, png } from '../../media';
import type { ExtraRoute } from '../../route';
import { simTaskPhase, SimTaskStore, type SimTask } from '../../task-store';
import { arkJsonBody, arkRoute, sendArk } from './common';

type Outcome = 'succeeded' | 'failed' | 'expired' | 'cancelled';

interface SimSeedanceTask extends SimTask {
  readonly duration: number;
  readonly resolution: string;
  readonly ratio: string;
  readonly seed: number;
  readonly draft: boolean;
  readonly draftTaskId: string | null;
  readonly lastFrame: boolean;
  readonly serviceTier: string;
  readonly executionExpiresAfter: number;
  readonly generateAudio: boolean | undefined;
  /** How the task ends when its time comes, other than a plain success or `[sim:fail]`. */
  readonly outcome: Outcome;
  readonly urlTtlSeconds: number;
  /** What the finished task reports, when a directive overrides the video's own. */
  readonly usageDuration: number | undefined;
  readonly usageResolution: string | undefined;
}

interface ContentItem {
  readonly type?: unknown;
  readonly text?: unknown;
  readonly image_url?: { readonly url?: unknown };
  readonly draft_task?: { readonly id?: unknown };
}

/** Ark's default wait of a task for its run, in seconds, and the range a request may set (create reference). */
const DEFAULT_EXECUTION_EXPIRES_AFTER = 172_800;
const EXECUTION_EXPIRES_AFTER_RANGE = { min: 3_600, max: 259_200 };
const FRAMES_PER_SECOND = 24;
/** Frame sizes at 16:9 by resolution, for the token count Ark reports (width × height × frames / 1024). */
const FRAME_SIZES: Readonly<Record<string, readonly [number, number]>> = { '480p': [864, 480], '720p': [1280, 720], '1080p': [1920, 1080] };

export function arkVideoTaskRoutes(): ExtraRoute[] {
  const tasks = new SimTaskStore<SimSeedanceTask>('cgt-sim', 'task');

  /** The task as Ark shows it: its status now, its settings, and once succeeded its video and usage. */
  function view(task: SimSeedanceTask, origin: string, now: number): Record<string, unknown> {
    const phase = simTaskPhase(task, now);
    const status = phase === 'succeeded' ? task.outcome : phase;
    const finished = status !== 'queued' && status !== 'running';
    const base = {
      id: task.id,
      model: task.model,
      status,
      error: status === 'failed' ? { code: 'InternalServiceError', message: 'The service encountered an unexpected internal error.' } : null,
      created_at: Math.floor(task.createdAt / 1000),
      updated_at: Math.floor((finished && Number.isFinite(task.finishAt) ? task.finishAt : now) / 1000),
      seed: task.seed,
      resolution: task.usageResolution ?? task.resolution,
      ratio: task.ratio,
      duration: task.usageDuration ?? task.duration,
      framespersecond: FRAMES_PER_SECOND,
      ...(task.generateAudio === undefined ? {} : { generate_audio: task.generateAudio }),
      draft: task.draft,
      ...(task.draftTaskId ? { draft_task_id: task.draftTaskId } : {}),
      service_tier: task.serviceTier,
      execution_expires_after: task.executionExpiresAfter,
    };
    if (status !== 'succeeded') return base;
    const link = presignedQuery(task.finishAt, task.urlTtlSeconds);
    const tokens = completionTokens(task.resolution, task.duration);
    return {
      ...base,
      content: {
        video_url: `${origin}/sim/files/video/${task.id}.mp4?${link}`,
        ...(task.lastFrame ? { last_frame_url: `${origin}/sim/files/video/${task.id}-last.png?${link}` } : {}),
      },
      usage: { completion_tokens: tokens, total_tokens: tokens },
    };
  }

  return [
    arkRoute('POST', '/contents/generations/tasks', async ({ req, res, rawBody }) => {
      const b = arkJsonBody(rawBody);
      if (typeof b['model'] !== 'string' || b['model'] === '') throw new HttpError(400, 'The request failed because it is missing one or multiple required parameters.', 'MissingParameter', 'model');
      const content = b['content'];
      if (!Array.isArray(content) || content.length === 0) throw new HttpError(400, 'The request failed because it is missing one or multiple required parameters.', 'MissingParameter', 'content');
      const items = content as ContentItem[];
      const text = items.find((c) => c.type === 'text' && typeof c.text === 'string')?.text;
      const d = parseDirectives(typeof text === 'string' ? text : '');
      if (!(await passGate(d.raw['gate'], res))) return;
      if (tasks.replayed(req, res)) return;
      const images = items.map((c) => c.image_url?.url).filter((url): url is string => typeof url === 'string');
      if (images.some((url) => url.includes('sim-real-person'))) {
        throw new HttpError(400, 'The request failed because the input image may contain real person.', 'InputImageSensitiveContentDetected.PrivacyInformation');
      }
      const foreign = images.find((url) => url.startsWith('asset://') && !url.startsWith(`asset://${SIM_ASSET_ID_PREFIX}-`));
      if (foreign) throw new HttpError(400, `The specified asset ${foreign} is not found.`, 'InvalidParameter', 'content.image_url');
      const draftRef = items.find((c) => c.type === 'draft_task')?.draft_task?.id;
      const draft = typeof draftRef === 'string' ? tasks.get(draftRef) : undefined;
      if (draftRef !== undefined && (!draft || !draft.draft)) throw new HttpError(400, `The specified draft task ${String(draftRef)} is not found.`, 'InvalidParameter', 'content.draft_task');
      const tier = b['service_tier'] ?? 'default';
      if (tier !== 'default' && tier !== 'flex') throw new HttpError(400, 'One or more parameters specified in the request are not valid.', 'InvalidParameter', 'service_tier');
      const expiresAfter = b['execution_expires_after'] ?? DEFAULT_EXECUTION_EXPIRES_AFTER;
      if (typeof expiresAfter !== 'number' || !Number.isInteger(expiresAfter) || expiresAfter < EXECUTION_EXPIRES_AFTER_RANGE.min || expiresAfter > EXECUTION_EXPIRES_AFTER_RANGE.max) {
        throw new HttpError(400, 'One or more parameters specified in the request are not valid.', 'InvalidParameter', 'execution_expires_after');
      }
      const duration = draft ? draft.duration : typeof b['duration'] === 'number' && b['duration'] > 0 ? b['duration'] : 5;
      const outcome: Outcome = d.raw['expire'] !== undefined ? 'expired' : d.raw['provider-cancel'] !== undefined ? 'cancelled' : 'succeeded';
      tasks.create(req, res, b['model'], d, (task) => ({
        ...task,
        duration,
        resolution: typeof b['resolution'] === 'string' ? b['resolution'] : draft ? '1080p' : '720p',
        ratio: draft ? draft.ratio : typeof b['ratio'] === 'string' ? b['ratio'] : '16:9',
        seed: draft ? draft.seed : typeof b['seed'] === 'number' && b['seed'] >= 0 ? b['seed'] : task.createdAt % 100_000,
        draft: b['draft'] === true,
        draftTaskId: draft ? draft.id : null,
        lastFrame: b['return_last_frame'] === true,
        serviceTier: tier,
        executionExpiresAfter: expiresAfter,
        generateAudio: typeof b['generate_audio'] === 'boolean' ? b['generate_audio'] : undefined,
        outcome,
        urlTtlSeconds: Math.max(1, Math.round(Number(d.raw['url-ttl'] ?? 86_400_000) / 1000)),
        usageDuration: typeof d.raw['usage-duration'] === 'string' ? Number(d.raw['usage-duration']) : undefined,
        usageResolution: typeof d.raw['usage-resolution'] === 'string' ? d.raw['usage-resolution'] : undefined,
      }));
    }),
    arkRoute('GET', '/contents/generations/tasks/:id', ({ req, res, params }) => {
      sendArk(res, view(tasks.find(params.id!), originOf(req.headers), Date.now()));
    }),
    arkRoute('GET', '/contents/generations/tasks', ({ req, res, query }) => {
      const now = Date.now();
      const origin = originOf(req.headers);
      const pageNum = Math.max(1, Number(query.get('page_num') ?? 1) || 1);
      const pageSize = Math.min(500, Math.max(1, Number(query.get('page_size') ?? 10) || 10));
      const status = query.get('filter.status');
      const ids = query.getAll('filter.task_ids');
      const model = query.get('filter.model');
      const all = tasks
        .all()
        .map((task) => view(task, origin, now))
        .filter((t) => (status === null || t['status'] === status) && (ids.length === 0 || ids.includes(String(t['id']))) && (model === null || t['model'] === model))
        .reverse();
      sendArk(res, { items: all.slice((pageNum - 1) * pageSize, pageNum * pageSize), total: all.length });
    }),
    arkRoute('DELETE', '/contents/generations/tasks/:id', ({ res, params }) => {
      const task = tasks.find(params.id!);
      const phase = simTaskPhase(task);
      const status = phase === 'succeeded' ? task.outcome : phase;
      if (status === 'running' || status === 'cancelled') {
        throw new HttpError(400, `The task is ${status} and cannot be cancelled or deleted.`, 'InvalidParameter', 'id');
      }
      if (status === 'queued') task.cancelled = true;
      else tasks.forget(task.id);
      sendArk(res, {});
    }),
    tasks.releaseRoute('/sim/videos/:id/release'),
    {
      method: 'GET',
      path: '/sim/files/video/:name',
      handler: ({ res, params }) => {
        const match = /^(.+?)(-last)?\.(mp4|png)$/.exec(params.name!);
        const task = match ? tasks.get(match[1]!) : undefined;
        if (!match || !task) throw new HttpError(404, 'no such file', 'not_found');
        if (match[3] === 'png') return sendBytes(res, 'image/png', png(16, 9, task.duration));
        sendBytes(res, 'video/mp4', mp4(task.duration, task.createdAt));
      },
    },
  ];
}

/** The query of a TOS-style presigned link signed when the task finished, valid `ttlSeconds`. */
function presignedQuery(signedAt: number, ttlSeconds: number): string {
  const date = new Date(signedAt).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  return new URLSearchParams({ 'X-Tos-Algorithm': 'TOS4-HMAC-SHA256', 'X-Tos-Date': date, 'X-Tos-Expires': String(ttlSeconds), 'X-Tos-Signature': 'sim' }).toString();
}

/** The tokens Ark counts for a video: its frames' pixels over 1024 (at 16:9 here). */
function completionTokens(resolution: string, seconds: number): number {
  const [width, height] = FRAME_SIZES[resolution.toLowerCase()] ?? FRAME_SIZES['720p']!;
  return Math.floor((width * height * (seconds * FRAMES_PER_SECOND + 1)) / 1024);
}
