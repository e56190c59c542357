import type { Catalog, ModelEntry } from '../../billing/catalog';
import { extensionFor } from '../../files/content-types';
import type { FileStore } from '../../files/store';
import type { UrlSigner } from '../../files/signed-urls';
import type { CreationPolicy } from '../../tasks/creation';
import { objectCodec } from '../../tasks/codec';
import { recordedUsage, type KindRow, type KindTask, type TaskKind, type TaskKindCodec, type UpstreamPoll } from '../../tasks/kind';
import { isRefusal, pricingModel, routeTaskWork, taskChannel, type TaskRouter } from '../../tasks/upstream-task';
import { podcastAdapterOf } from '../../upstreams/podcast-adapters';
import { PodcastProviderError, type PodcastAsk } from '../../upstreams/podcast-synthesis';
import type { Logger } from '../../log';
import type { Upstreams } from '../../upstreams/registry';
import { archivedUrl, renderProcessingTask } from '../common';
import { podcastAudioKey, StagedAudioLost, storePodcastAudio } from './audio-file';
import { billedPodcastUsage, podcastCharge, type NormalizedPodcastRequest } from './request';

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

/** Why a running synthesis was abandoned: its task finished meanwhile (a cancel). */
class TaskEnded extends Error {
  override readonly name = 'TaskEnded';
}

/**
 * Asks every `everyMs` whether the task is still unfinished, and aborts the synthesis once it is
 * not (a client's cancel, recorded by whichever gateway process took it). Returns the watch's stop.
 */
function abortWhenFinished(unfinished: () => Promise<boolean>, everyMs: number, controller: AbortController): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const again = () => {
    if (!stopped) timer = setTimeout(check, everyMs);
  };
  const check = () => {
    unfinished().then(
      (yes) => (yes ? again() : controller.abort(new TaskEnded('the task finished while its podcast was being made'))),
      // The store not answering (the database away) is no reason to stop: asked again later.
      again,
    );
  };
  again();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export interface PodcastKindDeps {
  readonly catalog: Catalog;
  readonly upstreams: Upstreams;
  /** Picks the channel of each synthesis, failing over before any audio (routeTaskWork). */
  readonly router: TaskRouter;
  readonly files: Pick<FileStore, 'put' | 'open' | 'delete'>;
  /** Whether the task is still unfinished (not cancelled meanwhile), asked while its synthesis runs. */
  readonly unfinished: (taskId: string) => Promise<boolean>;
  readonly audioUrlTtlMs: number;
  /** How often a running synthesis asks whether its task was cancelled. */
  readonly pollMs: number;
  readonly logger: Logger;
}

/**
 * A synthesis that failed once its audio had begun to arrive: the provider made part of it, so it
 * is not failed over to another channel (it is made again from its start on a later poll, as any
 * run cut short). Unwrapped once the router has let it through.
 */
class AudioCutShort extends Error {
  override readonly name = 'AudioCutShort';
  constructor(override readonly cause: unknown) {
    super('the podcast synthesis failed after its audio began', { cause });
  }
}

/**
 * Podcasts on a provider's streamed synthesis (src/upstreams/podcast-synthesis.ts; Volcengine's
 * podcast WebSocket, docs/providers.md). There is no provider task to create: submission records
 * the task (its id is its own upstream id), the first poll marks it running, and the next runs the
 * whole synthesis (on the model's channels as the router orders them: a failure before any audio
 * fails over, one after audio began or whose outcome is unknown never does; the channel that made
 * it is recorded for the settlement) inside the poll job (whose lease the worker renews while it runs), writing the
 * audio into the file store as it arrives; the task succeeds once the file is stored and recorded
 * as its archive. A cancel ends the synthesis within `pollMs` (its connection closed). A
 * synthesis cut short for good (the provider's failure, the worker's crash) is made again from its
 * start by the poll job's next run; the gateway settles once, from the succeeded task's usage, so
 * the client never pays for a synthesis twice. `audio_url` is a signed gateway link valid
 * PODCAST_URL_TTL_MS (1 hour) from the read that issued it, refused with 403 afterwards. Billed
 * by input text tokens and output audio tokens, the latter capped at max_duration_seconds ×
 * audio_tokens_per_second.
 */
