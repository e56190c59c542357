/**
 * Volcengine's podcast synthesis (豆包语音 播客API), simulated as
 * https://www.volcengine.com/docs/6561/1668014 describes it: a WebSocket at `/sami/podcasttts`
 * under the speech API's base URL (`https://openspeech.bytedance.com/api/v3`, here
 * `{sim}/volcengine-podcast/api/v3`), speaking Volcengine speech's binary frames
 * (src/upstreams/volcengine-speech/podcast-frames.ts). The handshake must carry the channels
 * file's placeholder headers (`X-Api-App-Id`, `X-Api-Access-Key`, `X-Api-App-Key`; else 401) and
 * `X-Api-Resource-Id: volc.service_type.10050` (else 403).
 *
 * A connection: StartConnection → ConnectionStarted; StartSession (the reference's payload:
 * `action` 0 with `input_text`, 4 with `prompt_text`, 3 with `nlp_texts`; `speaker_info.speakers`,
 * two of the reference's four podcast voices; `audio_config` `pcm` or `mp3` (MP3 at 24000 Hz
 * only); `retry_info`) → SessionStarted; after FinishSession the episode, round by round:
 * PodcastRoundStart `{text_type, speaker, round_id, text}`, the round's audio in
 * PodcastRoundResponse frames, PodcastRoundEnd `{audio_duration, start_time, end_time}` and a
 * UsageResponse of its audio tokens; a UsageResponse of the text's tokens comes first, in every
 * session (a resumed one too); then SessionFinished `{status_code: 20000000, message: "ok"}`.
 * FinishConnection → ConnectionFinished. A session resumed with `retry_info` (the first session's
 * id as `retry_task_id`) continues after `last_finished_round_id`.
 *
 * Directives in the text (or the prompt): `[sim:duration=S]` the episode's length (up to 3600 s;
 * default half a second per token of the text, 2 to 30 s), `[sim:delay=MS]` the time its rounds
 * take in all (default 150 ms), `[sim:fail]` the script model's content filter (error 50302102,
 * for good), `[sim:error=CODE]` an error frame with the reference's CODE, `[sim:hold]` nothing
 * after SessionStarted until `POST /volcengine-podcast/api/v3/sim/podcasts/{task id}/release` (or
 * the client leaves), `[sim:gate=NAME]` the first round waits after its first audio at the gate
 * NAME (simulator/gates.ts), `[sim:cut=R]` the connection is cut inside round R after its first
 * audio, for the first `[sim:cuts=K]` (default 1) connections of each task (of the first
 * `[sim:cut-tasks=N]` tasks of that text only, when given; with `[sim:cut-usage]` after a
 * UsageResponse of that round's audio tokens), `[sim:round-error=R]` round R ends
 * `{is_error: true}` the first time in each task. `GET …/sim/podcasts/sessions` lists every session
 * (its task, its StartSession payload, `retry_info`, the rounds it finished, their audio's length,
 * the usage it reported, how it ended), for tests.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket } from 'ws';
import { countTokens } from '../../src/billing/tokens';
import { decodeFrame, encodeFrame, FrameError, jsonPayload, MessageFlags, MessageType, PodcastEvent, Serialization } from '../../src/upstreams/volcengine-speech/podcast-frames';
import { parseDirectives, stripDirectives } from '../directives';
import { passGateWhile } from '../gates';
import { HttpError, sendJson } from '../http';
import { MP3_FRAME_SAMPLES, mp3Silence, pcm } from '../media';
import type { ExtraRoute, SocketRefusal } from '../route';
import { hasAcceptedHeaders } from './credentials';
import type { SimulatedProvider } from './provider';

/** The reference's podcast voices (可选发音人列表). */
const SPEAKERS = ['zh_female_mizaitongxue_v2_saturn_bigtts', 'zh_male_dayixiansheng_v2_saturn_bigtts', 'zh_male_liufei_v2_saturn_bigtts', 'zh_male_xiaolei_v2_saturn_bigtts'];
const RESOURCE_ID = 'volc.service_type.10050';
const SAMPLE_RATES = [16_000, 24_000, 48_000];
/** The reference's limits: the text's context, a dialogue round's characters, a dialogue's. */
const MAX_INPUT_CHARS = 32_000;
const MAX_ROUND_CHARS = 300;
const MAX_DIALOGUE_CHARS = 10_000;
const MAX_SIM_DURATION_SECONDS = 3600;
const AUDIO_TOKENS_PER_SECOND = 25;
/** Each round's audio goes out in this many frames. */
const CHUNKS_PER_ROUND = 3;

