import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { createTask, stateOf, type SimTask } from '../asr';
import { HttpError, sendJson, waitUnlessGone } from '../http';
import type { ExtraRoute, SimContext } from '../route';
import { hasAcceptedHeaders } from './credentials';
import type { SimulatedProvider } from './provider';

/**
 * Volcengine's big-model recording file recognition (豆包语音), simulated at `/openspeech/api/v3`
 * (the real base URL: https://openspeech.bytedance.com/api/v3), as its references describe it:
 * standard https://www.volcengine.com/docs/6561/1354868, flash https://www.volcengine.com/docs/6561/1631584.
 *
 * - `POST /auc/bigmodel/submit`: headers `X-Api-App-Key` and `X-Api-Access-Key` (the channels
 *   file's placeholders, else 401 with code 45000010), `X-Api-Resource-Id` `volc.bigasr.auc` or
 *   `volc.seedasr.auc` (another: 403, 45000030 "requested resource not granted"),
 *   `X-Api-Request-Id` (the task's id: one task per id, a repeat answers 45000001, which the
 *   reference gives for a repeated request), `X-Api-Sequence: -1`; body `{audio: {url, format?},
 *   request: {model_name: "bigmodel", …}}`. Answers an empty body, the outcome in the headers
 *   `X-Api-Status-Code`, `X-Api-Message`, `X-Tt-Logid`.
 * - `POST /auc/bigmodel/query` with the request id: 20000002 (queued, the first fifth of the
 *   processing time) and 20000001 (processing), each with `{}`; then 20000000 with `{audio_info:
 *   {duration}, result: {text, utterances: [{text, start_time, end_time, definite, words,
 *   additions: {speaker}}]}}` (speakers with `enable_speaker_info`, utterances with
 *   `show_utterances`), or the recording's failure. An unknown request id: 45000001.
 * - `POST /auc/bigmodel/recognize/flash` (resource `volc.bigasr.auc_turbo`): the same request,
 *   answered at once with what a finished query answers, after the processing time. A recording
 *   over 2 hours or over 100 MB (as `sim_bytes` announces it) is refused (45000001), as the
 *   reference's limits say (its answer for them is not documented).
 *
 * Error answers carry the code in the headers and `{code, message}` in the body, with the HTTP
 * status 400 (45xxxxxx), 401 (45000010), 403 (45000030), 503 (55000031) or 500 (other 55xxxxxx):
 * the statuses are not documented (docs/providers.md). The recording's directives ride in its URL
 * (simulator/asr.ts): `sim_duration_ms`, `sim_asr_delay_ms`, `sim_summary`, `sim=asr_fail` (the
 * recognition fails, 45000151: it could not be decoded), `sim=asr_reject` (refused at once,
 * 45000151), `sim=asr_unavailable` (55000031, busy), `sim=asr_hold` (a standard task processes
 * forever), and two of this provider's: `sim=asr_silent` (20000003, silent audio) and
 * `sim=asr_drop_once` (the first flash call of a request id recognises, then drops the connection
 * unanswered: the answer lost to a crash). `GET /sim/recognitions/:requestId` (under the base URL)
 * counts the calls per endpoint that named a request id.
 */

const STANDARD_RESOURCES = ['volc.bigasr.auc', 'volc.seedasr.auc'];
const FLASH_RESOURCES = ['volc.bigasr.auc_turbo'];
const FORMATS = ['raw', 'wav', 'mp3', 'ogg'];
const FLASH_MAX_MS = 2 * 3_600_000;
const FLASH_MAX_BYTES = 100_000_000;

/** A refusal in the provider's terms: its status code and message, and the HTTP status it is sent with. */
class SpeechError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  get httpStatus(): number {
    if (this.code === '45000010') return 401;
    if (this.code === '45000030') return 403;
    if (this.code === '55000031') return 503;
    return this.code.startsWith('55') ? 500 : 400;
  }
}

/** `X-Tt-Logid` as the provider's look: the time to the second and hex, e.g. `202407261553070FACFE6D19421815D605`. */
function logId(): string {
  return `${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}${randomBytes(10).toString('hex').toUpperCase()}`;
}

