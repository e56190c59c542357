/**
 * Tingwu's offline tasks (音视频文件离线转写) as the minutes feature runs them: the CreateTask that
 * submits a recording with the extras asked, the GetTaskInfo that reads it, and the reading of the
 * result files its answer links to into the gateway's transcript and extras.
 *
 * References (Alibaba Cloud Tingwu, OpenAPI 2023-09-30; the official SDK `@alicloud/tingwu20230930`):
 * - offline transcription, the request's parameters and the task's answers:
 *   https://help.aliyun.com/zh/tingwu/offline-transcribe-of-audio-and-video-files
 * - CreateTask `PUT /openapi/tingwu/v2/tasks?type=offline`: https://help.aliyun.com/zh/tingwu/api-tingwu-2023-09-30-createtask
 * - GetTaskInfo `GET /openapi/tingwu/v2/tasks/{TaskId}` (`TaskStatus` ONGOING, COMPLETED, FAILED,
 *   INVALID; `Result` the links of the result files, valid 30 days; an ONGOING task may already
 *   link its Transcription): https://help.aliyun.com/zh/tingwu/api-tingwu-2023-09-30-gettaskinfo
 * - the result files: Transcription https://help.aliyun.com/zh/tingwu/voice-transcription
 *   (`AudioInfo.Duration` in ms; `Paragraphs[{ParagraphId, SpeakerId, Words[{Id, SentenceId,
 *   Start, End, Text}]}]`), AutoChapters https://help.aliyun.com/zh/tingwu/chapter-quick-view
 *   (`[{Id, Start, End, Headline, Summary}]`), Summarization
 *   https://help.aliyun.com/zh/tingwu/large-model-summary (`ParagraphSummary`,
 *   `QuestionsAnsweringSummary[{Question, SentenceIdsOfQuestion, Answer, SentenceIdsOfAnswer}]`),
 *   MeetingAssistance https://help.aliyun.com/zh/tingwu/intelligent-summary (`Actions[{Id,
 *   SentenceId, Start, End, Text}]`), Translation https://help.aliyun.com/zh/tingwu/text-translation
 *   (one target language for a file: `Paragraphs[{ParagraphId, Sentences[{SentenceId, Start, End, Text}]}]`)
 * - errors (the protocol's errorOf, protocol.ts): https://help.aliyun.com/zh/tingwu/error-information-query
 */
import { protocolError, recordOf } from '../answer-fields';
import { UpstreamError } from '../errors';
import type { MinutesFeature, MinutesSegment, MinutesTaskAdapter, MinutesTaskAsk, MinutesTaskReading, MinutesTranscriptReading } from '../minutes-task';
import { fetchResultJson } from '../result-files';
import type { WireAnswer, WireRequest } from '../wire';
import { tingwuErrorIn, tingwuProtocol } from './protocol';

const TASKS_PATH = '/openapi/tingwu/v2/tasks';
const VERSION = '2023-09-30';

/** The gateway's languages as Tingwu's `SourceLanguage` and `TargetLanguages` spell them. */
const LANGUAGES: Readonly<Record<string, string>> = { zh_cn: 'cn', en_us: 'en' };
const GATEWAY_LANGUAGES: Readonly<Record<string, string>> = { cn: 'zh_cn', en: 'en_us' };

function tingwuLanguage(language: string): string {
  const spelt = LANGUAGES[language];
  if (!spelt) throw new UpstreamError(400, `Tingwu is not asked for language ${language} by the gateway`, 'unsupported_by_provider');
  return spelt;
}

/** The operation's headers: the signature covers them (ACS3's `x-acs-action`, `x-acs-version`). */
function operation(action: 'CreateTask' | 'GetTaskInfo'): Record<string, string> {
  return { 'x-acs-action': action, 'x-acs-version': VERSION };
}

/** The extras asked, by feature (all five under all_activate), none for a transcription only. */
function asked(ask: MinutesTaskAsk): ReadonlySet<MinutesFeature> {
  if (!ask.extras) return new Set();
  return new Set<MinutesFeature>(ask.extras.all ? ['summary', 'chapters', 'todos', 'qa', 'translate'] : ask.extras.features);
}

/** `Diarization.SpeakerCount`: 2 for exactly two speakers, else 0 (undetermined), the two values the SDK documents. */
function speakerCount(expected: number | null): 0 | 2 {
  return expected === 2 ? 2 : 0;
}