/** The reference's error messages (§3) by code, for `[sim:error=CODE]`. */
const ERROR_MESSAGES: Readonly<Record<number, string>> = {
  45000000: 'quota exceeded for types: concurrency',
  40000010: 'PodcastTTS invalid param',
  40000022: 'IllegalPayload:TextRiskAuditFailed',
  55000000: 'server error',
  50302102: 'NLP RespError(50000001/FangzhouPodcastNLPFailed:content filter)',
};

interface Round {
  readonly speaker: string;
  readonly text: string;
  /** Sample (PCM) or frame (MP3) boundaries within the episode. */
  readonly from: number;
  readonly to: number;
}

/** A task: what the first session asked, which a resumed session continues. */
interface SimPodcast {
  readonly id: string;
  readonly source: string;
  readonly format: 'pcm' | 'mp3';
  readonly sampleRate: number;
  readonly rounds: readonly Round[];
  readonly inputTokens: number;
  readonly delayMs: number;
  readonly gate: string | undefined;
  held: boolean;
  readonly release: Set<() => void>;
}

/** A session as the simulator saw it: what it was asked, what it sent, how it ended. */
export interface SimPodcastSession {
  readonly task_id: string;
  readonly session_id: string;
  /** The StartSession payload as received. */
  readonly request: Record<string, unknown>;
  readonly retry_info: { retry_task_id: unknown; last_finished_round_id: unknown } | null;
  readonly text: string;
  /** The rounds it finished, their audio's length, and the usage it reported. */
  readonly rounds: number[];
  audio_seconds: number;
  readonly usage: { input_text_tokens: number; output_audio_tokens: number };
  outcome: 'running' | 'held' | 'finished' | 'cut' | 'round_error' | 'closed' | 'failed';
}

const tasks = new Map<string, SimPodcast>();
const sessions: SimPodcastSession[] = [];
/**
 * Cuts and round errors already made, by the provider task (the first session's id, which a
 * resumed session names in `retry_info`): a new synthesis of the same text (a test run again) is
 * cut again. `[sim:cut-tasks=N]` counts the tasks cut by their text.
 */
const cutsByTask = new Map<string, number>();
const roundErrorsByTask = new Set<string>();
const tasksCutByText = new Map<string, number>();
/** Keeps a long-running simulator's memory bounded. */
const MAX_REMEMBERED = 10_000;

function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  if (map.size >= MAX_REMEMBERED) map.delete(map.keys().next().value!);
  map.set(key, value);
}

class Refusal extends Error {
  constructor(
    readonly code: number,
    message = ERROR_MESSAGES[code] ?? 'error',
  ) {
    super(message);
  }
}

/**
 * What a failed frame is answered with: an unreadable frame is the client's parameter error, any
 * other failure the provider's own (55000000). Thrown out of an event handler instead, it would
 * end the simulator's process.
 */
function refusalOf(err: unknown): Refusal {
  if (err instanceof Refusal) return err;
  if (err instanceof FrameError) return new Refusal(40000010, `PodcastTTS invalid param: ${err.message}`);
  return new Refusal(55000000);
}

function serverEvent(event: number, sessionId: string | null, payload: unknown, connectionId: string | null = null): Uint8Array {
  return encodeFrame({
    type: MessageType.FullServerResponse,
    flags: MessageFlags.WithEvent,
    serialization: Serialization.Json,
    event,
    sessionId,
    connectionId,
    sequence: null,
    errorCode: null,
    payload: Buffer.from(JSON.stringify(payload)),
  });
}

