import type { Catalog, ModelEntry } from '../billing/catalog';
import type { UrlSigner } from '../files/signed-urls';
import { objectCodec } from '../tasks/codec';
import type { CreationPolicy } from '../tasks/creation';
import { TaskRejected, type KindRow, type KindTask, type TaskKind, type TaskKindCodec, type UpstreamPoll } from '../tasks/kind';
import { isRefusal, pollBackoff, startedUnits, submitOnChannels, taskChannel } from '../tasks/upstream-task';
import { minutesAdapterOf } from '../upstreams/minutes-adapters';
import type { MinutesTaskReading } from '../upstreams/minutes-task';
import type { Upstreams } from '../upstreams/registry';
import type { Router } from '../upstreams/routing/router';
import { minutesAsk } from './ask';
import { minutesCapabilities } from './model-type';
import { minutesCharges, type NormalizedMinutesRequest } from './request';
import type { MinutesResult, MinutesUsage } from './result';
import type { Transcript } from './transcript';
import { renderMinutes } from './view';

/** The stage a summarising minutes task goes through after its transcription. */
export const SUMMARY_STAGE = 'summary';

/** Minutes tasks; the summary stage merges its members into their result and usage (see summary-stage.ts). */
export const MINUTES_TASK: TaskKindCodec<NormalizedMinutesRequest, MinutesResult, MinutesUsage> = {
  kind: 'minutes',
  idPrefix: 'mins',
  request: objectCodec<NormalizedMinutesRequest>('minutes request', {
    request_id: true,
    file_url: true,
    file_name: true,
    file_type: true,
    file_bytes: true,
    recorded_at: true,
    timezone: true,
    source_lang: true,
    all_activate: true,
    speaker_identification: true,
    number_of_speakers: true,
    hot_words: true,
    need_word_time_series: true,
    features: true,
    target_lang: true,
    engine: true,
    protocol: true,
    rate_per_hour: true,
    max_duration_ms: true,
    summary: true,
  }),
  result: objectCodec<MinutesResult>('minutes result', {}),
  usage: objectCodec<MinutesUsage>('minutes usage', {}),
};

/**
 * Submitted inline, to answer with the provider's verdict on the file where submitting asks the
 * provider (Tingwu's CreateTask, Volcengine's standard recognition): a provider out of reach fails
 * the task at once (nothing is left pending, the reservation is released) and answers 502; a
 * refusal answers 400 with the provider's code, naming file_url. A `service-minutes` recording of
 * 100 MB or less goes to Volcengine's flash recognition, which submission only records: the
 * provider sees the file on the first poll, and its verdict fails the task then, not the POST. The
 * rate limit is taken before the file's URL is probed, which it protects too.
 */
export const MINUTES_CREATION: CreationPolicy = {
  endpoint: 'POST /v1/audio/minutes',
  rateLimit: 'before_outside_checks',
  submission: 'inline',
  whenUnreachable: 'fail_and_answer_502',
  whenRefused: 'answer_400',
  refusedParam: 'file_url',
  status: 200,
};

type MinutesTask = KindTask<NormalizedMinutesRequest, MinutesResult, MinutesUsage>;

/** The request of a minutes task read from its recorded state (the summary stage and summaries read it). */
export function minutesRequestOf(task: { request: Readonly<Record<string, unknown>> }): NormalizedMinutesRequest {
  return MINUTES_TASK.request.decode(task.request);
}

// --- the minutes adapters (src/upstreams/minutes-task.ts) ----------------------------------------

/**
 * A provider's reading of a task as the task's poll: still running (failed early when the length
 * the provider already knows is over the limit), failed (`transcription_failed`, the provider's
 * words and code), or the transcript and extras to check and keep.
 */
function pollOfReading(reading: MinutesTaskReading, r: NormalizedMinutesRequest): UpstreamPoll<MinutesResult, MinutesUsage> | { transcript: Transcript; extras: Record<string, unknown> } {
  if (reading.state === 'pending') {
    return durationExceeded(reading.durationMs ?? 0, r) ?? { state: 'pending', upstreamStatus: reading.upstreamStatus, ...(reading.upstreamId === undefined ? {} : { upstreamId: reading.upstreamId }) };
  }
  if (reading.state === 'failed') return { state: 'failed', error: { code: 'transcription_failed', message: `the transcription failed: ${reading.error.message} (${reading.error.code})` } };
  return { transcript: { ...reading.transcript, durationMs: startedUnits(reading.transcript.durationMs) ?? 0 }, extras: { ...reading.extras } };
}

