/**
 * Volcengine's big-model recording file recognition (豆包语音 大模型录音文件识别) for meeting
 * minutes: the standard recognition's submit and query, the flash recognition's one synchronous
 * call, and the reading of their answers into the minutes seam (src/upstreams/minutes-task.ts).
 *
 * References:
 * - standard: https://www.volcengine.com/docs/6561/1354868 (`POST …/auc/bigmodel/submit` with
 *   `X-Api-App-Key`, `X-Api-Access-Key`, `X-Api-Resource-Id` `volc.bigasr.auc` (model 1.0) or
 *   `volc.seedasr.auc` (model 2.0), `X-Api-Request-Id` the client-chosen task id, `X-Api-Sequence:
 *   -1`; body `{user, audio: {url, format, codec, language, …}, request: {model_name: "bigmodel",
 *   enable_itn, enable_punc, enable_speaker_info, show_utterances, corpus: {context}, …}}`; the
 *   answer's body is empty, its outcome in `X-Api-Status-Code`. `POST …/auc/bigmodel/query` with the
 *   same request id and `{}`: 20000000 with `{audio_info: {duration}, result: {text, utterances:
 *   [{text, start_time, end_time, words}]}}`, 20000001 processing, 20000002 queued, 20000003 silent
 *   audio, 45000001 an invalid request or a repeated one, 45000002 empty audio, 45000151 a bad
 *   format, 550xxxxx the service's failures, 55000031 busy).
 * - flash: https://www.volcengine.com/docs/6561/1631584 (`POST …/auc/bigmodel/recognize/flash`,
 *   resource `volc.bigasr.auc_turbo`, the standard's request fields, answered at once as the
 *   standard's query; recordings up to 2 hours and 100 MB).
 * - the speaker of an utterance (`additions.speaker`, with `enable_speaker_info`): the reference's
 *   examples show none; open-source clients read it there (docs/providers.md).
 * The errors are read by the protocol's errorOf (protocol.ts).
 */
import { recordOf } from '../answer-fields';
import type { UpstreamError } from '../errors';
import type { MinutesSegment, MinutesTaskAdapter, MinutesTaskAsk, MinutesTaskReading, MinutesTranscriptReading, MinutesWord } from '../minutes-task';
import type { WireAnswer, WireRequest } from '../wire';
import { SPEECH_STATUS, speechStatusOf, volcengineSpeechErrorOf } from './protocol';

const SUBMIT_PATH = '/auc/bigmodel/submit';
const QUERY_PATH = '/auc/bigmodel/query';
const FLASH_PATH = '/auc/bigmodel/recognize/flash';

/** The standard recognition's resource when the catalog names none (model 1.0, the reference's first). */
export const STANDARD_RESOURCE = 'volc.bigasr.auc';
/** The flash recognition's resource: the reference documents only this one. */
export const FLASH_RESOURCE = 'volc.bigasr.auc_turbo';
/** The flash reference's size limit, "不超过 100MB", read as the smaller of its readings (10^8 bytes). */
export const FLASH_MAX_BYTES = 100_000_000;
/** The upstream id of a flash recognition: it has no provider task, so the id says which call `get` makes. */
const FLASH_ID_PREFIX = 'flash:';

/**
 * Whether a recording goes to the flash recognition: its size is known (the gateway's probe, or
 * its own upload) and within flash's 100 MB. Flash has the standard's 2-hour limit that the gateway
 * enforces anyway, so the size decides; an unknown size goes the standard way, which has no size
 * limit in its reference.
 */
export function usesFlash(ask: Pick<MinutesTaskAsk, 'fileBytes'>): boolean {
  return ask.fileBytes !== null && ask.fileBytes <= FLASH_MAX_BYTES;
}

/** `audio.format` (and `codec`) for the containers the reference lists (raw / wav / mp3 / ogg); others are left to the provider. */
const FORMATS: Readonly<Record<string, { format: string; codec?: string }>> = {
  wav: { format: 'wav' },
  mp3: { format: 'mp3' },
  ogg: { format: 'ogg' },
  oga: { format: 'ogg' },
  opus: { format: 'ogg', codec: 'opus' },
};

/** The reference's language keys for the gateway's languages; Chinese is its default (the key left out). */
const LANGUAGES: Readonly<Record<string, string>> = { en_us: 'en-US' };

