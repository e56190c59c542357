import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { createTask, EN, stateOf, wordsOf, ZH, type SimTask, type SimTranscript } from '../asr';
import { originOf } from '../files';
import { sendJson } from '../http';
import type { ExtraRoute, SimContext } from '../route';
import { acs3SignatureCheck, catalogUpstreamModels } from './credentials';
import type { SimulatedProvider } from './provider';

/**
 * Alibaba Cloud Tingwu's offline tasks (OpenAPI 2023-09-30), as src/upstreams/tingwu/offline-tasks.ts
 * cites them, at their real paths on the simulator's root (the official SDK takes a host, never a
 * path): `PUT /openapi/tingwu/v2/tasks?type=offline` (CreateTask) → `{RequestId, Code: "0",
 * Message, Data: {TaskId, TaskKey, TaskStatus: "ONGOING"}}`, and `GET /openapi/tingwu/v2/tasks/{TaskId}`
 * (GetTaskInfo) → `Data.TaskStatus` ONGOING (the Transcription already linked once transcribed,
 * while the other results are made), COMPLETED (`Result` linking the Transcription and the files of
 * the extras asked), FAILED (`ErrorCode`, `ErrorMessage`), INVALID for a task it does not know.
 * Every request must carry the ACS3 signature of an AccessKey of the checked-in channels file's
 * `alibaba` entries (simulator/providers/credentials.ts; a missing, unknown, stale, replayed or
 * wrong one is refused with Alibaba Cloud's common codes) and name a Tingwu project AppKey it knows
 * (the built-in catalog's `upstream_model` of the models on such a channel; else 400
 * `BRK.InvalidAppKey`). A refusal is `{RequestId, Code, Message}` with the HTTP status.
 *
 * The result files are JSON at `/sim/tingwu/output/…` behind presigned links (`Expires`,
 * `Signature`; a link changed or past its expiry is 403, as an object store answers), in Tingwu's
 * structures, derived from the speech simulator's deterministic meeting (simulator/asr.ts): one
 * sentence per line, consecutive lines of a speaker one paragraph, speakers "1", "2"…
 *
 * The speech simulator's file URL parameters steer it: `sim_duration_ms`, `sim_asr_delay_ms`,
 * `sim=asr_fail` (FAILED, `TSC.AudioFormat`), `sim=asr_hold` (transcribed, its Transcription
 * linked, never COMPLETED), `sim=asr_unavailable` (CreateTask answers 503 `ServiceUnavailable`),
 * `sim=asr_reject` (400 `BRK.InvalidAudioFormat`); a loopback file it cannot download fails the
 * task (`TSC.AudioFileLink`). `GET /sim/tingwu/calls/{TaskKey}` counts, for the task of that
 * TaskKey (the gateway's task id), the ONGOING answers that linked its Transcription and the
 * downloads of each result file.
 */

const VERSION = '2023-09-30';
const TASKS = '/openapi/tingwu/v2/tasks';
const OUTPUT = '/sim/tingwu/output';
/** Signs the simulated presigned links (the object store's own secret). */
const LINK_SECRET = randomBytes(16);
/** Tingwu's result links last 30 days, by its reference. */
const LINK_TTL_SECONDS = 30 * 24 * 3600;

/** Alibaba Cloud's refusal: its HTTP status and `Code`. */
class TingwuError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The HTTP statuses the simulated gateway answers the signature's codes with (not checked against the provider). */
const SIGNATURE_STATUS: Readonly<Record<string, number>> = {
  IncompleteSignature: 400,
  'InvalidAccessKeyId.NotFound': 404,
  'InvalidTimeStamp.Expired': 400,
  SignatureNonceUsed: 400,
  SignatureDoesNotMatch: 400,
};

interface TingwuTask {
  readonly id: string;
  readonly key: string | null;
  readonly language: 'zh_cn' | 'en_us';
  readonly speakers: number;
  readonly diarization: boolean;
  readonly summaryTypes: readonly string[];
  readonly chapters: boolean;
  readonly actions: boolean;
  readonly target: 'zh_cn' | 'en_us' | null;
  readonly sim: SimTask;
}

