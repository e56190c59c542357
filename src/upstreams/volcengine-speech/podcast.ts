/**
 * Podcasts on Volcengine's podcast synthesis WebSocket (豆包语音 播客API). Reference:
 * https://www.volcengine.com/docs/6561/1668014 (request headers, the StartSession payload of §2.1,
 * the events of §2.3 and §2.4, the error codes of §3), and the page's Python demo
 * (`examples/volcengine/podcasts.py` of the `volc_speech_python_sdk` archive it links): the order
 * of the calls, FinishSession sent right after SessionStarted, and the resumption of a cut
 * synthesis with `retry_info`.
 *
 * One connection runs one session: StartConnection → ConnectionStarted, StartSession (the
 * podcast's parameters) → SessionStarted, FinishSession (all input sent); then the provider sends
 * the podcast round by round (PodcastRoundStart, its audio in PodcastRoundResponse frames,
 * PodcastRoundEnd with the round's duration), UsageResponse events, and SessionFinished. A round's
 * audio is handed over only once its PodcastRoundEnd arrives: a connection cut inside a round is
 * resumed on a new connection with `retry_info {retry_task_id, last_finished_round_id}` (the
 * first session's id is the task's id, as the reference says), and the provider sends that round
 * again from its start.
 */
import { randomUUID } from 'node:crypto';
import { isTokenCount, protocolError, recordOf } from '../answer-fields';
import { UpstreamError } from '../errors';
import type { PodcastAsk, PodcastAudioEncoding, PodcastSynthesis, PodcastSynthesisAdapter } from '../podcast-synthesis';
import type { WireSocket, WireSocketTransport } from '../wire';
import { clientEvent, decodeFrame, FrameError, jsonPayload, MessageType, PodcastEvent, type SpeechFrame } from './podcast-frames';
import { PODCAST_OK, podcastCodeError, volcenginePodcastProtocol } from './podcast-protocol';

/** The synthesis's path under the channel's base URL (`https://openspeech.bytedance.com/api/v3`). */
export const PODCAST_PATH = '/sami/podcasttts';
/** The reference's resource id of podcast synthesis (`X-Api-Resource-Id`). */
export const PODCAST_RESOURCE_ID = 'volc.service_type.10050';
/** The sample rate asked for (the reference's default); PCM is 16-bit mono. */
export const PODCAST_SAMPLE_RATE = 24_000;
/** Connections one synthesis may use: the first and four resumptions (the demo retries five times). */
export const MAX_PODCAST_SESSIONS = 5;

/** The reference's `action`: summarize a given text into a podcast (0), or research a prompt online (4). */
const ACTION_TEXT = 0;
const ACTION_TOPIC = 4;

const UTF8 = new TextDecoder();

/** Where a synthesis stands across its connections. */
interface Progress {
  /** The first session's id: the provider's task id, named by a resumption. */
  taskId: string | null;
  /** Whether any round began: until one does there is nothing to resume, and a cut synthesis starts again. */
  roundBegan: boolean;
  /** The last round whose audio was handed over (-1: none). */
  lastRound: number;
  seconds: number;
  /** The largest input text tokens one session reported: every session of a synthesis reads the same text. */
  inputTextTokens: number | null;
  /** The audio tokens the sessions reported, summed: each reports the rounds it made. */
  outputAudioTokens: number | null;
}

function startSessionPayload(ask: PodcastAsk, progress: Progress): Record<string, unknown> {
  return {
    action: 'text' in ask.source ? ACTION_TEXT : ACTION_TOPIC,
    ...('text' in ask.source ? { input_text: ask.source.text } : { prompt_text: ask.source.topic }),
    // The episode is the hosts' talk: no intro or outro music (the provider's default has an intro).
    use_head_music: false,
    use_tail_music: false,
    // The hosts speak in the order the client listed them.
    speaker_info: { random_order: false, speakers: ask.voices },
    audio_config: { format: ask.format === 'mp3' ? 'mp3' : 'pcm', sample_rate: PODCAST_SAMPLE_RATE, speech_rate: 0 },
    ...(progress.roundBegan && progress.taskId ? { retry_info: { retry_task_id: progress.taskId, last_finished_round_id: progress.lastRound } } : {}),
  };
}

