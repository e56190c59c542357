import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { sendBytes } from './files';
import { HttpError } from './http';
import { wav } from './media';
import type { ExtraRoute } from './server';

/**
 * Simulated speech providers for meeting minutes, deterministic and steered by query parameters
 * of the file URL (a real provider ignores them):
 *
 * - The recordings every simulated speech provider transcribes (createTask, used by Volcengine's
 *   recording recognition, providers/volcengine-speech.ts): a multi-speaker transcript in Chinese
 *   or English, with segment ids, millisecond times and speaker ids (word times on request).
 * - The partner minutes provider, Tingwu, is simulated in simulator/providers/tingwu.ts on these
 *   recordings, transcripts and file URL parameters.
 * - Media files (`GET|HEAD /sim/media/{name}`) to point file URLs at.
 *
 * File URL parameters:
 * `sim_duration_ms=N` the recording's length (default 180000; a WAV fetched from loopback
 * otherwise gives its own), `sim=asr_fail` the task fails, `sim=asr_unavailable` submission
 * answers 503, `sim=asr_reject` submission answers 400, `sim_asr_delay_ms=N` processing time
 * (default 150), `sim_summary=fail|invalid|invalid-once|slow|dangling` carried into the transcript
 * as a `[sim:summary=…]` directive for the summary model (see minutes-summary.ts), and for media
 * files `sim_bytes=N` the size a HEAD announces, `sim_head=none` no HEAD support,
 * `sim_content_type=T` the Content-Type served (default application/octet-stream).
 *
 * Files on loopback (the gateway's own signed links in tests and demos) are downloaded first, as a
 * provider would: an answer other than 200 fails the task.
 */
const DEFAULT_DURATION_MS = 180_000;
const DEFAULT_DELAY_MS = 150;

export interface SimSegment {
  id: string;
  text: string;
  startMs: number;
  endMs: number;
  speakerId: string | null;
  words?: { text: string; startMs: number; endMs: number }[];
}

export interface SimTranscript {
  durationMs: number;
  language: string;
  segments: SimSegment[];
  speakers: { id: string; name: string }[];
}

export interface SimTask {
  readonly id: string;
  readonly createdAt: number;
  readonly finishAt: number;
  /** `sim=asr_hold`: running (its length known) from the start, and never done. */
  readonly held: boolean;
  readonly durationMs: number;
  readonly fail: { code: string; message: string } | null;
  readonly transcript: () => SimTranscript;
  readonly features: Record<string, unknown> | null;
}

export const EN = [
  "Good morning everyone, let's start the weekly project sync.",
  'The first topic is the release schedule for the mobile app.',
  'We finished the payment module last week and testing is in progress.',
  'Alice, please send the updated budget sheet to everyone by next Friday.',
  'I think we should move the launch to the second week of June.',
  'After discussion, we decided to adopt plan B for the data migration.',
  'The Kubernetes cluster had two outages, and the root cause was a memory leak.',
  'Bob will follow up with the vendor about the license renewal.',
  'Customer feedback on the new dashboard has been mostly positive.',
  "Let's review the open risks before we close the meeting.",
];

export const ZH = [
  '大家早上好，我们开始本周的项目例会。',
  '第一个议题是移动端应用的发布计划。',
  '支付模块上周已经完成，目前正在测试。',
  '小李，请在下周五之前把更新后的预算表发给大家。',
  '我认为应该把上线时间推迟到六月第二周。',
  '经过讨论，我们决定数据迁移采用方案B。',
  'Kubernetes 集群出现了两次故障，根本原因是内存泄漏。',
  '老王负责跟进供应商的许可证续签。',
  '客户对新仪表盘的反馈总体是正面的。',
  '散会之前我们再过一遍未解决的风险。',
];

export function intParam(query: URLSearchParams, name: string, fallback: number, max = 24 * 3_600_000): number {
  const raw = query.get(name);
  if (raw === null || !/^\d{1,10}$/.test(raw)) return fallback;
  return Math.min(Number(raw), max);
}

/** Words of a text for word timestamps: CJK characters one by one, other words by whitespace. */
export function wordsOf(text: string): string[] {
  return text.match(/[\u3400-\u9fff]|[^\s\u3400-\u9fff]+/g) ?? [];
}

export function simulatedTranscript(options: {
  durationMs: number;
  language: string;
  speakers: number;
  speakerIdentification: boolean;
  words: boolean;
  summaryDirective: string | null;
}): SimTranscript {
  const bank = options.language === 'en_us' ? EN : ZH;
  const speakerCount = Math.max(1, options.speakers || 3);
  const speakers = Array.from({ length: speakerCount }, (_, i) => ({ id: `spk-${i + 1}`, name: options.language === 'en_us' ? `Speaker ${i + 1}` : `说话人${i + 1}` }));
  const segments: SimSegment[] = [];
  let at = 0;
  for (let i = 0; at < options.durationMs; i++) {
    const length = 8_000 + ((i * 3_761) % 7_000);
    const end = Math.min(options.durationMs, at + length);
    let text = bank[i % bank.length]!;
    // The directive rides in the transcript to the summary model; `invalid-once` gets a nonce so
    // that "once" means once for this recording, not for every identical simulated transcript.
    if (i === 0 && options.summaryDirective) {
      const once = options.summaryDirective.endsWith('-once') ? ` [sim:once=${randomBytes(6).toString('hex')}]` : '';
      text = `[sim:summary=${options.summaryDirective}]${once} ${text}`;
    }
    const segment: SimSegment = { id: `seg-${i + 1}`, text, startMs: at, endMs: end, speakerId: options.speakerIdentification ? speakers[i % speakerCount]!.id : null };
    if (options.words) {
      const words = wordsOf(text);
      const step = Math.max(1, Math.floor((end - at) / Math.max(1, words.length)));
      segment.words = words.map((w, k) => ({ text: w, startMs: at + k * step, endMs: Math.min(end, at + (k + 1) * step) }));
    }
    segments.push(segment);
    at = end;
  }
  return { durationMs: options.durationMs, language: options.language, segments, speakers: options.speakerIdentification ? speakers : [] };
}

