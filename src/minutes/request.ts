import type { Catalog, ModelEntry } from '../billing/catalog';
import { chatPricing } from '../chat/model-type';
import { priceLine, pricingOf, type PricedLine } from '../billing/money';
import { ApiError } from '../http/errors';
import { isSafeText } from '../http/safe-text';
import { parseHttpUrl } from '../http/urls';
import { validator } from '../http/validation';
import { minutesCapabilities, minutesPricing } from './model-type';
import { partLimitsFor, summaryCharges, summaryReservation, type FrozenSummary } from './summary-parts';

export type Language = 'zh_cn' | 'en_us';
export type Feature = 'summary' | 'chapters' | 'todos' | 'qa' | 'translate';
export const ALL_FEATURES: readonly Feature[] = ['summary', 'chapters', 'todos', 'qa', 'translate'];
/** What the report of a summarising model (service-minutes) always covers, for usage.features. */
export const REPORT_FEATURES: readonly Feature[] = ['summary', 'chapters', 'todos'];

export interface MinutesRequestBody {
  model: string;
  file_url: string;
  recorded_at?: string | null;
  timezone?: string | null;
  file_type?: 'audio' | 'video';
  source_lang?: Language;
  all_activate?: boolean;
  speaker_identification?: boolean;
  number_of_speakers?: number;
  hot_words?: string;
  need_word_time_series?: boolean;
  features?: { summary?: boolean; chapters?: boolean; todos?: boolean; qa?: boolean; translate?: boolean; target_lang?: Language };
}

const LANG = { type: 'string', enum: ['zh_cn', 'en_us'] };
/** RFC 3339 date-time with its offset (Z or ±hh:mm); the calendar is checked by the `date-time` format. */
const RFC3339 = '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})$';

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const MINUTES_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 128 },
    file_url: { type: 'string', minLength: 1, maxLength: 4096, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+[^\\s]*$' },
    recorded_at: { anyOf: [{ type: 'string', pattern: RFC3339, format: 'date-time' }, { type: 'null' }] },
    timezone: { anyOf: [{ type: 'string', minLength: 1, maxLength: 64 }, { type: 'null' }] },
    file_type: { type: 'string', enum: ['audio', 'video'] },
    source_lang: LANG,
    all_activate: { type: 'boolean' },
    speaker_identification: { type: 'boolean' },
    number_of_speakers: { type: 'integer', minimum: 0, maximum: 100 },
    hot_words: { type: 'string', maxLength: 2000 },
    need_word_time_series: { type: 'boolean' },
    features: {
      type: 'object',
      properties: {
        summary: { type: 'boolean' },
        chapters: { type: 'boolean' },
        todos: { type: 'boolean' },
        qa: { type: 'boolean' },
        translate: { type: 'boolean' },
        target_lang: LANG,
      },
      additionalProperties: false,
    },
  },
  required: ['model', 'file_url'],
  additionalProperties: false,
};
export const parseMinutesRequest = validator<MinutesRequestBody>(MINUTES_REQUEST_SCHEMA);

/** The request as a minutes task keeps it: every default applied, prices frozen at submission. */
export interface NormalizedMinutesRequest {
  readonly request_id: string;
  readonly file_url: string;
  readonly file_name: string;
  readonly file_type: 'audio' | 'video';
  /** From the file store or a HEAD request; null when unknown. */
  readonly file_bytes: number | null;
  readonly recorded_at: string | null;
  readonly timezone: string | null;
  readonly source_lang: Language;
  readonly all_activate: boolean;
  readonly speaker_identification: boolean;
  readonly number_of_speakers: number;
  readonly hot_words: string | null;
  readonly need_word_time_series: boolean;
  /** The extras this task produces (partner: the requested ones; service: what the report covers). */
  readonly features: readonly Feature[];
  readonly target_lang: Language | null;
  readonly engine: string;
  readonly protocol: 'asr' | 'partner';
  readonly rate_per_hour: number;
  readonly max_duration_ms: number;
  /** Summarising models: the chat model, its prices at submission, and the limits of its parts. */
  readonly summary: FrozenSummary | null;
}

