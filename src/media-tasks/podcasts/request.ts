import type { ModelEntry } from '../../billing/catalog';
import { priceLine, pricingOf, type Pricing } from '../../billing/money';
import { countTokens } from '../../billing/tokens';
import { ApiError } from '../../http/errors';
import { validator } from '../../http/validation';
import { podcastCapabilities, podcastPricing } from '../model-types';

/**
 * The body of POST /v1/audio/podcasts (the spec leaves it open; this is the gateway's design):
 * exactly one of `text` (a script or an article the hosts discuss) or `topic` (the hosts research
 * and discuss it); `speakers` (name and voice each, default two hosts); `language`; `format`;
 * `max_duration_seconds` (the longest episode the client will pay for; also the freeze).
 */
export interface PodcastRequestBody {
  model: string;
  text?: string;
  topic?: string;
  speakers?: { name: string; voice: string }[];
  language?: string;
  format?: string;
  max_duration_seconds?: number;
}

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const PODCAST_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    model: { type: 'string', minLength: 1 },
    text: { type: 'string', minLength: 1, maxLength: 200_000 },
    topic: { type: 'string', minLength: 1, maxLength: 500 },
    speakers: {
      type: 'array',
      minItems: 1,
      maxItems: 8,
      items: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1, maxLength: 64 }, voice: { type: 'string', minLength: 1, maxLength: 64 } },
        required: ['name', 'voice'],
        additionalProperties: false,
      },
    },
    language: { type: 'string', minLength: 1, maxLength: 16 },
    format: { type: 'string', enum: ['wav', 'mp3'] },
    max_duration_seconds: { type: 'integer', minimum: 1, maximum: 86_400 },
  },
  required: ['model'],
  additionalProperties: false,
};
export const parsePodcastRequest = validator<PodcastRequestBody>(PODCAST_REQUEST_SCHEMA);

export interface NormalizedPodcastRequest {
  readonly text: string | null;
  readonly topic: string | null;
  readonly speakers: readonly { name: string; voice: string }[];
  readonly language: string;
  readonly format: string;
  readonly max_duration_seconds: number;
  /** Tokens of the text or topic, as the gateway counts them (the freeze). */
  readonly input_tokens: number;
}

function bad(code: string, message: string, param: string): ApiError {
  return new ApiError(400, code, message, { param });
}

export function normalizePodcastRequest(model: ModelEntry, body: PodcastRequestBody): NormalizedPodcastRequest {
  const caps = podcastCapabilities(model);
  if ((body.text === undefined) === (body.topic === undefined)) throw bad('invalid_request', 'give exactly one of text or topic', body.text === undefined ? 'text' : 'topic');
  if (body.text !== undefined && body.text.length > caps.max_text_chars) throw bad('invalid_request', `text must be at most ${caps.max_text_chars} characters for ${model.id}`, 'text');
  const speakers = body.speakers ?? caps.default_voices.map((voice, i) => ({ name: `Host ${i + 1}`, voice }));
  if (speakers.length > caps.max_speakers) throw bad('invalid_request', `${model.id} takes at most ${caps.max_speakers} speakers`, 'speakers');
  if (speakers.length < (caps.min_speakers ?? 1)) throw bad('invalid_request', `${model.id} takes at least ${caps.min_speakers} speakers`, 'speakers');
  speakers.forEach((s, i) => {
    if (!caps.voices.includes(s.voice)) throw bad('unsupported_voice', `${model.id} has the voices ${caps.voices.join(', ')}`, `speakers[${i}].voice`);
  });
  if (new Set(speakers.map((s) => s.name)).size !== speakers.length) throw bad('invalid_request', 'speaker names must be distinct', 'speakers');
  const language = body.language ?? caps.languages[0]!;
  if (!caps.languages.includes(language)) throw bad('unsupported_language', `${model.id} speaks ${caps.languages.join(', ')}`, 'language');
  const format = body.format ?? caps.formats[0]!;
  if (!caps.formats.includes(format)) throw bad('unsupported_format', `${model.id} outputs ${caps.formats.join(', ')}`, 'format');
  const maxDuration = body.max_duration_seconds ?? caps.default_max_duration_seconds;
  if (maxDuration > caps.max_duration_seconds) throw bad('invalid_request', `max_duration_seconds must be at most ${caps.max_duration_seconds} for ${model.id}`, 'max_duration_seconds');
  return {
    text: body.text ?? null,
    topic: body.topic ?? null,
    speakers,
    language,
    format,
    max_duration_seconds: maxDuration,
    input_tokens: countTokens(body.text ?? body.topic!),
  };
}

/** Input text tokens and output audio tokens at the model's per-million prices, rounded up once. */
export function podcastCharge(model: ModelEntry, inputTextTokens: number, outputAudioTokens: number): Pricing {
  const p = podcastPricing(model);
  return pricingOf(
    priceLine(
      { input_text_tokens: inputTextTokens, output_audio_tokens: outputAudioTokens },
      { input_text_tokens: p.input_per_million, output_audio_tokens: p.output_audio_per_million },
      1_000_000,
    ),
  );
}

/** The audio tokens of the longest episode the request allows: frozen, and the most ever charged. */
export function maxAudioTokens(model: ModelEntry, request: NormalizedPodcastRequest): number {
  return request.max_duration_seconds * podcastCapabilities(model).audio_tokens_per_second;
}

/** The freeze: the text's tokens and the longest episode allowed, in audio tokens. */
export function podcastEstimate(model: ModelEntry, request: NormalizedPodcastRequest): number {
  return podcastCharge(model, request.input_tokens, maxAudioTokens(model, request)).amount;
}

/**
 * The usage a succeeded podcast is billed (and reported) by: the provider's figures (or, missing,
 * the text's tokens and the audio's duration × audio_tokens_per_second). The audio tokens are at
 * most the delivered audio's duration × audio_tokens_per_second: the provider's figure sums every
 * session's reports, and a session cut inside a round may have reported that round's tokens
 * before it was made again; the client pays for the audio it got. They are capped too at
 * `max_duration_seconds` × audio_tokens_per_second: a provider that runs over the cap is not
 * charged to the customer beyond what was frozen for it.
 */
export function billedPodcastUsage(
  model: ModelEntry,
  request: NormalizedPodcastRequest,
  reported: { input_text_tokens: number | null; output_audio_tokens: number | null },
  durationSeconds: number,
): { input_text_tokens: number; output_audio_tokens: number; reported_output_audio_tokens: number } {
  const delivered = Math.ceil(durationSeconds * podcastCapabilities(model).audio_tokens_per_second);
  const audio = reported.output_audio_tokens ?? delivered;
  return {
    input_text_tokens: reported.input_text_tokens ?? request.input_tokens,
    output_audio_tokens: Math.min(audio, delivered, maxAudioTokens(model, request)),
    reported_output_audio_tokens: audio,
  };
}
