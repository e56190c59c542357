import type { Catalog } from '../../billing/catalog';
import type { UrlSigner } from '../../files/signed-urls';
import type { CreationPolicy } from '../../tasks/creation';
import { objectCodec } from '../../tasks/codec';
import { recordedUsage, type KindRow, type KindTask, type TaskKind, type TaskKindCodec, type UpstreamPoll } from '../../tasks/kind';
import { cancelUpstreamTask, pollBackoff, pricingModel, submitUpstreamTask, taskChannel, unsucceededPoll, type UpstreamTaskStatus } from '../../tasks/upstream-task';
import type { Upstreams } from '../../upstreams/registry';
import { archivedUrl, renderProcessingTask } from '../common';
import { podcastCapabilities } from '../model-types';
import { billedPodcastUsage, podcastCharge, type NormalizedPodcastRequest } from './request';

interface UpstreamPodcast extends UpstreamTaskStatus {
  id: string;
  audio_url?: string;
  audio_duration?: number;
  usage?: { input_text_tokens?: number; output_audio_tokens?: number };
}

export const PODCAST_TASK_KIND = 'podcast';

export interface PodcastResult {
  readonly audio_duration: number;
  /** The audio tokens the provider reported (or the gateway counted), before the cap. */
  readonly reported_output_audio_tokens: number;
}

/** The billed tokens, the audio ones capped at max_duration_seconds. */
export interface PodcastUsage {
  readonly input_text_tokens: number;
  readonly output_audio_tokens: number;
}

/** Submitted by the submit job; the answer is the task as created. */
export const PODCAST_CREATION: CreationPolicy = {
  endpoint: 'POST /v1/audio/podcasts',
  rateLimit: 'after_checks',
  submission: 'background',
  whenUnreachable: null,
  whenRefused: null,
  refusedParam: null,
  status: 200,
};

export const PODCAST_TASK: TaskKindCodec<NormalizedPodcastRequest, PodcastResult, PodcastUsage> = {
  kind: PODCAST_TASK_KIND,
  idPrefix: 'pod',
  request: objectCodec<NormalizedPodcastRequest>('podcast request', { text: true, topic: true, speakers: true, language: true, format: true, max_duration_seconds: true, input_tokens: true }),
  result: objectCodec<PodcastResult>('podcast result', { audio_duration: true, reported_output_audio_tokens: true }),
  usage: objectCodec<PodcastUsage>('podcast usage', { input_text_tokens: true, output_audio_tokens: true }),
};

type PodcastTask = KindTask<NormalizedPodcastRequest, PodcastResult, PodcastUsage>;

const CONTENT_TYPES: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mpeg' };

function count(value: unknown): number | null {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : null;
}

/**
 * Podcasts on a podcast task API (create, poll by id, cancel). The audio is archived into the file
 * store before the task succeeds; `audio_url` is a signed gateway link valid PODCAST_URL_TTL_MS
 * (1 hour) from the read that issued it, refused with 403 afterwards. Billed by input text tokens
 * and output audio tokens, the latter capped at max_duration_seconds × audio_tokens_per_second.
 */
export function podcastKind(deps: { catalog: Catalog; upstreams: Upstreams; audioUrlTtlMs: number; pollMs: number }): TaskKind<NormalizedPodcastRequest, PodcastResult, PodcastUsage> {
  const taskPath = (task: PodcastTask) => `/audio/podcasts/${encodeURIComponent(task.upstreamId!)}`;

  return {
    ...PODCAST_TASK,

    async submit(task: PodcastTask) {
      const { model, channel } = taskChannel(deps, task.model);
      const r = task.request;
      const body = {
        model: podcastCapabilities(model).upstream_model ?? model.id,
        ...(r.text !== null ? { text: r.text } : { topic: r.topic }),
        speakers: r.speakers,
        language: r.language,
        format: r.format,
        max_duration_seconds: r.max_duration_seconds,
      };
      return submitUpstreamTask(channel, '/audio/podcasts', body, task);
    },

    async poll(task: PodcastTask): Promise<UpstreamPoll<PodcastResult, PodcastUsage>> {
      const { model, channel } = taskChannel(deps, task.model);
      const t = await channel.json<UpstreamPodcast>('GET', taskPath(task));
      const unsucceeded = unsucceededPoll(t);
      if (unsucceeded) return unsucceeded;
      const duration = typeof t.audio_duration === 'number' && Number.isFinite(t.audio_duration) && t.audio_duration > 0 ? t.audio_duration : null;
      if (!t.audio_url || duration === null) return { state: 'failed', error: { code: 'task_failed', message: 'the upstream reported success without audio' } };
      const r = task.request;
      // The one place the audio cap applies: the usage recorded here is what is billed and shown.
      const { reported_output_audio_tokens, ...usage } = billedPodcastUsage(
        model,
        r,
        { input_text_tokens: count(t.usage?.input_text_tokens), output_audio_tokens: count(t.usage?.output_audio_tokens) },
        duration,
      );
      return {
        state: 'succeeded',
        result: { audio_duration: duration, reported_output_audio_tokens },
        usage,
        artifacts: [{ name: 'audio', sourceUrl: t.audio_url, contentType: CONTENT_TYPES[r.format] ?? 'audio/wav' }],
      };
    },

    async cancelUpstream(task: PodcastTask) {
      await cancelUpstreamTask(taskChannel(deps, task.model).channel, taskPath(task));
    },

    pollDelayMs: pollBackoff(deps.pollMs, 5_000),

    succeedsBeforeArchive: () => false,

    settlement(task: PodcastTask) {
      const model = pricingModel(deps.catalog, task);
      // task.usage is already capped at max_duration_seconds (billedPodcastUsage, in poll).
      const usage = recordedUsage(task);
      const result = task.result;
      return {
        pricing: podcastCharge(model, usage.input_text_tokens, usage.output_audio_tokens),
        usage: {
          model: task.model,
          task_id: task.taskId,
          ...usage,
          audio_duration: result?.audio_duration ?? null,
          reported_output_audio_tokens: result?.reported_output_audio_tokens ?? usage.output_audio_tokens,
        },
      };
    },

    render(row: KindRow<NormalizedPodcastRequest, PodcastResult, PodcastUsage>, signer: UrlSigner) {
      return renderProcessingTask(row, {
        model: true,
        succeeded: () => {
          const usage = recordedUsage({ taskId: row.task_id, usage: row.usage });
          return {
            audio_url: archivedUrl(row, 'audio', signer, deps.audioUrlTtlMs),
            audio_duration: row.result?.audio_duration,
            usage: { input_text_tokens: usage.input_text_tokens, output_audio_tokens: usage.output_audio_tokens },
          };
        },
      });
    },
  };
}