function bad(message: string, param: string): ApiError {
  return new ApiError(400, 'invalid_request', message, { param });
}

const AUDIO = new Set(['mp3', 'wav', 'm4a', 'aac', 'flac', 'ogg', 'oga', 'opus', 'amr', 'wma', 'pcm', 'spx', 'weba']);
const VIDEO = new Set(['mp4', 'mov', 'm4v', 'avi', 'mkv', 'webm', 'flv', 'wmv', '3gp', 'mpeg', 'mpg', 'ts']);

/** The media suffix of a path or file name (`mp3`, `mp4`, …, lower-cased) when it is one the gateway knows; else null. */
export function mediaSuffix(path: string): string | null {
  const ext = /\.([A-Za-z0-9]{1,5})$/.exec(path)?.[1]?.toLowerCase();
  return ext && (AUDIO.has(ext) || VIDEO.has(ext)) ? ext : null;
}

/**
 * `audio` or `video` from the URL path's suffix, else from the media type the server gave
 * (`audio/*`, `video/*`); null when neither says.
 */
export function inferFileType(url: URL, mediaType: string | null = null): 'audio' | 'video' | null {
  const ext = mediaSuffix(url.pathname);
  if (ext) return AUDIO.has(ext) ? 'audio' : 'video';
  const topLevel = mediaType?.split('/')[0];
  return topLevel === 'audio' || topLevel === 'video' ? topLevel : null;
}

/**
 * The canonical name of an IANA time zone as Intl resolves it (`asia/shanghai` → `Asia/Shanghai`;
 * Intl ignores case and resolves links, e.g. `US/Pacific` → `America/Los_Angeles`), or null when
 * the name is not a time zone at all (offsets such as `+08:00` included).
 */