/** The request body both recognitions take: utterances always (they are the transcript's segments), speakers when asked. */
export function recognitionBody(ask: MinutesTaskAsk): Record<string, unknown> {
  const container = FORMATS[ask.fileType.toLowerCase()];
  const language = LANGUAGES[ask.language];
  const hotWords = ask.hotWords?.filter((w) => w.trim() !== '') ?? [];
  return {
    audio: { url: ask.fileUrl, ...container, ...(language ? { language } : {}) },
    request: {
      model_name: 'bigmodel',
      enable_itn: true,
      enable_punc: true,
      enable_speaker_info: ask.speakerIdentification,
      show_utterances: true,
      ...(hotWords.length > 0 ? { corpus: { context: JSON.stringify({ hotwords: hotWords.map((word) => ({ word })) }) } } : {}),
    },
  };
}

/** The standard recognition's resource: the catalog's `upstream_model` names it (`volc.seedasr.auc` for model 2.0). */
function standardResource(ask: Pick<MinutesTaskAsk, 'model'>): string {
  return ask.model.startsWith('volc.') ? ask.model : STANDARD_RESOURCE;
}

/** `POST /auc/bigmodel/submit`, the gateway's task id as the request id. */
export function submitRecognition(ask: MinutesTaskAsk): WireRequest {
  return {
    method: 'POST',
    path: SUBMIT_PATH,
    headers: { 'x-api-resource-id': standardResource(ask), 'x-api-request-id': ask.taskId, 'x-api-sequence': '-1' },
    body: recognitionBody(ask),
    model: ask.model,
  };
}

/** `POST /auc/bigmodel/query` of the task submitted with `requestId`. */
export function queryRecognition(requestId: string, ask: Pick<MinutesTaskAsk, 'model'>): WireRequest {
  return { method: 'POST', path: QUERY_PATH, headers: { 'x-api-resource-id': standardResource(ask), 'x-api-request-id': requestId }, body: {}, model: ask.model };
}

/** `POST /auc/bigmodel/recognize/flash`: the whole recognition in one call. */
export function flashRecognition(ask: MinutesTaskAsk): WireRequest {
  return {
    method: 'POST',
    path: FLASH_PATH,
    headers: { 'x-api-resource-id': FLASH_RESOURCE, 'x-api-request-id': ask.taskId, 'x-api-sequence': '-1' },
    body: recognitionBody(ask),
    model: ask.model,
  };
}

/** Whether an answer says the task exists at the provider (done, processing, queued or silent). */
function knowsTask(answer: WireAnswer): boolean {
  const { code } = speechStatusOf(answer);
  return code === SPEECH_STATUS.done || code === SPEECH_STATUS.processing || code === SPEECH_STATUS.queued || code === SPEECH_STATUS.silent;
}

/** The refusal a submit's answer carries (its empty body is not read), or null when the task was submitted (20000000). */
export function submitRefusal(answer: WireAnswer, channel: string): UpstreamError | null {
  return speechStatusOf(answer).code === SPEECH_STATUS.done ? null : volcengineSpeechErrorOf(answer, channel);
}