/**
 * `PUT /openapi/tingwu/v2/tasks?type=offline`. The AppKey is the Tingwu project's (the catalog's
 * `upstream_model`); the gateway's task id is the `TaskKey` Tingwu keeps with the task (it is not
 * a deduplication key: a resubmission after a crash makes a second task). Speaker diarization
 * follows `speaker_identification`, with the expected count (`SpeakerCount`): the official SDK's
 * CreateTaskRequest documents only 0 (undetermined) and 2, so 2 is sent when the client expects
 * exactly 2 speakers and 0 for any other count.
 * The extras: summary → `Summarization.Types` `Paragraph`, qa → `QuestionsAnswering` (the Q&A
 * review), chapters → `AutoChaptersEnabled`, todos → `MeetingAssistance.Types` `Actions`, translate
 * → `Translation.TargetLanguages` with the one target. Hot words are not sent: Tingwu takes a
 * vocabulary id made beforehand (`PhraseId`), not words.
 */
export function createOfflineTask(ask: MinutesTaskAsk): WireRequest {
  const extras = asked(ask);
  const summaryTypes = [...(extras.has('summary') ? ['Paragraph'] : []), ...(extras.has('qa') ? ['QuestionsAnswering'] : [])];
  const target = ask.extras?.targetLang;
  const parameters = {
    Transcription: ask.speakerIdentification ? { DiarizationEnabled: true, Diarization: { SpeakerCount: speakerCount(ask.numberOfSpeakers) } } : { DiarizationEnabled: false },
    ...(summaryTypes.length > 0 ? { SummarizationEnabled: true, Summarization: { Types: summaryTypes } } : {}),
    ...(extras.has('chapters') ? { AutoChaptersEnabled: true } : {}),
    ...(extras.has('todos') ? { MeetingAssistanceEnabled: true, MeetingAssistance: { Types: ['Actions'] } } : {}),
    ...(extras.has('translate') && target ? { TranslationEnabled: true, Translation: { TargetLanguages: [tingwuLanguage(target)] } } : {}),
  };
  return {
    method: 'PUT',
    path: TASKS_PATH,
    query: { type: 'offline' },
    headers: operation('CreateTask'),
    body: { AppKey: ask.model, Input: { SourceLanguage: tingwuLanguage(ask.language), FileUrl: ask.fileUrl, TaskKey: ask.taskId }, Parameters: parameters },
  };
}

/** `GET /openapi/tingwu/v2/tasks/{TaskId}`. */
export function getTaskInfo(taskId: string): WireRequest {
  return { method: 'GET', path: `${TASKS_PATH}/${encodeURIComponent(taskId)}`, headers: operation('GetTaskInfo') };
}

/** The result files a task answer may link, by the name of its `Result` member. */
type ResultName = 'Transcription' | 'Summarization' | 'AutoChapters' | 'MeetingAssistance' | 'Translation';
const RESULT_NAMES: readonly ResultName[] = ['Transcription', 'Summarization', 'AutoChapters', 'MeetingAssistance', 'Translation'];

/** A task as GetTaskInfo (or CreateTask) answers it. */
export interface TingwuTask {
  readonly taskId: string;
  readonly status: 'ONGOING' | 'COMPLETED' | 'FAILED' | 'INVALID';
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  /** The links of the result files it has so far. */
  readonly results: Partial<Readonly<Record<ResultName, string>>>;
}

const STATUSES: ReadonlySet<string> = new Set(['ONGOING', 'COMPLETED', 'FAILED', 'INVALID']);

/** `Data` of a successful answer read as a task; an error answer throws the gateway's error for it. */
export function readTask(answer: WireAnswer, channel: string): TingwuTask {
  if (answer.status >= 400) throw tingwuProtocol.errorOf(answer, channel);
  const body = answer.json();
  if (tingwuErrorIn(body)) throw tingwuProtocol.errorOf(answer, channel);
  const data = recordOf(recordOf(body)['Data']);
  const taskId = data['TaskId'];
  const status = data['TaskStatus'];
  if (typeof taskId !== 'string' || taskId === '') throw protocolError(channel, 'a task without a TaskId');
  if (typeof status !== 'string' || !STATUSES.has(status)) throw protocolError(channel, `a task with an unknown TaskStatus ${JSON.stringify(status)}`);
  const result = recordOf(data['Result']);
  const results: Partial<Record<ResultName, string>> = {};
  for (const name of RESULT_NAMES) {
    const link = result[name];
    if (typeof link === 'string' && link !== '') results[name] = link;
  }
  return { taskId, status: status as TingwuTask['status'], errorCode: stringOf(data['ErrorCode']), errorMessage: stringOf(data['ErrorMessage']), results };
}