function isLoopback(url: URL): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

/** The length of a PCM WAV from its header, or null when the bytes are not one. */
function wavDurationMs(bytes: Buffer): number | null {
  if (bytes.length < 44 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') return null;
  const byteRate = bytes.readUInt32LE(28);
  const dataBytes = bytes.readUInt32LE(40);
  return byteRate > 0 ? Math.round((dataBytes * 1000) / byteRate) : null;
}

/** What the provider learns by downloading a loopback file: whether it can, and a WAV's length. */
async function inspect(url: URL): Promise<{ ok: boolean; status: number; durationMs: number | null }> {
  if (!isLoopback(url)) return { ok: true, status: 200, durationMs: null };
  try {
    const res = await request(url, { method: 'GET', headersTimeout: 5_000, bodyTimeout: 10_000 });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return { ok: false, status: res.statusCode, durationMs: null };
    }
    const head = Buffer.from(await res.body.arrayBuffer());
    return { ok: true, status: 200, durationMs: wavDurationMs(head) };
  } catch {
    return { ok: false, status: 0, durationMs: null };
  }
}

export interface SubmitOptions {
  url: string;
  language: string;
  speakerIdentification: boolean;
  speakers: number;
  words: boolean;
  features: Record<string, unknown> | null;
}

export async function createTask(id: string, o: SubmitOptions): Promise<SimTask> {
  let url: URL;
  try {
    url = new URL(o.url);
  } catch {
    throw new HttpError(400, 'the audio url is not a URL', 'InvalidParameter.AudioUrl');
  }
  const q = url.searchParams;
  const sim = q.get('sim');
  if (sim === 'asr_unavailable') throw new HttpError(503, 'the speech service is temporarily unavailable', 'ServiceUnavailable');
  if (sim === 'asr_reject') throw new HttpError(400, 'the audio format is not supported', 'InvalidParameter.AudioFormat');
  const fetched = await inspect(url);
  const durationMs = q.get('sim_duration_ms') !== null ? intParam(q, 'sim_duration_ms', DEFAULT_DURATION_MS, 100 * 3_600_000) : (fetched.durationMs ?? DEFAULT_DURATION_MS);
  const now = Date.now();
  const fail = !fetched.ok
    ? { code: 'FileUnreachable', message: `the audio file could not be downloaded (HTTP ${fetched.status})` }
    : sim === 'asr_fail'
      ? { code: 'AudioDecodeFailed', message: 'the audio could not be decoded' }
      : null;
  let cached: SimTranscript | null = null;
  return {
    id,
    createdAt: now,
    finishAt: now + intParam(q, 'sim_asr_delay_ms', DEFAULT_DELAY_MS, 600_000),
    held: sim === 'asr_hold',
    durationMs,
    fail,
    features: o.features,
    transcript: () =>
      (cached ??= simulatedTranscript({
        durationMs,
        language: o.language,
        speakers: o.speakers,
        speakerIdentification: o.speakerIdentification,
        words: o.words,
        summaryDirective: q.get('sim_summary'),
      })),
  };
}

export function stateOf(task: SimTask): 'queued' | 'running' | 'done' {
  if (task.held) return 'running';
  const now = Date.now();
  if (now >= task.finishAt) return 'done';
  return now >= task.createdAt + (task.finishAt - task.createdAt) / 5 ? 'running' : 'queued';
}

/** Recordings the simulated providers and the gateway's file probe fetch (sizes and types on request). */
function mediaRoutes(): ExtraRoute[] {
  return (['GET', 'HEAD'] as const).map(
    (method): ExtraRoute => ({
      method,
      path: '/sim/media/:name',
      handler: ({ res, params, query }) => {
        if (method === 'HEAD' && query.get('sim_head') === 'none') {
          res.writeHead(405, { allow: 'GET' });
          res.end();
          return;
        }
        const bytes = params.name!.toLowerCase().endsWith('.wav') ? wav(intParam(query, 'sim_duration_ms', 3_000, 60_000) / 1000, 100) : Buffer.alloc(1024, 7);
        const contentType = query.get('sim_content_type') ?? 'application/octet-stream';
        if (method === 'HEAD') {
          res.writeHead(200, { 'content-type': contentType, 'content-length': query.get('sim_bytes') ?? String(bytes.length) });
          res.end();
          return;
        }
        sendBytes(res, contentType, bytes);
      },
    }),
  );
}

export function asrRoutes(): ExtraRoute[] {
  return mediaRoutes();
}
