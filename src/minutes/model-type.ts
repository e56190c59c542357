import { defineModelType, MONEY_SCHEMA, type ModelEntry } from '../billing/catalog';

/** Minutes models are billed by the hour of recorded audio, in minor units. */
export interface MinutesPricing {
  readonly rate_per_hour: number;
}

/**
 * What a minutes model does; every rule of the minutes endpoint reads these, never the model id.
 * - `protocol`: the upstream API: `asr` (file transcription only, the gateway writes the summary)
 *   or `partner` (a third-party minutes API that returns the transcript and the requested extras).
 * - `summary_model`: the catalog chat model that writes the report version 2 (only with `asr`).
 * - `extras`: the request's `features` / `all_activate` are honoured (and one extra is required);
 *   false: they are ignored.
 * - `speaker_identification`: `always` (the request cannot turn it off) or `optional`.
 * - `summary_max_output_tokens`: lowers the summary model's own output limit (absent: its limit).
 * - `summary_output_per_prompt_token`: planning bound of how many output tokens the summary writes
 *   per prompt token; a transcript is summarised in parts whose prompt times this fits the output
 *   limit (absent: one part as large as the context window allows).
 * - `summary_transcript_tokens_per_minute`: planning density of a transcript, to reserve for the
 *   parts of the longest accepted recording (absent: one part).
 */
export interface MinutesCapabilities {
  readonly protocol: 'asr' | 'partner';
  readonly engine: string;
  readonly summary_model?: string;
  readonly summary_max_output_tokens?: number;
  readonly summary_output_per_prompt_token?: number;
  readonly summary_transcript_tokens_per_minute?: number;
  readonly extras: boolean;
  readonly speaker_identification: 'always' | 'optional';
  readonly max_duration_ms: number;
  readonly max_file_bytes: number;
  readonly languages: readonly string[];
  readonly upstream_model?: string;
}

export const minutesModelType = defineModelType<MinutesPricing, MinutesCapabilities>('minutes', {
  pricing: {
    type: 'object',
    properties: { rate_per_hour: MONEY_SCHEMA },
    required: ['rate_per_hour'],
    additionalProperties: false,
  },
  capabilities: {
    type: 'object',
    properties: {
      protocol: { type: 'string', enum: ['asr', 'partner'] },
      engine: { type: 'string', minLength: 1 },
      summary_model: { type: 'string', minLength: 1 },
      summary_max_output_tokens: { type: 'integer', minimum: 1 },
      summary_output_per_prompt_token: { type: 'number', exclusiveMinimum: 0 },
      summary_transcript_tokens_per_minute: { type: 'integer', minimum: 1 },
      extras: { type: 'boolean' },
      speaker_identification: { type: 'string', enum: ['always', 'optional'] },
      max_duration_ms: { type: 'integer', minimum: 1 },
      max_file_bytes: { type: 'integer', minimum: 1 },
      languages: { type: 'array', items: { type: 'string' }, minItems: 1 },
      upstream_model: { type: 'string', minLength: 1 },
    },
    required: ['protocol', 'engine', 'extras', 'speaker_identification', 'max_duration_ms', 'max_file_bytes', 'languages'],
    additionalProperties: false,
  },
});

export function minutesPricing(model: ModelEntry): MinutesPricing {
  return minutesModelType.readPricing(model);
}

export function minutesCapabilities(model: ModelEntry): MinutesCapabilities {
  return minutesModelType.readCapabilities(model);
}