/** Reads a result file Tingwu linked to; `fetchResultJson` by default (tests give a file server). */
export type ResultReader = (url: string, channel: string, what: string) => Promise<unknown>;

/**
 * The gateway's upstream id of a Tingwu task whose recording length was read: its TaskId behind
 * this prefix. The transcription file may be 32 MiB; read on the first ONGOING poll that links
 * it, it is not read again until the task completes (a length over the limit fails the task then).
 */
const LENGTH_READ_PREFIX = 'length-read:';

/** Tingwu's TaskId of a gateway upstream id, and whether the recording's length was read already. */
export function tingwuTaskOf(upstreamId: string): { taskId: string; lengthRead: boolean } {
  const lengthRead = upstreamId.startsWith(LENGTH_READ_PREFIX);
  return { taskId: lengthRead ? upstreamId.slice(LENGTH_READ_PREFIX.length) : upstreamId, lengthRead };
}

/**
 * The task as the gateway reads it. ONGOING is running; the first time it links the transcription
 * (Tingwu does while its large-model steps still run), the recording's length is read from it,
 * so that an over-long recording fails early, and the reading names the task by an id that says
 * so (`lengthRead` is then true). FAILED keeps Tingwu's `ErrorCode` and `ErrorMessage`; INVALID (no
 * such task) fails `upstream_task_invalid`. COMPLETED reads the transcription and the files of the
 * extras asked; a COMPLETED task without a transcription failed at Tingwu.
 */
export async function readingOf(task: TingwuTask, ask: MinutesTaskAsk, channel: string, read: ResultReader = fetchResultJson, lengthRead = false): Promise<MinutesTaskReading> {
  switch (task.status) {
    case 'ONGOING': {
      const link = task.results.Transcription;
      if (!link || lengthRead) return { state: 'pending', upstreamStatus: 'running', durationMs: null };
      const durationMs = audioDurationMs(recordOf(recordOf(await read(link, channel, 'Transcription'))['Transcription']));
      return { state: 'pending', upstreamStatus: 'running', durationMs, upstreamId: `${LENGTH_READ_PREFIX}${task.taskId}` };
    }
    case 'FAILED':
      return { state: 'failed', error: { code: task.errorCode ?? 'task_failed', message: task.errorMessage ?? 'the Tingwu task failed' } };
    case 'INVALID':
      return { state: 'failed', error: { code: 'upstream_task_invalid', message: `Tingwu reports task ${task.taskId} invalid` } };
    case 'COMPLETED':
      return completed(task, ask, channel, read);
  }
}

async function completed(task: TingwuTask, ask: MinutesTaskAsk, channel: string, read: ResultReader): Promise<MinutesTaskReading> {
  const link = task.results.Transcription;
  if (!link) return { state: 'failed', error: { code: 'task_failed', message: 'Tingwu completed the task without a transcription' } };
  const transcript = transcriptOf(recordOf(recordOf(await read(link, channel, 'Transcription'))['Transcription']), ask);
  const extras = asked(ask);
  const file = async (name: ResultName): Promise<Readonly<Record<string, unknown>> | null> => {
    const url = task.results[name];
    return url ? recordOf(await read(url, channel, name)) : null;
  };
  const summarization = extras.has('summary') || extras.has('qa') ? recordOf((await file('Summarization'))?.['Summarization']) : {};
  return {
    state: 'succeeded',
    transcript,
    extras: {
      ...(extras.has('summary') ? summaryOf(summarization) : {}),
      ...(extras.has('chapters') ? chaptersOf((await file('AutoChapters'))?.['AutoChapters']) : {}),
      ...(extras.has('todos') ? listOf('todos', recordOf((await file('MeetingAssistance'))?.['MeetingAssistance'])['Actions']) : {}),
      ...(extras.has('qa') ? listOf('qa', summarization['QuestionsAnsweringSummary']) : {}),
      ...(extras.has('translate') ? translationOf((await file('Translation'))?.['Translation']) : {}),
    },
  };
}

/** `AudioInfo.Duration`, the recording's length in milliseconds Tingwu reports (and bills). */
function audioDurationMs(transcription: Readonly<Record<string, unknown>>): number | null {
  const duration = recordOf(transcription['AudioInfo'])['Duration'];
  return typeof duration === 'number' && Number.isFinite(duration) && duration > 0 ? duration : null;
}

interface Sentence {
  readonly id: string;
  readonly speakerId: string | null;
  readonly words: { text: string; startMs: number; endMs: number }[];
}