type ResultName = 'Transcription' | 'Summarization' | 'AutoChapters' | 'MeetingAssistance' | 'Translation';

const TINGWU_LANGUAGE: Readonly<Record<string, 'zh_cn' | 'en_us'>> = { cn: 'zh_cn', en: 'en_us' };
/** The source languages CreateTask takes by its reference. */
const SOURCE_LANGUAGES: ReadonlySet<string> = new Set(['cn', 'en', 'yue', 'ja', 'ko', 'fspk', 'auto', 'multilingual']);

export const tingwuProvider: SimulatedProvider = {
  protocol: 'tingwu',
  title: 'Alibaba Cloud Tingwu: offline transcription tasks with summaries, chapters, action items, Q&A and translation',
  basePath: '',
  routes: tingwuRoutes,
};

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function requestId(): string {
  return randomUUID().toUpperCase();
}

/** What a task was asked for, counted for tests: ONGOING answers that linked its Transcription, downloads by result file. */
interface TaskCalls {
  ongoingLinked: number;
  downloads: Partial<Record<ResultName, number>>;
}

function tingwuRoutes(): ExtraRoute[] {
  const tasks = new Map<string, TingwuTask>();
  const calls = new Map<string, TaskCalls>();
  const callsOf = (task: TingwuTask): TaskCalls => {
    const key = task.key ?? task.id;
    const found = calls.get(key) ?? { ongoingLinked: 0, downloads: {} };
    calls.set(key, found);
    return found;
  };

  /** Answers the operation, or Alibaba Cloud's refusal of it: the signature and the operation's headers first. */
  async function answer(ctx: SimContext, action: 'CreateTask' | 'GetTaskInfo', run: () => Promise<Record<string, unknown>>): Promise<void> {
    const id = requestId();
    try {
      const signature = acs3SignatureCheck(ctx);
      if (!signature.ok) throw new TingwuError(SIGNATURE_STATUS[signature.code] ?? 400, signature.code, signature.message);
      if (ctx.req.headers['x-acs-action'] !== action || ctx.req.headers['x-acs-version'] !== VERSION) {
        throw new TingwuError(400, 'InvalidAction.NotFound', `Specified api is not found, please check your url and method (expected ${action} ${VERSION}).`);
      }
      sendJson(ctx.res, 200, { RequestId: id, Code: '0', Message: 'success', Data: await run() });
    } catch (err) {
      if (!(err instanceof TingwuError)) throw err;
      sendJson(ctx.res, err.status, { RequestId: id, Code: err.code, Message: err.message });
    }
  }

  async function create(ctx: SimContext): Promise<Record<string, unknown>> {
    if (ctx.query.get('type') !== 'offline') throw new TingwuError(400, 'BRK.InvalidTaskType', 'Only offline tasks are simulated (type=offline).');
    let body: Record<string, unknown>;
    try {
      body = record(JSON.parse((ctx.rawBody ?? Buffer.alloc(0)).toString('utf8')));
    } catch {
      throw new TingwuError(400, 'InvalidParameter', 'The request body is not JSON.');
    }
    const appKey = body.AppKey;
    if (typeof appKey !== 'string' || !catalogUpstreamModels('tingwu').has(appKey)) throw new TingwuError(400, 'BRK.InvalidAppKey', 'Invalid app key.');
    const input = record(body.Input);
    const parameters = record(body.Parameters);
    const source = input.SourceLanguage;
    if (typeof source !== 'string' || !SOURCE_LANGUAGES.has(source)) throw new TingwuError(400, 'BRK.InvalidLanguage', 'Invalid language.');
    const fileUrl = input.FileUrl;
    let url: URL;
    try {
      url = new URL(typeof fileUrl === 'string' ? fileUrl : '');
    } catch {
      throw new TingwuError(400, 'BRK.InvalidFileUrl', 'Input.FileUrl must be an http(s) link to the file.');
    }
    const sim = url.searchParams.get('sim');
    if (sim === 'asr_unavailable') throw new TingwuError(503, 'ServiceUnavailable', 'The request has failed due to a temporary failure of the server.');
    if (sim === 'asr_reject') throw new TingwuError(400, 'BRK.InvalidAudioFormat', 'Invalid audio format.');
    const transcription = record(parameters.Transcription);
    const diarization = transcription.DiarizationEnabled === true;
    const speakerCount = record(transcription.Diarization).SpeakerCount;
    if (speakerCount !== undefined && (typeof speakerCount !== 'number' || !Number.isInteger(speakerCount) || speakerCount < 0 || speakerCount > 100)) {
      throw new TingwuError(400, 'BRK.InvalidRoleSplitNum', 'Invalid roleSplitNum.');
    }
    const targets = parameters.TranslationEnabled === true ? record(parameters.Translation).TargetLanguages : undefined;
    // An offline file is translated into one language, by the reference.
    if (targets !== undefined && (!Array.isArray(targets) || targets.length !== 1 || typeof targets[0] !== 'string' || !TINGWU_LANGUAGE[targets[0]])) {
      throw new TingwuError(400, 'BRK.InvalidTranslationLanguage', 'Translation.TargetLanguages must name one of cn, en for an offline file.');
    }
    const language = TINGWU_LANGUAGE[source] ?? 'zh_cn';
    const id = randomBytes(16).toString('hex');
    const task: TingwuTask = {
      id,
      key: typeof input.TaskKey === 'string' ? input.TaskKey : null,
      language,
      speakers: typeof speakerCount === 'number' ? speakerCount : 0,
      diarization,
      summaryTypes: parameters.SummarizationEnabled === true ? (record(parameters.Summarization).Types as unknown[] | undefined ?? []).filter((t): t is string => typeof t === 'string') : [],
      chapters: parameters.AutoChaptersEnabled === true,
      actions: parameters.MeetingAssistanceEnabled === true,
      target: targets ? TINGWU_LANGUAGE[targets[0] as string]! : null,
      sim: await createTask(id, { url: url.toString(), language, speakerIdentification: true, speakers: typeof speakerCount === 'number' ? speakerCount : 0, words: false, features: parameters }),
    };
    tasks.set(id, task);
    return { TaskId: id, ...(task.key ? { TaskKey: task.key } : {}), TaskStatus: 'ONGOING' };
  }

  /** A presigned link to one of a task's result files, as Tingwu answers them. */
  function link(ctx: SimContext, task: TingwuTask, name: ResultName): string {
    const path = `${OUTPUT}/${task.id}/${task.id}_${name}.json`;
    const expires = Math.floor(Date.now() / 1000) + LINK_TTL_SECONDS;
    return `${originOf(ctx.req.headers)}${path}?Expires=${expires}&OSSAccessKeyId=LTAIsimulated&Signature=${encodeURIComponent(linkSignature(path, expires))}`;
  }

  async function info(ctx: SimContext): Promise<Record<string, unknown>> {
    const task = tasks.get(ctx.params.id!);
    if (!task) return { TaskId: ctx.params.id, TaskStatus: 'INVALID' };
    const head = { TaskId: task.id, ...(task.key ? { TaskKey: task.key } : {}) };
    const state = stateOf(task.sim);
    if (state === 'done' && task.sim.fail) {
      const [code, message] = task.sim.fail.code === 'FileUnreachable' ? ['TSC.AudioFileLink', 'Audio file link invalid.'] : ['TSC.AudioFormat', 'Audio format invalid.'];
      return { ...head, TaskStatus: 'FAILED', ErrorCode: code, ErrorMessage: message };
    }
    // Transcribed once running (a held task stays there): the large-model results come after.
    if (state === 'queued' || task.sim.fail) return { ...head, TaskStatus: 'ONGOING' };
    if (state === 'running') {
      callsOf(task).ongoingLinked++;
      return { ...head, TaskStatus: 'ONGOING', Result: { Transcription: link(ctx, task, 'Transcription') } };
    }
    const names: ResultName[] = [
      'Transcription',
      ...(task.summaryTypes.length > 0 ? (['Summarization'] as const) : []),
      ...(task.chapters ? (['AutoChapters'] as const) : []),
      ...(task.actions ? (['MeetingAssistance'] as const) : []),
      ...(task.target ? (['Translation'] as const) : []),
    ];
    return { ...head, TaskStatus: 'COMPLETED', Result: Object.fromEntries(names.map((name) => [name, link(ctx, task, name)])) };
  }

  function resultFile({ res, params, query }: SimContext): void {
    const task = tasks.get(params.task!);
    const name = /^([0-9a-f]+)_(\w+)\.json$/.exec(params.file!);
    const path = `${OUTPUT}/${params.task}/${params.file}`;
    const expires = Number(query.get('Expires'));
    const valid = Number.isInteger(expires) && expires * 1000 > Date.now() && query.get('Signature') === linkSignature(path, expires);
    if (!valid) return sendOssError(res, 403, 'AccessDenied', 'Request has expired or the signature does not match.');
    if (!task || !name || name[1] !== task.id) return sendOssError(res, 404, 'NoSuchKey', 'The specified key does not exist.');
    const file = resultOf(task, name[2] as ResultName);
    if (!file) return sendOssError(res, 404, 'NoSuchKey', 'The specified key does not exist.');
    const downloads = callsOf(task).downloads;
    downloads[name[2] as ResultName] = (downloads[name[2] as ResultName] ?? 0) + 1;
    sendJson(res, 200, file);
  }

  return [
    { method: 'PUT', path: TASKS, body: 'raw', handler: (ctx) => answer(ctx, 'CreateTask', () => create(ctx)) },
    { method: 'GET', path: `${TASKS}/:id`, body: 'raw', handler: (ctx) => answer(ctx, 'GetTaskInfo', () => info(ctx)) },
    { method: 'GET', path: `${OUTPUT}/:task/:file`, handler: resultFile },
    { method: 'GET', path: '/sim/tingwu/calls/:key', handler: ({ res, params }) => sendJson(res, 200, calls.get(params.key!) ?? { ongoingLinked: 0, downloads: {} }) },
  ];
}