function sendSpeech(res: ServerResponse, code: string, message: string, body: unknown, httpStatus = 200): void {
  const headers = { 'x-api-status-code': code, 'x-api-message': message, 'x-tt-logid': logId() };
  if (body === undefined) {
    res.writeHead(httpStatus, { ...headers, 'content-length': '0' });
    res.end();
    return;
  }
  sendJson(res, httpStatus, body, headers);
}

function sendRefusal(res: ServerResponse, err: SpeechError): void {
  sendSpeech(res, err.code, err.message, { code: Number(err.code), message: err.message }, err.httpStatus);
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

interface Recognition {
  readonly url: string;
  readonly speakers: boolean;
  readonly utterances: boolean;
  readonly language: 'zh_cn' | 'en_us';
}

/** The request fields the reference requires, checked as the provider would (45000001 or 45000151). */
function recognitionOf(body: unknown): Recognition {
  const audio = record(record(body)['audio']);
  const request = record(record(body)['request']);
  if (request['model_name'] !== 'bigmodel') throw new SpeechError('45000001', 'request.model_name must be bigmodel');
  if (typeof audio['url'] !== 'string' || audio['url'] === '') throw new SpeechError('45000001', 'audio.url is required');
  if (audio['format'] !== undefined && !FORMATS.includes(String(audio['format']))) throw new SpeechError('45000151', `audio.format ${String(audio['format'])} is not supported`);
  const context = record(request['corpus'])['context'];
  if (context !== undefined) {
    try {
      if (typeof context !== 'string') throw new Error('not a string');
      JSON.parse(context);
    } catch {
      throw new SpeechError('45000001', 'request.corpus.context must be a JSON string');
    }
  }
  return { url: audio['url'], speakers: request['enable_speaker_info'] === true, utterances: request['show_utterances'] === true, language: audio['language'] === 'en-US' ? 'en_us' : 'zh_cn' };
}

/** createTask's refusals of a recording (simulator/asr.ts) in this provider's codes. */
async function recordingTask(requestId: string, r: Recognition): Promise<SimTask> {
  try {
    return await createTask(requestId, { url: r.url, language: r.language, speakerIdentification: r.speakers, speakers: 0, words: true, features: null });
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    if (err.status >= 500) throw new SpeechError('55000031', 'the service is busy: the speech service is temporarily unavailable');
    throw new SpeechError(err.code === 'InvalidParameter.AudioFormat' ? '45000151' : '45000001', err.message);
  }
}

/** A finished recognition's answer: its failure, silence, or the transcript in the reference's shape. */
function sendFinished(res: ServerResponse, task: SimTask, r: Recognition, silent: boolean): void {
  if (task.fail) {
    const decode = task.fail.code === 'AudioDecodeFailed';
    return sendRefusal(res, new SpeechError(decode ? '45000151' : '45000001', decode ? `invalid audio format: ${task.fail.message}` : `audio download failed: ${task.fail.message}`));
  }
  if (silent) return sendSpeech(res, '20000003', 'silent audio', { audio_info: { duration: task.durationMs }, result: { text: '' } });
  const t = task.transcript();
  const utterances = t.segments.map((s) => ({
    text: s.text,
    start_time: s.startMs,
    end_time: s.endMs,
    definite: true,
    words: (s.words ?? []).map((w) => ({ text: w.text, start_time: w.startMs, end_time: w.endMs, blank_duration: 0 })),
    ...(r.speakers && s.speakerId ? { additions: { speaker: s.speakerId.replace(/^spk-/, '') } } : {}),
  }));
  sendSpeech(res, '20000000', 'OK', {
    audio_info: { duration: t.durationMs },
    result: { text: t.segments.map((s) => s.text).join(''), ...(r.utterances ? { utterances } : {}) },
  });
}

function directive(url: string, name: string): string | null {
  try {
    return new URL(url).searchParams.get(name);
  } catch {
    return null;
  }
}

function volcengineSpeechRoutes(): ExtraRoute[] {
  /** Standard tasks by request id (a promise while the file is fetched, so a concurrent repeat is seen). */
  const tasks = new Map<string, Promise<{ task: SimTask; recognition: Recognition }>>();
  const calls = new Map<string, { submit: number; query: number; flash: number }>();
  const dropped = new Set<string>();

  const countCall = (requestId: string, endpoint: 'submit' | 'query' | 'flash') => {
    const counts = calls.get(requestId) ?? { submit: 0, query: 0, flash: 0 };
    counts[endpoint] += 1;
    calls.set(requestId, counts);
  };

  /** The checks every endpoint makes first (credentials, resource, request id, sequence); then the handler, its refusals answered. */
  const speech =
    (endpoint: 'submit' | 'query' | 'flash', resources: readonly string[], handler: (ctx: SimContext, requestId: string) => Promise<void>) =>
    async (ctx: SimContext): Promise<void> => {
      try {
        if (!hasAcceptedHeaders(ctx, 'volcengine_speech')) throw new SpeechError('45000010', 'invalid X-Api-App-Key or X-Api-Access-Key');
        const resource = ctx.req.headers['x-api-resource-id'];
        if (typeof resource !== 'string' || !resources.includes(resource)) throw new SpeechError('45000030', `[resource_id=${String(resource ?? '')}] requested resource not granted`);
        const requestId = ctx.req.headers['x-api-request-id'];
        if (typeof requestId !== 'string' || requestId === '') throw new SpeechError('45000001', 'X-Api-Request-Id is required');
        countCall(requestId, endpoint);
        if (endpoint !== 'query' && ctx.req.headers['x-api-sequence'] !== '-1') throw new SpeechError('45000001', 'X-Api-Sequence must be -1');
        await handler(ctx, requestId);
      } catch (err) {
        if (!(err instanceof SpeechError)) throw err;
        sendRefusal(ctx.res, err);
      }
    };

  const submit = speech('submit', STANDARD_RESOURCES, async ({ res, body }, requestId) => {
    const recognition = recognitionOf(body);
    if (tasks.has(requestId)) throw new SpeechError('45000001', `duplicate request: X-Api-Request-Id ${requestId} was submitted before`);
    const created = recordingTask(requestId, recognition).then((task) => ({ task, recognition }));
    tasks.set(requestId, created);
    try {
      await created;
    } catch (err) {
      tasks.delete(requestId);
      throw err;
    }
    sendSpeech(res, '20000000', 'OK', undefined);
  });

  const query = speech('query', STANDARD_RESOURCES, async ({ res }, requestId) => {
    const known = tasks.get(requestId);
    if (!known) throw new SpeechError('45000001', `no task with X-Api-Request-Id ${requestId}`);
    const { task, recognition } = await known;
    const state = stateOf(task);
    if (state === 'queued') return sendSpeech(res, '20000002', 'task in queue', {});
    if (state === 'running') return sendSpeech(res, '20000001', 'task processing', {});
    sendFinished(res, task, recognition, directive(recognition.url, 'sim') === 'asr_silent');
  });

  const flash = speech('flash', FLASH_RESOURCES, async ({ res, body }, requestId) => {
    const recognition = recognitionOf(body);
    const task = await recordingTask(requestId, recognition);
    if (task.durationMs > FLASH_MAX_MS) throw new SpeechError('45000001', 'the audio is longer than 2 hours: use the standard recognition');
    if (Number(directive(recognition.url, 'sim_bytes') ?? 0) > FLASH_MAX_BYTES) throw new SpeechError('45000001', 'the audio file is larger than 100 MB: use the standard recognition');
    if (!(await waitUnlessGone(res, Math.max(0, task.finishAt - Date.now())))) return;
    const sim = directive(recognition.url, 'sim');
    if (sim === 'asr_drop_once' && !dropped.has(requestId)) {
      dropped.add(requestId);
      res.destroy();
      return;
    }
    sendFinished(res, task, recognition, sim === 'asr_silent');
  });

  return [
    { method: 'POST', path: '/auc/bigmodel/submit', handler: submit },
    { method: 'POST', path: '/auc/bigmodel/query', handler: query },
    { method: 'POST', path: '/auc/bigmodel/recognize/flash', handler: flash },
    {
      method: 'GET',
      path: '/sim/recognitions/:requestId',
      handler: ({ res, params }) => sendJson(res, 200, calls.get(params.requestId!) ?? { submit: 0, query: 0, flash: 0 }),
    },
  ];
}

export const volcengineSpeechProvider: SimulatedProvider = {
  protocol: 'volcengine_speech',
  title: 'Volcengine speech (豆包语音): big-model recording file recognition, standard (submit, query) and flash',
  basePath: '/api/v3',
  routes: volcengineSpeechRoutes,
};