/** The provider's model or resource of a minutes model: the catalog's `upstream_model`, else the gateway's model id. */
function upstreamModelOf(model: ModelEntry): string {
  return minutesCapabilities(model).upstream_model ?? model.id;
}

function durationExceeded(durationMs: number, request: NormalizedMinutesRequest): UpstreamPoll | null {
  if (durationMs <= request.max_duration_ms) return null;
  return {
    state: 'failed',
    error: { code: 'duration_exceeded', message: `the recording is ${recordingLength(durationMs)} long; at most ${recordingLength(request.max_duration_ms)} are accepted` },
  };
}

/**
 * A length as `121 min 40 s`, its seconds exact to the millisecond started (`120 min 0.001 s`):
 * rounded to whole seconds, a recording just over the limit read as the limit itself.
 */
export function recordingLength(ms: number): string {
  const whole = Math.ceil(ms);
  const rest = whole % 60_000;
  const millis = rest % 1000;
  const fraction = millis === 0 ? '' : `.${String(millis).padStart(3, '0').replace(/0+$/, '')}`;
  return `${Math.floor(whole / 60_000)} min ${Math.floor(rest / 1000)}${fraction} s`;
}

/**
 * Meeting minutes on a file-ASR API (service models: the gateway then writes the summary, see
 * summary-stage.ts) or on a partner minutes API (everything from the partner, through its
 * protocol's minutes adapter: src/upstreams/minutes-adapters.ts).
 */
export function minutesKind(deps: { catalog: Catalog; upstreams: Upstreams; router: Pick<Router, 'attempt'>; pollMs: number }): TaskKind<NormalizedMinutesRequest, MinutesResult, MinutesUsage> {
  function settlement(task: MinutesTask) {
    const r = task.request;
    const c = minutesCharges(r, task.usage);
    return {
      pricing: c.pricing,
      usage: {
        model: task.model,
        duration_ms: c.durationMs,
        engine: r.engine,
        rate_per_hour: r.rate_per_hour,
        asr_amount: c.asrAmount,
        // Each summary call (one per part) with its tokens and charge: the ledger's reader sees every call settled.
        ...(r.summary ? { summary_model: r.summary.model, flash_amount: c.flashAmount, flash_input_tokens: c.inputTokens, flash_output_tokens: c.outputTokens, flash_calls: c.callAmounts } : {}),
      },
    };
  }

  return {
    ...MINUTES_TASK,

    async submit(task: MinutesTask) {
      return submitOnChannels(deps, task, async (model, channel) => {
        try {
          return await minutesAdapterOf(channel).submit(channel, minutesAsk(task, upstreamModelOf(model)));
        } catch (err) {
          if (isRefusal(err)) {
            throw new TaskRejected({ code: 'upstream_rejected', message: `the speech provider refused the file: ${err.message}` });
          }
          throw err;
        }
      });
    },

    async poll(task: MinutesTask): Promise<UpstreamPoll<MinutesResult, MinutesUsage>> {
      const { model, channel } = taskChannel(deps, task);
      const r = task.request;
      const read = pollOfReading(await minutesAdapterOf(channel).get(channel, task.upstreamId!, minutesAsk(task, upstreamModelOf(model))), r);
      if ('state' in read) return read;
      const { transcript, extras } = read;
      const exceeded = durationExceeded(transcript.durationMs, r);
      if (exceeded) return exceeded;
      if (transcript.segments.length === 0 || transcript.durationMs <= 0) return { state: 'failed', error: { code: 'transcription_failed', message: 'the provider returned an empty transcript' } };
      return {
        state: 'succeeded',
        result: { transcript, ...(Object.keys(extras).length > 0 ? { extras } : {}) },
        usage: { duration_ms: transcript.durationMs },
        artifacts: [],
        ...(r.summary ? { stage: SUMMARY_STAGE } : {}),
      };
    },

    pollDelayMs: pollBackoff(deps.pollMs, 15_000),

    succeedsBeforeArchive: () => true,

    settlement,

    /** A task whose transcription succeeded owes for it (and for summary tokens observed) even if the summary failed. */
    failureSettlement: (task: MinutesTask) => (task.upstreamSucceeded ? settlement(task) : null),

    render: (row: KindRow<NormalizedMinutesRequest, MinutesResult, MinutesUsage>, _signer: UrlSigner) => renderMinutes(row),
  };
}