function linkSignature(path: string, expires: number): string {
  return createHmac('sha256', LINK_SECRET).update(`${path}\n${expires}`).digest('base64');
}

/** An object store's refusal, as OSS words it (XML). */
function sendOssError(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}

interface Sentence {
  readonly id: number;
  readonly speaker: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly text: string;
}

/** The simulated meeting as Tingwu's sentences: one per line, speakers "1", "2"… (all "1" without diarization). */
function sentencesOf(task: TingwuTask, t: SimTranscript): Sentence[] {
  return t.segments.map((s, i) => ({ id: i + 1, speaker: task.diarization && s.speakerId ? s.speakerId.replace(/^spk-/, '') : '1', startMs: s.startMs, endMs: s.endMs, text: s.text }));
}

/** Words of a sentence over its time; English words keep the space after them, so that joined they are the sentence. */
function wordsFor(sentence: Sentence, english: boolean): { Id: number; SentenceId: number; Start: number; End: number; Text: string }[] {
  const words = wordsOf(sentence.text);
  const step = Math.max(1, Math.floor((sentence.endMs - sentence.startMs) / Math.max(1, words.length)));
  return words.map((w, k) => ({
    Id: (k + 1) * 10,
    SentenceId: sentence.id,
    Start: sentence.startMs + k * step,
    End: k === words.length - 1 ? sentence.endMs : Math.min(sentence.endMs, sentence.startMs + (k + 1) * step),
    Text: english && k < words.length - 1 ? `${w} ` : w,
  }));
}

