import { countTokens } from '../src/billing/tokens';
import { parseDirectives, stripDirectives } from './directives';
import { originOf, sendBytes } from './files';
import { HttpError } from './http';
import { wav } from './media';
import type { ExtraRoute } from './server';
import { sendSimTask, SimTaskStore, type SimTask } from './task-store';

/**
 * A podcast (multi-speaker text-to-speech) task provider, simulated: `POST /v1/audio/podcasts`
 * creates a task from a `text` or a `topic`, `GET /v1/audio/podcasts/:id` reads it (queued,
 * running, succeeded with `audio_url`, `audio_duration` and `usage`, failed, cancelled),
 * `POST /v1/audio/podcasts/:id/cancel` cancels an unfinished one (409 once finished).
 * Directives in the text or topic: `[sim:fail]` the task fails, `[sim:status=NNN]` creation
 * answers HTTP NNN, `[sim:delay=MS]` time until it finishes (default 150 ms),
 * `[sim:duration=S]` the episode's length in seconds (up to 3600), taken as given even above the
 * request's `max_duration_seconds` (a provider that overruns the cap, reporting the longer audio
 * and its tokens); without it, half a second per input token, 2 to 30 s, never above
 * `max_duration_seconds`.
 * The audio is a real mono WAV of that length; usage counts the input text's tokens and
 * 25 audio tokens per second of output.
 */
export const SIM_AUDIO_TOKENS_PER_SECOND = 25;

/** Longest episode a `[sim:duration=S]` directive may ask for (a larger value is ignored). */
const MAX_SIM_DURATION_SECONDS = 3600;

interface SimPodcast extends SimTask {
  readonly durationSeconds: number;
  readonly inputTokens: number;
}

interface CreateBody {
  model?: string;
  text?: string;
  topic?: string;
  max_duration_seconds?: number;
}

export function podcastRoutes(): ExtraRoute[] {
  const tasks = new SimTaskStore<SimPodcast>('pod-sim', 'podcast task');

  return [
    {
      method: 'POST',
      path: '/v1/audio/podcasts',
      handler: ({ req, res, body }) => {
        const b = (body ?? {}) as CreateBody;
        const source = b.text ?? b.topic;
        if (!b.model || typeof source !== 'string' || source === '') throw new HttpError(400, 'model and a text or a topic are required', 'invalid_request');
        if (tasks.replayed(req, res)) return;
        const d = parseDirectives(source);
        if (d.status) throw new HttpError(d.status, `simulated HTTP ${d.status}`, null);
        const inputTokens = countTokens(stripDirectives(source));
        const cap = typeof b.max_duration_seconds === 'number' && b.max_duration_seconds > 0 ? b.max_duration_seconds : Infinity;
        const given = typeof d.raw['duration'] === 'string' && /^\d{1,4}(\.\d+)?$/.test(d.raw['duration']) ? Number(d.raw['duration']) : NaN;
        const explicit = given > 0 && given <= MAX_SIM_DURATION_SECONDS ? given : null;
        // An explicit duration is not clamped: it is how a test plays a provider that overruns the cap.
        const durationSeconds = explicit ?? Math.min(30, Math.max(2, inputTokens / 2), cap);
        tasks.create(req, res, b.model, d, (task) => ({ ...task, durationSeconds, inputTokens }));
      },
    },
    {
      method: 'GET',
      path: '/v1/audio/podcasts/:id',
      handler: ({ req, res, params }) => {
        const task = tasks.find(params.id!);
        sendSimTask(res, task, { code: 'PodcastGenerationFailed', message: 'the simulated podcast generation failed' }, () => ({
          audio_url: `${originOf(req.headers)}/sim/files/podcasts/${task.id}.wav`,
          audio_duration: task.durationSeconds,
          usage: { input_text_tokens: task.inputTokens, output_audio_tokens: Math.ceil(task.durationSeconds * SIM_AUDIO_TOKENS_PER_SECOND) },
        }));
      },
    },
    tasks.cancelRoute('/v1/audio/podcasts/:id/cancel'),
    tasks.releaseRoute('/sim/podcasts/:id/release'),
    {
      method: 'GET',
      path: '/sim/files/podcasts/:name',
      handler: ({ res, params }) => {
        const match = /^(.+)\.wav$/.exec(params.name!);
        const task = match ? tasks.get(match[1]!) : undefined;
        if (!task) throw new HttpError(404, 'no such file', 'not_found');
        sendBytes(res, 'audio/wav', wav(task.durationSeconds));
      },
    },
  ];
}
