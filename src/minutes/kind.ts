import type { Catalog, ModelEntry } from '../billing/catalog';
import type { UrlSigner } from '../files/signed-urls';
import { objectCodec } from '../tasks/codec';
import type { CreationPolicy } from '../tasks/creation';
import { TaskRejected, type KindRow, type KindTask, type TaskKind, type TaskKindCodec, type UpstreamPoll } from '../tasks/kind';
import { isRefusal, pollBackoff, startedUnits, taskChannel } from '../tasks/upstream-task';
import { minutesAdapterOf } from '../upstreams/minutes-adapters';
import type { Upstreams } from '../upstreams/registry';
import { minutesAsk } from './ask';
import { minutesCapabilities } from './model-type';
import { minutesCharges, type NormalizedMinutesRequest } from './request';
import type { MinutesResult, MinutesUsage } from './result';
import type { Segment, Transcript } from './transcript';
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
 * Submitted inline, to answer with the provider's verdict on the file: a provider out of reach
 * fails the task at once (nothing is left pending, the reservation is released) and answers 502;
 * a refusal answers 400 with the provider's code, naming file_url. The rate limit is taken before
 * the file's URL is probed, which it protects too.
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

// --- the partner minutes protocol ----------------------------------------------------------------

interface PartnerTask {
  task_id: string;
  status: 'processing' | 'completed' | 'failed';
  duration_ms?: number | null;
  error_code?: string;
  error_message?: string;
  result?: {
    transcription?: {
      language?: string;
      speakers?: { id: string; name: string }[];
      paragraphs?: { id: string; text: string; begin: number; end: number; speaker?: string | null; words?: { text: string; begin: number; end: number }[] }[];
    };
    summary?: { title?: string; paragraph?: string };
    chapters?: { title?: string; summary?: string; begin?: number; end?: number }[];
    todos?: { content?: string; assignee?: string | null; begin?: number }[];
    qa?: { question?: string; answer?: string; begin?: number }[];
    translation?: { target_lang?: string; paragraphs?: { id: string; text: string; begin?: number; end?: number }[] };
  };
}

function partnerTranscript(t: PartnerTask, language: string): Transcript {
  const tr = t.result?.transcription ?? {};
  return {
    durationMs: startedUnits(t.duration_ms) ?? 0,
    language: tr.language ?? language,
    segments: (tr.paragraphs ?? []).map(
      (p): Segment => ({
        id: p.id,
        text: p.text,
        startMs: p.begin,
        endMs: p.end,
        speakerId: p.speaker ?? null,
        ...(p.words ? { words: p.words.map((w) => ({ text: w.text, startMs: w.begin, endMs: w.end })) } : {}),
      }),
    ),
    speakers: (tr.speakers ?? []).map((s) => ({ id: s.id, displayName: s.name })),
  };
}

/** The partner's extras in the gateway's own vocabulary; only what the task asked for. */
function partnerExtras(t: PartnerTask, request: NormalizedMinutesRequest, transcript: Transcript): Record<string, unknown> {
  const r = t.result ?? {};
  const wants = (f: string) => request.features.includes(f as never);
  const name = (id: string | null | undefined) => transcript.speakers.find((s) => s.id === id)?.displayName ?? null;
  const extras: Record<string, unknown> = {};
  if (wants('summary') && r.summary) extras.summary = { title: r.summary.title ?? '', paragraph: r.summary.paragraph ?? '' };
  if (wants('chapters') && r.chapters) {
    extras.chapters = r.chapters.map((c) => ({ title: c.title ?? '', summary: c.summary ?? '', start_time: c.begin ?? 0, end_time: c.end ?? 0 }));
  }
  if (wants('todos') && r.todos) extras.todos = r.todos.map((x) => ({ content: x.content ?? '', assignee: name(x.assignee), start_time: x.begin ?? null }));
  if (wants('qa') && r.qa) extras.qa = r.qa.map((x) => ({ question: x.question ?? '', answer: x.answer ?? '', start_time: x.begin ?? null }));
  if (wants('translate') && r.translation) {
    extras.translation = {
      target_lang: r.translation.target_lang ?? request.target_lang,
      sentences: (r.translation.paragraphs ?? []).map((p) => ({ id: p.id, content: p.text, start_time: p.begin ?? null, end_time: p.end ?? null })),
    };
  }
  return extras;
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
 * summary-stage.ts) or on a partner minutes API (everything from the partner).
 */
export function minutesKind(deps: { catalog: Catalog; upstreams: Upstreams; pollMs: number }): TaskKind<NormalizedMinutesRequest, MinutesResult, MinutesUsage> {
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
      const { model, channel } = taskChannel(deps, task.model);
      const r = task.request;
      const upstreamModel = upstreamModelOf(model);
      const headers = { 'x-client-request-id': task.taskId };
      try {
        if (r.protocol === 'asr') return await minutesAdapterOf(channel).submit(channel, minutesAsk(task, upstreamModel));
        const body = {
          model: upstreamModel,
          file_url: r.file_url,
          file_type: r.file_type,
          source_lang: r.source_lang,
          speaker_identification: r.speaker_identification,
          number_of_speakers: r.number_of_speakers,
          ...(r.hot_words ? { hot_words: r.hot_words } : {}),
          need_word_time_series: r.need_word_time_series,
          all_activate: r.all_activate,
          features: {
            summary: r.features.includes('summary'),
            chapters: r.features.includes('chapters'),
            todos: r.features.includes('todos'),
            qa: r.features.includes('qa'),
            translate: r.features.includes('translate'),
            ...(r.target_lang ? { target_lang: r.target_lang } : {}),
          },
        };
        return { upstreamId: (await channel.json<{ task_id: string }>('POST', '/partner/minutes/tasks', body, undefined, headers)).task_id };
      } catch (err) {
        if (isRefusal(err)) {
          throw new TaskRejected({ code: 'upstream_rejected', message: `the speech provider refused the file: ${err.message}` });
        }
        throw err;
      }
    },

    async poll(task: MinutesTask): Promise<UpstreamPoll<MinutesResult, MinutesUsage>> {
      const { model, channel } = taskChannel(deps, task.model);
      const r = task.request;
      const id = encodeURIComponent(task.upstreamId!);
      let transcript: Transcript;
      let extras: Record<string, unknown> = {};
      if (r.protocol === 'asr') {
        const t = await minutesAdapterOf(channel).get(channel, task.upstreamId!, minutesAsk(task, upstreamModelOf(model)));
        if (t.state === 'pending') return durationExceeded(t.durationMs ?? 0, r) ?? { state: 'pending', upstreamStatus: t.upstreamStatus };
        if (t.state === 'failed') return { state: 'failed', error: { code: 'transcription_failed', message: `the transcription failed: ${t.error.message} (${t.error.code})` } };
        transcript = { ...t.transcript, durationMs: startedUnits(t.transcript.durationMs) ?? 0 };
      } else {
        const t = await channel.json<PartnerTask>('GET', `/partner/minutes/tasks/${id}`);
        if (t.status === 'processing') return durationExceeded(t.duration_ms ?? 0, r) ?? { state: 'pending', upstreamStatus: 'running' };
        if (t.status !== 'completed') return { state: 'failed', error: { code: 'transcription_failed', message: `the transcription failed: ${t.error_message ?? t.status} (${t.error_code ?? 'unknown'})` } };
        transcript = partnerTranscript(t, r.source_lang);
        extras = partnerExtras(t, r, transcript);
      }
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