/** Consecutive sentences of one speaker, as a paragraph. */
function paragraphsOf(sentences: readonly Sentence[]): Sentence[][] {
  const paragraphs: Sentence[][] = [];
  for (const s of sentences) {
    const last = paragraphs[paragraphs.length - 1];
    if (last && last[0]!.speaker === s.speaker) last.push(s);
    else paragraphs.push([s]);
  }
  return paragraphs;
}

/** A line of the meeting in the other language: the same line of the other bank. */
function translated(text: string, from: 'zh_cn' | 'en_us', to: 'zh_cn' | 'en_us'): string {
  const fromBank = from === 'en_us' ? EN : ZH;
  const index = fromBank.findIndex((line) => text.endsWith(line));
  return index >= 0 ? (to === 'en_us' ? EN : ZH)[index]! : text;
}

/** A result file's content in Tingwu's structure, or null when the task made no such file. */
function resultOf(task: TingwuTask, name: ResultName): Record<string, unknown> | null {
  const t = task.sim.transcript();
  const sentences = sentencesOf(task, t);
  const english = task.language === 'en_us';
  const paragraphId = (p: Sentence[]) => `${task.id.slice(0, 12)}${String(p[0]!.id).padStart(6, '0')}`;
  switch (name) {
    case 'Transcription':
      return {
        TaskId: task.id,
        Transcription: {
          AudioInfo: { Size: Math.round(t.durationMs * 16), Duration: t.durationMs, SampleRate: 16000, Language: english ? 'en' : 'cn' },
          Paragraphs: paragraphsOf(sentences).map((p) => ({ ParagraphId: paragraphId(p), SpeakerId: p[0]!.speaker, Words: p.flatMap((s) => wordsFor(s, english)) })),
          AudioSegments: sentences.map((s) => [s.startMs, s.endMs]),
        },
      };
    case 'Summarization': {
      if (task.summaryTypes.length === 0) return null;
      const decided = sentences.filter((s) => /decided|决定/.test(s.text));
      return {
        TaskId: task.id,
        Summarization: {
          ...(task.summaryTypes.includes('Paragraph') ? { ParagraphTitle: english ? 'Meeting minutes' : '会议纪要', ParagraphSummary: sentences.slice(0, 3).map((s) => s.text).join(' ') } : {}),
          ...(task.summaryTypes.includes('QuestionsAnswering')
            ? {
                QuestionsAnsweringSummary: decided.map((s) => ({
                  Question: english ? 'Which plan does the data migration follow?' : '数据迁移采用哪个方案？',
                  SentenceIdsOfQuestion: [s.id],
                  Answer: s.text,
                  SentenceIdsOfAnswer: [s.id],
                })),
              }
            : {}),
        },
      };
    }
    case 'AutoChapters': {
      if (!task.chapters) return null;
      const chapters = [];
      for (let i = 0; i < sentences.length; i += 4) {
        const chunk = sentences.slice(i, i + 4);
        chapters.push({ Id: chapters.length + 1, Start: chunk[0]!.startMs, End: chunk[chunk.length - 1]!.endMs, Headline: chunk[0]!.text.slice(0, 24), Summary: chunk.map((s) => s.text).join(' ') });
      }
      return { TaskId: task.id, AutoChapters: chapters };
    }
    case 'MeetingAssistance':
      if (!task.actions) return null;
      return {
        TaskId: task.id,
        MeetingAssistance: {
          Actions: sentences.filter((s) => /please|follow up|请|负责/i.test(s.text)).map((s, i) => ({ Id: i + 1, SentenceId: s.id, Start: s.startMs, End: s.endMs, Text: s.text })),
        },
      };
    case 'Translation':
      if (!task.target) return null;
      return {
        TaskId: task.id,
        Translation: {
          Paragraphs: paragraphsOf(sentences).map((p) => ({
            ParagraphId: paragraphId(p),
            Sentences: p.map((s) => ({ SentenceId: s.id, Start: s.startMs, End: s.endMs, Text: translated(s.text, task.language, task.target!) })),
          })),
        },
      };
  }
}
