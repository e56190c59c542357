import { parseDirectives } from './directives';
import { originOf, sendBytes } from './files';
import { HttpError } from './http';
import { mp4 } from './media';
import type { ExtraRoute } from './server';
import { sendSimTask, SimTaskStore, type SimTask } from './task-store';

/**
 * A subtitle erase task provider, simulated: `POST /v1/videos/erase-subtitle` creates a task for a
 * video URL, `GET /v1/videos/erase-subtitle/:id` reads it (queued, running, succeeded with the
 * full `result`, failed, cancelled), `POST /v1/videos/erase-subtitle/:id/cancel` cancels an
 * unfinished one (409 once finished).
 * Directives travel in the `sim` query parameter of the video URL (there is no prompt), comma
 * separated or repeated: `?sim=fail`, `?sim=delay=800,duration=12`, `?sim=status=400`. They mean
 * what they mean in a prompt; `duration=S` is the video's length (default: the request's
 * `duration_seconds`, else 10). The output is a real MP4 of that length.
 */
interface SimErase extends SimTask {
  readonly durationSeconds: number;
  readonly request: CreateBody;
}

interface CreateBody {
  model?: string;
  video_url?: string;
  regions?: unknown[];
  output?: { format?: string; resolution?: string };
  duration_seconds?: number;
}

/** `sim` query values of a URL as prompt directives: `fail,delay=5` → `[sim:fail] [sim:delay=5]`. */
export function directivesOfUrl(url: string): ReturnType<typeof parseDirectives> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return parseDirectives('');
  }
  const markers = parsed.searchParams
    .getAll('sim')
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean)
    .map((v) => `[sim:${v}]`);
  return parseDirectives(markers.join(' '));
}

export function eraseRoutes(): ExtraRoute[] {
  const tasks = new SimTaskStore<SimErase>('erase-sim', 'erase task');

  return [
    {
      method: 'POST',
      path: '/v1/videos/erase-subtitle',
      handler: ({ req, res, body }) => {
        const b = (body ?? {}) as CreateBody;
        if (!b.model || typeof b.video_url !== 'string' || b.video_url === '') throw new HttpError(400, 'model and video_url are required', 'invalid_request');
        if (tasks.replayed(req, res)) return;
        const d = directivesOfUrl(b.video_url);
        if (d.status) throw new HttpError(d.status, `simulated HTTP ${d.status}`, null);
        const declared = typeof d.raw['duration'] === 'string' && /^\d{1,5}$/.test(d.raw['duration']) ? Number(d.raw['duration']) : (b.duration_seconds ?? 10);
        tasks.create(req, res, b.model, d, (task) => ({ ...task, durationSeconds: declared, request: b }));
      },
    },
    {
      method: 'GET',
      path: '/v1/videos/erase-subtitle/:id',
      handler: ({ req, res, params }) => {
        const task = tasks.find(params.id!);
        sendSimTask(res, task, { code: 'SubtitleEraseFailed', message: 'the simulated subtitle erase failed' }, () => ({
          result: {
            video_url: `${originOf(req.headers)}/sim/files/erase/${task.id}.mp4`,
            duration: task.durationSeconds,
            format: task.request.output?.format ?? 'mp4',
            resolution: task.request.output?.resolution ?? 'source',
            regions: task.request.regions ?? [],
            frames_processed: task.durationSeconds * 25,
            subtitles_found: task.durationSeconds > 0,
          },
        }));
      },
    },
    tasks.cancelRoute('/v1/videos/erase-subtitle/:id/cancel'),
    tasks.releaseRoute('/sim/erase/:id/release'),
    {
      method: 'GET',
      path: '/sim/files/erase/:name',
      handler: ({ res, params }) => {
        const match = /^(.+)\.mp4$/.exec(params.name!);
        const task = match ? tasks.get(match[1]!) : undefined;
        if (!task) throw new HttpError(404, 'no such file', 'not_found');
        sendBytes(res, 'video/mp4', mp4(task.durationSeconds, task.createdAt));
      },
    },
  ];
}