function audioFrame(sessionId: string, audio: Uint8Array): Uint8Array {
  return encodeFrame({ type: MessageType.AudioOnlyServer, flags: MessageFlags.WithEvent, serialization: Serialization.Raw, event: PodcastEvent.PodcastRoundResponse, sessionId, connectionId: null, sequence: null, errorCode: null, payload: audio });
}

function errorFrame(code: number, message: string): Uint8Array {
  return encodeFrame({ type: MessageType.Error, flags: MessageFlags.None, serialization: Serialization.Json, event: null, sessionId: null, connectionId: null, sequence: null, errorCode: code, payload: Buffer.from(JSON.stringify({ error: message })) });
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/** The episode's rounds: alternating speakers, the length split evenly in whole units. */
function roundsOf(texts: readonly { speaker: string; text: string }[], units: number): Round[] {
  return texts.map((t, i) => ({ ...t, from: Math.round((units * i) / texts.length), to: Math.round((units * (i + 1)) / texts.length) }));
}

/** What a StartSession asks, checked as the reference says; a Refusal when it cannot be made. */
function podcastOf(p: Record<string, unknown>, taskId: string): SimPodcast {
  const action = p.action ?? 0;
  const speakerInfo = record(p.speaker_info);
  const speakers = speakerInfo.speakers ?? [SPEAKERS[1], SPEAKERS[0]];
  if (!Array.isArray(speakers) || speakers.length !== 2 || !speakers.every((s) => SPEAKERS.includes(s as string))) throw new Refusal(40000010, 'PodcastTTS invalid param: speaker_info.speakers must be two of the podcast speakers');
  const audio = record(p.audio_config);
  const format = audio.format ?? 'pcm';
  const sampleRate = audio.sample_rate ?? 24_000;
  if (format !== 'pcm' && format !== 'mp3') throw new Refusal(40000010, `PodcastTTS invalid param: the simulator makes pcm and mp3, not ${String(format)}`);
  if (typeof sampleRate !== 'number' || !SAMPLE_RATES.includes(sampleRate) || (format === 'mp3' && sampleRate !== 24_000)) throw new Refusal(40000010, 'PodcastTTS invalid param: audio_config.sample_rate');
  let source: string;
  let dialogue: { speaker: string; text: string }[] | null = null;
  if (action === 0) {
    if (!nonEmpty(p.input_text)) throw new Refusal(40000010, 'PodcastTTS invalid param: input_text is empty (the simulator reads no input_info.input_url)');
    if (p.input_text.length > MAX_INPUT_CHARS) throw new Refusal(50302102, 'NLP RespError(50000001/FangzhouPodcastNLPFailed:content length)');
    source = p.input_text;
  } else if (action === 4) {
    if (!nonEmpty(p.prompt_text)) throw new Refusal(40000010, 'PodcastTTS invalid param: prompt_text is required for action 4');
    source = p.prompt_text;
  } else if (action === 3) {
    const lines = Array.isArray(p.nlp_texts) ? p.nlp_texts.map(record) : [];
    if (lines.length === 0 || !lines.every((l) => nonEmpty(l.text) && l.text.length <= MAX_ROUND_CHARS && SPEAKERS.includes(l.speaker as string))) throw new Refusal(40000010, 'PodcastTTS invalid param: nlp_texts');
    dialogue = lines.map((l) => ({ speaker: l.speaker as string, text: l.text as string }));
    source = dialogue.map((l) => l.text).join('\n');
    if (source.length > MAX_DIALOGUE_CHARS) throw new Refusal(40000010, 'PodcastTTS invalid param: nlp_texts over 10000 characters');
  } else {
    throw new Refusal(40000010, `PodcastTTS invalid param: action ${String(action)}`);
  }
  const d = parseDirectives(source);
  const plain = stripDirectives(source);
  const inputTokens = countTokens(plain);
  const given = typeof d.raw['duration'] === 'string' && /^\d{1,4}(\.\d+)?$/.test(d.raw['duration']) ? Number(d.raw['duration']) : NaN;
  const seconds = given > 0 && given <= MAX_SIM_DURATION_SECONDS ? given : Math.min(30, Math.max(2, inputTokens / 2));
  const unitsPerSecond = format === 'mp3' ? sampleRate / MP3_FRAME_SAMPLES : sampleRate;
  const units = Math.max(1, Math.round(seconds * unitsPerSecond));
  const excerpt = plain.replace(/\s+/g, ' ').trim().slice(0, 40);
  const texts = dialogue ?? Array.from({ length: Math.max(2, Math.ceil(seconds / 2.5)) }, (_, i) => ({ speaker: speakers[i % 2] as string, text: `(${i + 1}) ${excerpt}` }));
  return {
    id: taskId,
    source,
    format,
    sampleRate,
    rounds: roundsOf(texts, Math.max(units, texts.length)),
    inputTokens,
    delayMs: d.delayMs ?? 150,
    gate: typeof d.raw['gate'] === 'string' ? d.raw['gate'] : undefined,
    held: d.raw['hold'] !== undefined,
    release: new Set(),
  };
}

/** A round's audio: PCM samples or MP3 frames. */
function audioOf(podcast: SimPodcast, round: Round): Buffer {
  return podcast.format === 'mp3' ? mp3Silence(round.to - round.from) : pcm(round.to - round.from, podcast.sampleRate);
}

function secondsOf(podcast: SimPodcast, units: number): number {
  return (units * (podcast.format === 'mp3' ? MP3_FRAME_SAMPLES : 1)) / podcast.sampleRate;
}

/** `[sim:NAME=R]` as a round number, or null. */
function roundDirective(source: string, name: string): number | null {
  const value = parseDirectives(source).raw[name];
  return typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : null;
}

/** One connection: its frames answered in order, the episode sent after FinishSession. */
function connection(ws: WebSocket): void {
  const connectionId = randomUUID();
  let started = false;
  let closed = false;
  let current: { podcast: SimPodcast; sessionId: string; fromRound: number; log: SimPodcastSession } | null = null;
  const send = (frame: Uint8Array) => {
    if (!closed) ws.send(frame);
  };
  const refuse = (err: Refusal) => {
    if (current) current.log.outcome = 'failed';
    send(errorFrame(err.code, err.message));
    ws.close();
  };
  // A frame that breaks the WebSocket framing (an unmasked client frame, say) ends this connection only.
  ws.on('error', () => ws.terminate());
  ws.on('close', () => {
    closed = true;
    if (current && (current.log.outcome === 'running' || current.log.outcome === 'held')) current.log.outcome = 'closed';
  });
  ws.on('message', (data: RawData) => {
    let frame;
    try {
      frame = decodeFrame(new Uint8Array(data as Buffer));
    } catch (err) {
      return refuse(refusalOf(err));
    }
    if (frame.type !== MessageType.FullClientRequest || frame.event === null) return refuse(new Refusal(40000010, 'PodcastTTS invalid param: a client frame is a full-client request with an event'));
    switch (frame.event) {
      case PodcastEvent.StartConnection:
        started = true;
        return send(serverEvent(PodcastEvent.ConnectionStarted, null, {}, connectionId));
      case PodcastEvent.StartSession: {
        if (!started || current || !nonEmpty(frame.sessionId)) return refuse(new Refusal(40000010, 'PodcastTTS invalid param: StartSession out of order or without a session id'));
        try {
          const p = record(jsonPayload(frame));
          const retry = p.retry_info === undefined ? null : record(p.retry_info);
          let podcast: SimPodcast;
          let fromRound = 0;
          if (retry) {
            const known = tasks.get(String(retry.retry_task_id));
            const last = retry.last_finished_round_id;
            if (!known || typeof last !== 'number' || !Number.isInteger(last) || last < -1 || last >= known.rounds.length) throw new Refusal(40000010, 'PodcastTTS invalid param: retry_info names no task of this simulator, or no round of it');
            podcast = known;
            fromRound = last + 1;
          } else {
            podcast = podcastOf(p, frame.sessionId);
            remember(tasks, podcast.id, podcast);
          }
          const log: SimPodcastSession = {
            task_id: podcast.id,
            session_id: frame.sessionId,
            request: p,
            retry_info: retry ? { retry_task_id: retry.retry_task_id, last_finished_round_id: retry.last_finished_round_id } : null,
            text: podcast.source,
            rounds: [],
            audio_seconds: 0,
            usage: { input_text_tokens: 0, output_audio_tokens: 0 },
            outcome: 'running',
          };
          if (sessions.length >= MAX_REMEMBERED) sessions.shift();
          sessions.push(log);
          current = { podcast, sessionId: frame.sessionId, fromRound, log };
          return send(serverEvent(PodcastEvent.SessionStarted, frame.sessionId, {}));
        } catch (err) {
          return refuse(refusalOf(err));
        }
      }
      case PodcastEvent.FinishSession:
        if (!current || frame.sessionId !== current.sessionId) return refuse(new Refusal(40000010, 'PodcastTTS invalid param: FinishSession of no session'));
        void episode(ws, current, send, () => closed).catch(() => ws.terminate());
        return;
      case PodcastEvent.FinishConnection:
        send(serverEvent(PodcastEvent.ConnectionFinished, null, { status_code: 20000000, message: 'ok' }, connectionId));
        ws.close();
        return;
      default:
        return refuse(new Refusal(40000010, `PodcastTTS invalid param: event ${frame.event}`));
    }
  });
}

/**
 * Whether this connection of the task is cut (`[sim:cut=R]`): its first `cuts` connections are,
 * in every task of the text, or in its first `[sim:cut-tasks=N]` tasks only. Counts the cut.
 */
function mayCut(podcast: SimPodcast, cuts: number): boolean {
  const made = cutsByTask.get(podcast.id);
  const cutTasks = roundDirective(podcast.source, 'cut-tasks');
  if (made === undefined && cutTasks !== null && (tasksCutByText.get(podcast.source) ?? 0) >= cutTasks) return false;
  if ((made ?? 0) >= cuts) return false;
  if (made === undefined) remember(tasksCutByText, podcast.source, (tasksCutByText.get(podcast.source) ?? 0) + 1);
  remember(cutsByTask, podcast.id, (made ?? 0) + 1);
  return true;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends the episode from `fromRound` on, as the directives of its text say. */
async function episode(ws: WebSocket, s: { podcast: SimPodcast; sessionId: string; fromRound: number; log: SimPodcastSession }, send: (frame: Uint8Array) => void, gone: () => boolean): Promise<void> {
  const { podcast, sessionId, log } = s;
  const d = parseDirectives(podcast.source);
  if (d.fail || typeof d.raw['error'] === 'string') {
    const code = d.fail ? 50302102 : Number(d.raw['error']);
    log.outcome = 'failed';
    send(errorFrame(code, ERROR_MESSAGES[code] ?? `simulated error ${code}`));
    ws.close();
    return;
  }
  if (podcast.held) {
    log.outcome = 'held';
    await new Promise<void>((resolve) => {
      podcast.release.add(resolve);
      ws.once('close', () => resolve());
    });
    podcast.release.clear();
    if (gone()) return;
    log.outcome = 'running';
  }
  const usage = (input: number, output: number) => {
    log.usage.input_text_tokens += input;
    log.usage.output_audio_tokens += output;
    send(serverEvent(PodcastEvent.UsageResponse, sessionId, { usage: { input_text_tokens: input, output_audio_tokens: output } }));
  };
  usage(podcast.inputTokens, 0);
  const cutRound = roundDirective(podcast.source, 'cut');
  const cuts = roundDirective(podcast.source, 'cuts') ?? 1;
  const errorRound = roundDirective(podcast.source, 'round-error');
  const cutUsage = d.raw['cut-usage'] !== undefined;
  let reportedTokens = Math.ceil(secondsOf(podcast, podcast.rounds[s.fromRound - 1]?.to ?? 0) * AUDIO_TOKENS_PER_SECOND);
  for (let r = s.fromRound; r < podcast.rounds.length; r++) {
    const round = podcast.rounds[r]!;
    const audio = audioOf(podcast, round);
    const step = Math.ceil(audio.length / CHUNKS_PER_ROUND);
    send(serverEvent(PodcastEvent.PodcastRoundStart, sessionId, { text_type: 'dialogue', speaker: round.speaker, round_id: r, text: round.text }));
    send(audioFrame(sessionId, audio.subarray(0, step)));
    if (r === cutRound && mayCut(podcast, cuts)) {
      // As if the provider counted the round before the connection broke: the resumed session makes it again, and reports it again.
      if (cutUsage) usage(0, Math.ceil(secondsOf(podcast, round.to) * AUDIO_TOKENS_PER_SECOND) - reportedTokens);
      log.outcome = 'cut';
      ws.terminate();
      return;
    }
    if (r === 0 && podcast.gate !== undefined && !(await passGateWhile(podcast.gate, ws, gone))) return;
    await sleep(podcast.delayMs / podcast.rounds.length);
    if (gone()) return;
    for (let at = step; at < audio.length; at += step) send(audioFrame(sessionId, audio.subarray(at, at + step)));
    if (r === errorRound && !roundErrorsByTask.has(podcast.id)) {
      if (roundErrorsByTask.size >= MAX_REMEMBERED) roundErrorsByTask.clear();
      roundErrorsByTask.add(podcast.id);
      log.outcome = 'round_error';
      send(serverEvent(PodcastEvent.PodcastRoundEnd, sessionId, { is_error: true, error_msg: 'simulated round failure' }));
      return;
    }
    const start = secondsOf(podcast, round.from);
    const end = secondsOf(podcast, round.to);
    send(serverEvent(PodcastEvent.PodcastRoundEnd, sessionId, { audio_duration: end - start, start_time: start, end_time: end }));
    // Each round's audio tokens, so that the rounds of a session add up to the episode's.
    const tokens = Math.ceil(end * AUDIO_TOKENS_PER_SECOND);
    usage(0, tokens - reportedTokens);
    reportedTokens = tokens;
    log.rounds.push(r);
    log.audio_seconds += end - start;
  }
  log.outcome = 'finished';
  send(serverEvent(PodcastEvent.SessionFinished, sessionId, { status_code: 20000000, message: 'ok' }));
}

/** The handshake's check: the file's placeholder headers and the podcast resource. */
function refuseHandshake(req: IncomingMessage): SocketRefusal | null {
  if (!hasAcceptedHeaders(req.headers, 'volcengine_podcast')) return { status: 401, body: { error: 'the app id, access key or app key is missing or invalid' } };
  if (req.headers['x-api-resource-id'] !== RESOURCE_ID) return { status: 403, body: { error: `resource ${String(req.headers['x-api-resource-id'] ?? '')} is not granted` } };
  return null;
}

function controlRoutes(): ExtraRoute[] {
  return [
    {
      method: 'GET',
      path: '/sim/podcasts/sessions',
      handler: ({ res }) => sendJson(res, 200, { data: sessions }),
    },
    {
      method: 'POST',
      path: '/sim/podcasts/:id/release',
      body: 'none',
      handler: ({ res, params }) => {
        const podcast = tasks.get(params.id!);
        if (!podcast) throw new HttpError(404, `podcast task ${params.id} not found`, 'ResourceNotFound');
        if (!podcast.held) throw new HttpError(409, 'the task is not held', 'TaskNotHeld');
        podcast.held = false;
        for (const release of [...podcast.release]) release();
        sendJson(res, 200, { id: podcast.id, released: true });
      },
    },
  ];
}

export const volcenginePodcastProvider: SimulatedProvider = {
  protocol: 'volcengine_podcast',
  title: 'Volcengine speech: podcast synthesis (WebSocket, binary frames)',
  basePath: '/api/v3',
  routes: controlRoutes,
  sockets: () => [{ path: '/sami/podcasttts', refuse: refuseHandshake, session: (ws) => connection(ws) }],
};