export function canonicalZone(zone: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

export function isIanaZone(zone: string): boolean {
  return canonicalZone(zone) !== null;
}

/** The catalog's minutes model a request names; any other value is a 400 (the field takes two values). */
export function minutesModel(catalog: Catalog, id: string): ModelEntry {
  const model = catalog.get(id);
  if (!model || model.type !== 'minutes') {
    const names = catalog.list('minutes').map((m) => m.id);
    throw new ApiError(400, 'model_not_found', `model must be one of ${names.join(', ')}`, { param: 'model' });
  }
  return model;
}

/**
 * Applies defaults and the model's rules (driven by its capabilities). `mediaType`: the file's
 * media type as the probe found it, for `file_type` when the URL's suffix does not tell.
 */
export function normalizeMinutesRequest(
  catalog: Catalog,
  model: ModelEntry,
  body: MinutesRequestBody,
  requestId: string,
  mediaType: string | null = null,
): Omit<NormalizedMinutesRequest, 'file_bytes'> {
  const caps = minutesCapabilities(model);
  const url = parseHttpUrl(body.file_url);
  if (!url) throw bad('file_url must be an absolute http(s) URL with a valid host and port', 'file_url');
  const file_type = body.file_type ?? inferFileType(url, mediaType);
  if (!file_type) {
    throw bad('file_type is required when neither the file_url\'s suffix nor the Content-Type its server gives tells audio or video', 'file_type');
  }
  const timezone = body.timezone == null ? null : canonicalZone(body.timezone);
  if (body.timezone != null && timezone === null) throw bad(`timezone ${body.timezone} is not an IANA time zone`, 'timezone');
  const source_lang = body.source_lang ?? 'zh_cn';
  if (!caps.languages.includes(source_lang)) throw bad(`${model.id} transcribes ${caps.languages.join(', ')}`, 'source_lang');

  let features: Feature[];
  let all_activate = false;
  let target_lang: Language | null = null;
  if (caps.extras) {
    all_activate = body.all_activate ?? false;
    const f = body.features ?? {};
    features = all_activate ? [...ALL_FEATURES] : ALL_FEATURES.filter((name) => f[name] === true);
    if (features.length === 0) throw bad(`${model.id} needs at least one of features.summary, .chapters, .todos, .qa, .translate, or all_activate`, 'features');
    if (features.includes('translate')) {
      target_lang = f.target_lang ?? (source_lang === 'zh_cn' ? 'en_us' : 'zh_cn');
      if (target_lang === source_lang) throw bad('features.target_lang must differ from source_lang', 'features.target_lang');
    }
  } else {
    // all_activate and features are ignored by models that always produce their full report.
    features = [...REPORT_FEATURES];
  }

  let summary: NormalizedMinutesRequest['summary'] = null;
  if (caps.summary_model) {
    const chat = catalog.get(caps.summary_model);
    if (!chat || chat.type !== 'chat') throw new Error(`${model.id} names summary model ${caps.summary_model}, which is not a chat model of the catalog`);
    const pricing = chatPricing(chat);
    summary = { model: chat.id, input_per_million: pricing.input_per_million, output_per_million: pricing.output_per_million, ...partLimitsFor(chat, caps) };
  }

  const segments = url.pathname.split('/');
  const encodedName = segments[segments.length - 1] ?? '';
  let file_name = encodedName;
  try {
    file_name = decodeURIComponent(encodedName);
  } catch {
    // keep it encoded
  }
  // A decoded %00 or a lone surrogate half would be refused by PostgreSQL: keep such a name encoded.
  if (!isSafeText(file_name)) file_name = encodedName;
  return {
    request_id: requestId,
    file_url: body.file_url,
    // By code points, so a surrogate pair is never cut in half.
    file_name: Array.from(file_name).slice(0, 255).join(''),
    file_type,
    recorded_at: body.recorded_at ?? null,
    timezone,
    source_lang,
    all_activate,
    speaker_identification: caps.speaker_identification === 'always' ? true : (body.speaker_identification ?? true),
    number_of_speakers: body.number_of_speakers ?? 0,
    hot_words: body.hot_words ?? null,
    need_word_time_series: body.need_word_time_series ?? false,
    features,
    target_lang,
    engine: caps.engine,
    protocol: caps.protocol,
    rate_per_hour: minutesPricing(model).rate_per_hour,
    max_duration_ms: caps.max_duration_ms,
    summary,
  };
}

/** ASR by duration: ceil(duration_ms × rate_per_hour / 3,600,000), rounded once. */
export function asrCharge(durationMs: number, ratePerHour: number): number {
  return asrLine(durationMs, ratePerHour).amount;
}

function asrLine(durationMs: number, ratePerHour: number): PricedLine {
  return priceLine({ duration_ms: durationMs }, { duration_ms: ratePerHour }, 3_600_000);
}

/**
 * The frozen estimate, an upper bound of what the task can cost:
 *   ASR for the longest accepted recording (max_duration_ms, 2 hours) at rate_per_hour
 * + for a summarising model, every summary part the longest recording may need, each at its full
 *   prompt (part_prompt_tokens) and maximum output (see summary-parts.ts).
 */
export function minutesEstimate(catalog: Catalog, request: Omit<NormalizedMinutesRequest, 'file_bytes'>): number {
  const asr = asrCharge(request.max_duration_ms, request.rate_per_hour);
  if (!request.summary) return asr;
  return asr + summaryReservation(request.summary, catalog.get(request.summary.model)!);
}

/** What the task costs: ASR by duration, rounded once, plus each summary call by its observed tokens (summaryCharges). */
export function minutesCharges(request: NormalizedMinutesRequest, usage: Record<string, unknown> | null) {
  const durationMs = Number(usage?.duration_ms ?? 0);
  const asr = asrLine(durationMs, request.rate_per_hour);
  const summary = request.summary
    ? summaryCharges(request.summary, usage)
    : { inputTokens: Number(usage?.flash_input_tokens ?? 0), outputTokens: Number(usage?.flash_output_tokens ?? 0), callAmounts: [], callLines: [], flashAmount: 0 };
  const pricing = pricingOf(asr, ...summary.callLines);
  return { durationMs, asrAmount: asr.amount, ...summary, amount: pricing.amount, pricing };
}