function count(value: unknown): number | null {
  return isTokenCount(value) ? value : null;
}

function seconds(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

function add(total: number | null, value: number | null): number | null {
  return value === null ? total : (total ?? 0) + value;
}

/** A frame's JSON payload as an object; a protocol error when it is not JSON. */
function payloadOf(frame: SpeechFrame, channel: string): Readonly<Record<string, unknown>> {
  try {
    return recordOf(jsonPayload(frame));
  } catch (err) {
    if (err instanceof FrameError) throw protocolError(channel, `an unreadable payload of event ${frame.event}: ${err.message}`);
    throw err;
  }
}

/** An error frame's message: its JSON object's `error` or `message`, else its text (the reference calls it an error object). */
function errorMessageOf(payload: Uint8Array): string {
  const text = UTF8.decode(payload);
  try {
    const value = recordOf(JSON.parse(text));
    const message = value.error ?? value.message;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: the text as it is
  }
  return text;
}

/** The next frame; null once the connection closed. An error frame is thrown as the gateway's error. */
async function nextFrame(socket: WireSocket, channel: string): Promise<SpeechFrame | null> {
  const bytes = await socket.next();
  if (bytes === null) return null;
  let frame: SpeechFrame;
  try {
    frame = decodeFrame(bytes);
  } catch (err) {
    if (err instanceof FrameError) throw protocolError(channel, `an unreadable frame: ${err.message}`);
    throw err;
  }
  if (frame.type === MessageType.Error) throw podcastCodeError(frame.errorCode ?? 0, errorMessageOf(frame.payload), channel);
  // A session that failed says so with its status (the generic SessionFailed event of the protocol).
  if (frame.event === PodcastEvent.SessionFailed) {
    const p = payloadOf(frame, channel);
    throw podcastCodeError(count(p.status_code) ?? 0, String(p.message ?? p.error ?? ''), channel);
  }
  return frame;
}

/** Waits for the event that answers a request of the set-up; anything else is a protocol error. */
async function expectEvent(socket: WireSocket, event: number, what: string, channel: string): Promise<void> {
  const frame = await nextFrame(socket, channel);
  if (frame === null) throw new UpstreamError(0, `channel ${channel} closed the WebSocket before ${what}`, 'upstream_unreachable', 'network');
  if (frame.event !== event) throw protocolError(channel, `event ${frame.event} where ${what} (event ${event}) was expected`);
}

/**
 * One connection and its session: `finished` when the provider ended the session, `cut` when the
 * connection ended first or the provider reported a failed round (the reference's cue to resume).
 */
async function runSession(transport: WireSocketTransport, ask: PodcastAsk, progress: Progress, write: (audio: Uint8Array) => Promise<void>, signal: AbortSignal): Promise<'finished' | 'cut'> {
  const channel = transport.name;
  const sessionId = randomUUID();
  const payload = startSessionPayload(ask, progress);
  if (!progress.roundBegan) progress.taskId = sessionId;
  const opening = await transport.open({ path: PODCAST_PATH, headers: { 'x-api-resource-id': PODCAST_RESOURCE_ID, 'x-api-request-id': sessionId }, model: ask.model }, signal);
  if ('refusal' in opening) throw volcenginePodcastProtocol.errorOf(opening.refusal, channel);
  const socket = opening.socket;
  try {
    await socket.send(clientEvent(PodcastEvent.StartConnection, {}));
    await expectEvent(socket, PodcastEvent.ConnectionStarted, 'ConnectionStarted', channel);
    await socket.send(clientEvent(PodcastEvent.StartSession, payload, sessionId));
    await expectEvent(socket, PodcastEvent.SessionStarted, 'SessionStarted', channel);
    await socket.send(clientEvent(PodcastEvent.FinishSession, {}, sessionId));
    let round: { id: number; audio: Uint8Array[] } | null = null;
    let input: number | null = null;
    let output: number | null = null;
    const settleUsage = () => {
      if (input !== null) progress.inputTextTokens = Math.max(progress.inputTextTokens ?? 0, input);
      progress.outputAudioTokens = add(progress.outputAudioTokens, output);
    };
    for (;;) {
      const frame = await nextFrame(socket, channel);
      if (frame === null) {
        settleUsage();
        return 'cut';
      }
      switch (frame.event) {
        case PodcastEvent.PodcastRoundStart: {
          const id = payloadOf(frame, channel).round_id;
          round = { id: typeof id === 'number' && Number.isSafeInteger(id) ? id : progress.lastRound + 1, audio: [] };
          progress.roundBegan = true;
          break;
        }
        case PodcastEvent.PodcastRoundResponse:
          if (!round) throw protocolError(channel, 'audio outside a round');
          round.audio.push(frame.payload);
          break;
        case PodcastEvent.PodcastRoundEnd: {
          const end = payloadOf(frame, channel);
          if (!round) throw protocolError(channel, 'the end of a round that never began');
          if (end.is_error === true) {
            settleUsage();
            return 'cut';
          }
          for (const chunk of round.audio) await write(chunk);
          const bytes = round.audio.reduce((n, chunk) => n + chunk.byteLength, 0);
          // A round without its duration, in PCM, is as long as its samples.
          progress.seconds += seconds(end.audio_duration) ?? (ask.format === 'mp3' ? 0 : bytes / (PODCAST_SAMPLE_RATE * 2));
          progress.lastRound = round.id;
          round = null;
          break;
        }
        case PodcastEvent.UsageResponse: {
          const usage = recordOf(payloadOf(frame, channel).usage);
          input = add(input, count(usage.input_text_tokens));
          output = add(output, count(usage.output_audio_tokens));
          break;
        }
        case PodcastEvent.SessionFinished: {
          const end = payloadOf(frame, channel);
          const status = count(end.status_code);
          if (status !== null && status !== PODCAST_OK) throw podcastCodeError(status, String(end.message ?? ''), channel);
          settleUsage();
          // Polite, not awaited: the podcast is whole, and the close frame follows at once.
          await socket.send(clientEvent(PodcastEvent.FinishConnection, {})).catch(() => undefined);
          return 'finished';
        }
        default:
          // PodcastEnd (a summary and, when asked, the provider's own link to the audio) and any
          // event the reference adds later: the gateway keeps the audio it received itself.
          break;
      }
    }
  } finally {
    socket.close();
  }
}

export const volcenginePodcasts: PodcastSynthesisAdapter = {
  encoding(format): PodcastAudioEncoding {
    return format === 'mp3' ? { container: 'mp3' } : { container: 'pcm', sampleRate: PODCAST_SAMPLE_RATE, channels: 1, bitsPerSample: 16 };
  },

  async synthesize(transport, ask, write, signal): Promise<PodcastSynthesis> {
    const progress: Progress = { taskId: null, roundBegan: false, lastRound: -1, seconds: 0, inputTextTokens: null, outputAudioTokens: null };
    for (let session = 1; session <= MAX_PODCAST_SESSIONS; session++) {
      if ((await runSession(transport, ask, progress, write, signal)) === 'finished') {
        return {
          // Whole milliseconds: a sum of the rounds' durations carries float noise.
          durationSeconds: Math.round(progress.seconds * 1000) / 1000,
          inputTextTokens: progress.inputTextTokens,
          outputAudioTokens: progress.outputAudioTokens,
        };
      }
      signal.throwIfAborted();
    }
    throw new UpstreamError(502, `channel ${transport.name} cut the podcast synthesis ${MAX_PODCAST_SESSIONS} times before it finished`, 'upstream_unavailable', 'network');
  },
};