function millis(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/** The body as a JSON object; an empty one (a processing query may send none) is `{}`. */
function bodyOf(answer: WireAnswer): Readonly<Record<string, unknown>> {
  return answer.text().trim() === '' ? {} : recordOf(answer.json());
}

/** The recording's length: `audio_info.duration`, else the flash answer's `result.additions.duration` (a string there). */
function durationOf(body: Readonly<Record<string, unknown>>): number | null {
  const reported = millis(recordOf(body['audio_info'])['duration']);
  if (reported !== null) return reported;
  const fromAdditions = recordOf(recordOf(body['result'])['additions'])['duration'];
  return typeof fromAdditions === 'string' && /^\d+$/.test(fromAdditions) ? Number(fromAdditions) : null;
}

/** A speaker label as the provider gives it (`"1"`), or null. */
function speakerLabel(utterance: Readonly<Record<string, unknown>>): string | null {
  const label = recordOf(utterance['additions'])['speaker'];
  if (typeof label === 'number' && Number.isFinite(label)) return String(label);
  return typeof label === 'string' && label.trim() !== '' ? label.trim() : null;
}

/** A word of an utterance with its times, or nothing when the provider gave it without them. */
function wordOf(raw: unknown): MinutesWord[] {
  const w = recordOf(raw);
  const start = millis(w['start_time']);
  const end = millis(w['end_time']);
  return typeof w['text'] === 'string' && start !== null && end !== null ? [{ text: w['text'], startMs: start, endMs: end }] : [];
}

/**
 * The transcript of a finished recognition: one segment per utterance (`seg-1`, … in order), its
 * times in milliseconds as the provider gives them, its speaker `spk-<label>` of the utterance's
 * `additions.speaker` (speakers named in order of first appearance, in the task's language), its
 * words when the task asked for them.
 */
export function transcriptOf(body: Readonly<Record<string, unknown>>, ask: Pick<MinutesTaskAsk, 'language' | 'speakerIdentification' | 'wordTimestamps'>): MinutesTranscriptReading {
  const utterances = recordOf(body['result'])['utterances'];
  const segments: MinutesSegment[] = [];
  const labels: string[] = [];
  for (const raw of Array.isArray(utterances) ? utterances : []) {
    const u = recordOf(raw);
    const start = millis(u['start_time']);
    const end = millis(u['end_time']);
    if (typeof u['text'] !== 'string' || start === null || end === null) continue;
    const label = ask.speakerIdentification ? speakerLabel(u) : null;
    if (label !== null && !labels.includes(label)) labels.push(label);
    segments.push({
      id: `seg-${segments.length + 1}`,
      text: u['text'],
      startMs: start,
      endMs: end,
      speakerId: label === null ? null : `spk-${label}`,
      ...(ask.wordTimestamps ? { words: (Array.isArray(u['words']) ? u['words'] : []).flatMap(wordOf) } : {}),
    });
  }
  const name = (label: string) => (ask.language === 'en_us' ? `Speaker ${label}` : `说话人${label}`);
  return { durationMs: durationOf(body) ?? 0, language: ask.language, segments, speakers: labels.map((label) => ({ id: `spk-${label}`, displayName: name(label) })) };
}

/**
 * A query's (or the flash call's) answer. Processing and queued are pending (with the length when
 * the answer tells it); done is the transcript; silent audio fails the task (the reference: submit
 * again, a query will not change); the provider's refusal of the recording (45xxxxxx: empty audio,
 * a format it cannot decode, an invalid request) fails it with the provider's code and message.
 * Anything else (credentials, the service's failures) is thrown as the protocol's error, retried.
 */
export function readRecognition(answer: WireAnswer, ask: MinutesTaskAsk, channel: string): MinutesTaskReading {
  const { code, message } = speechStatusOf(answer);
  switch (code) {
    case SPEECH_STATUS.done:
      return { state: 'succeeded', transcript: transcriptOf(bodyOf(answer), ask), extras: {} };
    case SPEECH_STATUS.processing:
    case SPEECH_STATUS.queued:
      return { state: 'pending', upstreamStatus: code === SPEECH_STATUS.queued ? 'queued' : 'running', durationMs: durationOf(bodyOf(answer)) };
    case SPEECH_STATUS.silent:
      return { state: 'failed', error: { code, message: 'the recording is silent: no speech was recognised' } };
  }
  const err = volcengineSpeechErrorOf(answer, channel);
  if (err.status === 400 && code !== null) return { state: 'failed', error: { code, message } };
  throw err;
}

/** The gateway's task id of a flash upstream id, or null for a standard recognition's. */
function flashRequestId(upstreamId: string): string | null {
  return upstreamId.startsWith(FLASH_ID_PREFIX) ? upstreamId.slice(FLASH_ID_PREFIX.length) : null;
}

/**
 * Meeting minutes on Volcengine's recording recognition. A recording within flash's size (usesFlash)
 * is recognised by the flash call, made by `get` (the task engine's poll job): submission records
 * it without calling the provider, so the client's POST never waits for a recognition. A crash
 * during the call repeats the call (the same request id) on the next poll; the task is billed once,
 * by the answer that completes it. Other recordings are submitted to the standard recognition and
 * queried. A standard submission the provider refuses as repeated (45000001: a resubmission after a
 * crash, the same request id) is taken as submitted when a query finds the task.
 */
export const volcengineSpeechMinutes: MinutesTaskAdapter = {
  async submit(transport, ask, signal) {
    if (usesFlash(ask)) return { upstreamId: `${FLASH_ID_PREFIX}${ask.taskId}` };
    const answer = await transport.call(submitRecognition(ask), signal);
    const refusal = submitRefusal(answer, transport.name);
    if (refusal === null) return { upstreamId: ask.taskId };
    const repeated = speechStatusOf(answer).code === SPEECH_STATUS.invalidRequest;
    if (repeated && knowsTask(await transport.call(queryRecognition(ask.taskId, ask), signal))) return { upstreamId: ask.taskId };
    throw refusal;
  },

  async get(transport, upstreamId, ask) {
    const flashId = flashRequestId(upstreamId);
    const request = flashId === null ? queryRecognition(upstreamId, ask) : flashRecognition({ ...ask, taskId: flashId });
    return readRecognition(await transport.call(request), ask, transport.name);
  },
};
