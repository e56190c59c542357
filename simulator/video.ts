import { SIM_ASSET_ID_PREFIX } from './providers/volcengine-openapi';
import { parseDirectives } from './directives';
import { passGate } from './gates';
import { originOf, sendBytes } from './files';
import { HttpError, sendJson } from './http';
import { mp4, png } from './media';
import type { ExtraRoute } from './server';
import { simTaskPhase, SimTaskStore, type SimTask } from './task-store';

/**
 * A content-generation task API in the style of the public video providers: create a task, get it
 * by id; statuses queued, running, succeeded, failed; the result's video URL, last frame URL and
 * usage. Deterministic and driven by directives in the prompt text:
 * `[sim:fail]` the task fails, `[sim:delay=MS]` time until it finishes (default 150 ms),
 * `[sim:url-ttl=MS]` how long the native video URL stays valid (default a day),
 * `[sim:usage-duration=S]` and `[sim:usage-resolution=R]` what the finished task's usage reports
 * instead of the video's own (providers report fractions of seconds, and their own spelling). An image URL
 * containing `sim-real-person` is refused as a real person's likeness, as providers do; an
 * `asset://` image must name an asset the provider issued (the asset simulator's ids, see
 * assets.ts), not a gateway's own id.
 * The same X-Client-Request-Id creates the same task once.
 */
interface SimVideoTask extends SimTask {
  readonly duration: number;
  readonly resolution: string;
  readonly draft: boolean;
  readonly lastFrame: boolean;
  readonly urlTtlMs: number;
  /** The usage the finished task reports, when a directive overrides the video's own. */
  readonly usageDuration: number | undefined;
  readonly usageResolution: string | undefined;
}

interface CreateBody {
  model?: string;
  content?: { type?: string; text?: string; image_url?: { url?: string }; draft_task?: { id?: string } }[];
  duration?: number;
  resolution?: string;
  draft?: boolean;
  return_last_frame?: boolean;
}

export function videoRoutes(): ExtraRoute[] {
  const tasks = new SimTaskStore<SimVideoTask>('cgt-sim', 'task');

  return [
    {
      method: 'POST',
      path: '/v1/contents/generations/tasks',
      handler: async ({ req, res, body }) => {
        const b = (body ?? {}) as CreateBody;
        if (!b.model || !Array.isArray(b.content) || b.content.length === 0) throw new HttpError(400, 'model and content are required', 'invalid_request');
        const gate = parseDirectives(b.content.find((c) => c.type === 'text')?.text ?? '').raw['gate'];
        if (!(await passGate(gate, res))) return;
        if (tasks.replayed(req, res)) return;
        if (b.content.some((c) => c.image_url?.url?.includes('sim-real-person'))) {
          throw new HttpError(400, 'The request failed because the input image may contain real person.', 'InputImageSensitiveContentDetected.PrivacyInformation');
        }
        const foreign = b.content.find((c) => c.image_url?.url?.startsWith('asset://') && !c.image_url.url.startsWith(`asset://${SIM_ASSET_ID_PREFIX}-`));
        if (foreign) throw new HttpError(400, `asset ${foreign.image_url!.url} not found`, 'InvalidParameter.Asset');
        const draftRef = b.content.find((c) => c.type === 'draft_task')?.draft_task?.id;
        const draft = draftRef ? tasks.get(draftRef) : undefined;
        if (draftRef && (!draft || !draft.draft)) throw new HttpError(400, `draft task ${draftRef} not found`, 'InvalidParameter.DraftTask');
        const text = b.content.find((c) => c.type === 'text')?.text ?? '';
        const d = parseDirectives(text);
        tasks.create(req, res, b.model, d, (task) => ({
          ...task,
          duration: draft ? draft.duration : b.duration && b.duration > 0 ? b.duration : 5,
          resolution: draft ? (b.resolution ?? '1080p') : (b.resolution ?? '720p'),
          draft: b.draft === true,
          lastFrame: b.return_last_frame === true,
          urlTtlMs: Number(d.raw['url-ttl'] ?? 86_400_000),
          usageDuration: typeof d.raw['usage-duration'] === 'string' ? Number(d.raw['usage-duration']) : undefined,
          usageResolution: typeof d.raw['usage-resolution'] === 'string' ? d.raw['usage-resolution'] : undefined,
        }));
      },
    },
    tasks.releaseRoute('/sim/videos/:id/release'),
    {
      method: 'GET',
      path: '/v1/contents/generations/tasks/:id',
      handler: ({ req, res, params }) => {
        const task = tasks.find(params.id!);
        const now = Date.now();
        const base = { id: task.id, model: task.model, created_at: Math.floor(task.createdAt / 1000), updated_at: Math.floor(now / 1000) };
        const phase = simTaskPhase(task, now);
        if (phase === 'queued' || phase === 'running') return sendJson(res, 200, { ...base, status: phase });
        if (phase === 'failed') return sendJson(res, 200, { ...base, status: 'failed', error: { code: 'InternalServiceError', message: 'the simulated generation failed' } });
        const origin = originOf(req.headers);
        const expires = Math.floor((task.finishAt + task.urlTtlMs) / 1000);
        sendJson(res, 200, {
          ...base,
          status: 'succeeded',
          content: {
            video_url: `${origin}/sim/files/video/${task.id}.mp4?expires=${expires}`,
            ...(task.lastFrame ? { last_frame_url: `${origin}/sim/files/video/${task.id}-last.png?expires=${expires}` } : {}),
          },
          video_url_expires_at: expires,
          usage: { completion_tokens: task.duration * 4_000, total_tokens: task.duration * 4_000, duration: task.usageDuration ?? task.duration, resolution: task.usageResolution ?? task.resolution },
        });
      },
    },
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