/**
 * The transcription file as the gateway's transcript: one segment per sentence (the words of a
 * paragraph sharing a `SentenceId`, their texts joined as Tingwu spells them), its id the
 * `SentenceId`, its speaker the paragraph's `SpeakerId` when speaker identification was asked;
 * speakers in order of first appearance, named as Tingwu names them in its summaries
 * (`发言人1`; `Speaker 1` in English). The length billed is `AudioInfo.Duration`, else (a file
 * without it) the end of the last sentence.
 */
export function transcriptOf(transcription: Readonly<Record<string, unknown>>, ask: MinutesTaskAsk): MinutesTranscriptReading {
  const sentences: Sentence[] = [];
  for (const paragraph of arrayOf(transcription['Paragraphs']).map(recordOf)) {
    const speaker = paragraph['SpeakerId'];
    const speakerId = ask.speakerIdentification && (typeof speaker === 'string' || typeof speaker === 'number') && String(speaker) !== '' ? String(speaker) : null;
    let current: Sentence | null = null;
    for (const word of arrayOf(paragraph['Words']).map(recordOf)) {
      const { SentenceId: sentenceId, Start: start, End: end, Text: text } = word;
      if (typeof text !== 'string' || typeof start !== 'number' || typeof end !== 'number' || (typeof sentenceId !== 'number' && typeof sentenceId !== 'string')) continue;
      if (!current || current.id !== String(sentenceId)) {
        current = { id: String(sentenceId), speakerId, words: [] };
        sentences.push(current);
      }
      current.words.push({ text, startMs: start, endMs: end });
    }
  }
  const language = recordOf(transcription['AudioInfo'])['Language'];
  const segments = sentences.map((s): MinutesSegment => ({
    id: s.id,
    text: s.words.map((w) => w.text).join('').trim(),
    startMs: s.words[0]!.startMs,
    endMs: s.words[s.words.length - 1]!.endMs,
    speakerId: s.speakerId,
    ...(ask.wordTimestamps ? { words: s.words.map((w) => ({ text: w.text.trim(), startMs: w.startMs, endMs: w.endMs })) } : {}),
  }));
  const speakerIds = [...new Set(segments.flatMap((s) => (s.speakerId === null ? [] : [s.speakerId])))];
  const english = ask.language === 'en_us';
  return {
    durationMs: audioDurationMs(transcription) ?? segments[segments.length - 1]?.endMs ?? 0,
    language: (typeof language === 'string' && GATEWAY_LANGUAGES[language]) || ask.language,
    segments,
    speakers: speakerIds.map((id) => ({ id, displayName: english ? `Speaker ${id}` : `发言人${id}` })),
  };
}

/** The gateway's legacy `summary` `{title, paragraph}` from `ParagraphSummary` (and `ParagraphTitle` when Tingwu gives one). */
function summaryOf(summarization: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const paragraph = summarization['ParagraphSummary'];
  if (typeof paragraph !== 'string') return {};
  return { summary: { title: stringOf(summarization['ParagraphTitle']) ?? '', paragraph } };
}

/** The gateway's legacy chapters `[{title, summary, start_time, end_time}]` from `AutoChapters`. */
function chaptersOf(chapters: unknown): Record<string, unknown> {
  if (!Array.isArray(chapters)) return {};
  return {
    chapters: chapters.map(recordOf).map((c) => ({ title: stringOf(c['Headline']) ?? '', summary: stringOf(c['Summary']) ?? '', start_time: numberOf(c['Start']), end_time: numberOf(c['End']) })),
  };
}

/** An extraction member kept in Tingwu's own structure (the spec shows none): its items as Tingwu wrote them. */
function listOf(name: 'todos' | 'qa', items: unknown): Record<string, unknown> {
  return Array.isArray(items) ? { [name]: items } : {};
}

/** The translation, Tingwu's `Translation` object as it wrote it (the spec shows no structure). */
function translationOf(translation: unknown): Record<string, unknown> {
  return typeof translation === 'object' && translation !== null && !Array.isArray(translation) ? { translation } : {};
}

/** Tingwu's offline tasks as the minutes feature runs them, through a channel of the `tingwu` protocol. */
export const tingwuMinutes: MinutesTaskAdapter = {
  submit: async (transport, ask, signal) => ({ upstreamId: readTask(await transport.call(createOfflineTask(ask), signal), transport.name).taskId }),
  async get(transport, upstreamId, ask) {
    const { taskId, lengthRead } = tingwuTaskOf(upstreamId);
    return readingOf(readTask(await transport.call(getTaskInfo(taskId)), transport.name), ask, transport.name, fetchResultJson, lengthRead);
  },
};

function arrayOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function stringOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function numberOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