export function podcastKind(deps: PodcastKindDeps): TaskKind<NormalizedPodcastRequest, PodcastResult, PodcastUsage> {
  return {
    ...PODCAST_TASK,

    async submit(task: PodcastTask) {
      taskChannel(deps, task);
      return { upstreamId: task.taskId };
    },

    async poll(task: PodcastTask): Promise<UpstreamPoll<PodcastResult, PodcastUsage>> {
      // The first poll shows the task running; the synthesis follows at once (pollDelayMs).
      if (task.upstreamStatus !== 'running') return { state: 'pending', upstreamStatus: 'running' };
      const r = task.request;
      const format = r.format === 'mp3' ? 'mp3' : 'wav';
      const ask: PodcastAsk = {
        model: task.model,
        source: r.text !== null ? { text: r.text } : { topic: r.topic ?? '' },
        voices: r.speakers.map((s) => s.voice),
        format,
      };
      const contentType = CONTENT_TYPES[format]!;
      const controller = new AbortController();
      const stopWatching = abortWhenFinished(() => deps.unfinished(task.taskId), deps.pollMs, controller);
      const synthesize = async (channel: Parameters<typeof podcastAdapterOf>[0]) => {
        const adapter = podcastAdapterOf(channel);
        const key = podcastAudioKey(task.kind, task.taskId, extensionFor(contentType));
        let started = false;
        try {
          return await storePodcastAudio(deps.files, key, adapter.encoding(format), (write) =>
            adapter.synthesize(
              channel,
              ask,
              (audio) => {
                started = true;
                return write(audio);
              },
              controller.signal,
            ),
          );
        } catch (err) {
          throw started ? new AudioCutShort(err) : err;
        }
      };
      let made: Awaited<ReturnType<typeof synthesize>>;
      let model: ModelEntry;
      let served: string;
      try {
        ({ value: { model, made }, channel: served } = await routeTaskWork(deps, task, async (m, channel) => ({ model: m, made: await synthesize(channel) }), controller.signal));
      } catch (caught) {
        const err = caught instanceof AudioCutShort ? caught.cause : caught;
        // Cancelled meanwhile: the task is finished already, and this outcome records nothing.
        if (controller.signal.aborted) return { state: 'failed', error: { code: 'cancelled', message: 'the task was cancelled while its podcast was being made' } };
        if (isRefusal(err)) {
          // The channel's name and the provider's words are the operator's: logged, not shown to the client.
          deps.logger.warn({ err, taskId: task.taskId }, 'the podcast provider refused a podcast');
          return { state: 'failed', error: { code: err.code ?? 'upstream_rejected', message: err instanceof PodcastProviderError ? err.clientMessage : 'the podcast provider refused the request' } };
        }
        // Made again, the run would likely lose it again: failed once (the reservation released), not retried for ever.
        if (err instanceof StagedAudioLost) return { state: 'failed', error: { code: 'task_failed', message: 'the podcast\'s audio could not be stored' } };
        throw err;
      } finally {
        stopWatching();
      }
      const { result: synthesis, stored } = made;
      if (!(synthesis.durationSeconds > 0) || stored.bytes === 0) {
        await deps.files.delete(stored.key);
        return { state: 'failed', error: { code: 'task_failed', message: 'the upstream finished the podcast without audio' } };
      }
      // The one place the audio cap applies: the usage recorded here is what is billed and shown.
      const { reported_output_audio_tokens, ...usage } = billedPodcastUsage(
        model,
        r,
        { input_text_tokens: synthesis.inputTextTokens, output_audio_tokens: synthesis.outputAudioTokens },
        synthesis.durationSeconds,
      );
      return {
        state: 'succeeded',
        result: { audio_duration: synthesis.durationSeconds, reported_output_audio_tokens },
        usage,
        artifacts: [{ name: 'audio', stored: { key: stored.key, bytes: stored.bytes, sha256: stored.sha256, contentType } }],
        channels: [served],
      };
    },

    // The one pending poll is the first (it shows the task running): the synthesis follows at once.
    pollDelayMs: () => 0,

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
