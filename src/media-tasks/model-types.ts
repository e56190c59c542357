import { defineModelType, MONEY_SCHEMA, TOKEN_PRICING_SCHEMA, type ModelEntry, type TokenPricing } from '../billing/catalog';

/**
 * The catalog types of the media task features: `image`, `podcast` and `subtitle_erase`. Every
 * validation rule and price reads these capabilities, never a model id.
 */

// ---------------------------------------------------------------------------------------------
// image

/**
 * The values OpenAI's image API defines for its enumerated request options (CreateImageRequest;
 * test/unit/image-options.test.ts holds them to OpenAI's document).
 */
export const IMAGE_OPTION_VALUES = {
  quality: ['standard', 'hd', 'low', 'medium', 'high', 'auto'],
  style: ['vivid', 'natural'],
  background: ['transparent', 'opaque', 'auto'],
  moderation: ['low', 'auto'],
} as const;
export type EnumeratedImageOption = keyof typeof IMAGE_OPTION_VALUES;
/** OpenAI's image options whose values a model does not narrow: `output_compression` (0 to 100) and `user`. */
const OPEN_IMAGE_OPTIONS = ['output_compression', 'user'] as const;
export type OpenImageOption = (typeof OPEN_IMAGE_OPTIONS)[number];
export type ImageOption = EnumeratedImageOption | OpenImageOption;
/** Every image request option OpenAI defines beyond the spec's fields. */
export const IMAGE_OPTIONS: readonly ImageOption[] = [...(Object.keys(IMAGE_OPTION_VALUES) as EnumeratedImageOption[]), ...OPEN_IMAGE_OPTIONS];

/**
 * The options a model takes: an enumerated one with the values it takes (a subset of OpenAI's),
 * the others as `true`. An option not listed is refused with 400.
 */
export type ImageOptions = { readonly [K in EnumeratedImageOption]?: readonly (typeof IMAGE_OPTION_VALUES)[K][number][] } & { readonly [K in OpenImageOption]?: true };

const IMAGE_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    ...Object.fromEntries(
      Object.entries(IMAGE_OPTION_VALUES).map(([option, values]) => [option, { type: 'array', items: { type: 'string', enum: values }, minItems: 1, uniqueItems: true }]),
    ),
    ...Object.fromEntries(OPEN_IMAGE_OPTIONS.map((option) => [option, { const: true }])),
  },
  additionalProperties: false,
};

/** Per generated image, or by tokens (input prompt tokens and output image tokens, per million). */
export type ImagePricing = { readonly per_image: number } | TokenPricing;

export interface ImageCapabilities {
  /** How the model is billed; the pricing members must match it. */
  readonly billing: 'per_image' | 'tokens';
  /** Allowed `size` values, `WIDTHxHEIGHT`. */
  readonly sizes: readonly string[];
  readonly default_size: string;
  /** The formats the model can output; a model with one format outputs only that. */
  readonly output_formats: readonly ('png' | 'jpeg')[];
  readonly default_output_format: 'png' | 'jpeg';
  /**
   * What `output_format` controls: `image` the whole image, `base_layer` only the base layer of a
   * layered image (other layers stay PNG), null: the parameter is refused with 400.
   */
  readonly output_format_scope: 'image' | 'base_layer' | null;
  readonly max_n: number;
  /** OpenAI's image options the model takes; absent: none. */
  readonly options?: ImageOptions;
  /** Token-billed models: the output tokens one image is estimated at, per size (the freeze). */
  readonly output_tokens_per_image?: Readonly<Record<string, number>>;
  readonly upstream_model?: string;
  /** The fewest pixels (width × height) the provider generates (Ark: per model); a smaller size is refused with 400. */
  readonly min_pixels?: number;
  /** Whether the provider marks the images (Ark's "AI生成" mark); absent: the provider's default (Ark: marked). */
  readonly watermark?: boolean;
}

export const imageModelType = defineModelType<ImagePricing, ImageCapabilities>('image', {
  pricing: {
    type: 'object',
    properties: { per_image: MONEY_SCHEMA, ...TOKEN_PRICING_SCHEMA.properties },
    anyOf: [{ required: ['per_image'] }, { required: TOKEN_PRICING_SCHEMA.required }],
    additionalProperties: false,
  },
  capabilities: {
    type: 'object',
    properties: {
      billing: { type: 'string', enum: ['per_image', 'tokens'] },
      sizes: { type: 'array', items: { type: 'string', pattern: '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$' }, minItems: 1 },
      default_size: { type: 'string', pattern: '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$' },
      output_formats: { type: 'array', items: { type: 'string', enum: ['png', 'jpeg'] }, minItems: 1, uniqueItems: true },
      default_output_format: { type: 'string', enum: ['png', 'jpeg'] },
      output_format_scope: { enum: ['image', 'base_layer', null] },
      max_n: { type: 'integer', minimum: 1, maximum: 16 },
      options: IMAGE_OPTIONS_SCHEMA,
      output_tokens_per_image: { type: 'object', additionalProperties: { type: 'integer', minimum: 1 } },
      upstream_model: { type: 'string', minLength: 1 },
      min_pixels: { type: 'integer', minimum: 1 },
      watermark: { type: 'boolean' },
    },
    required: ['billing', 'sizes', 'default_size', 'output_formats', 'default_output_format', 'output_format_scope', 'max_n'],
    additionalProperties: false,
  },
});

export function imageCapabilities(model: ModelEntry): ImageCapabilities {
  return imageModelType.readCapabilities(model);
}

/** The pricing of an image model, checked against its billing mode (a mismatch is a catalog error). */
export function imagePricing(model: ModelEntry):
  | { readonly billing: 'per_image'; readonly per_image: number }
  | ({ readonly billing: 'tokens' } & TokenPricing) {
  const caps = imageCapabilities(model);
  const p = model.pricing as Record<string, number | undefined>;
  if (caps.billing === 'per_image' && p.per_image !== undefined) return { billing: 'per_image', per_image: p.per_image };
  if (caps.billing === 'tokens' && p.input_per_million !== undefined && p.output_per_million !== undefined) {
    return { billing: 'tokens', input_per_million: p.input_per_million, output_per_million: p.output_per_million };
  }
  throw new Error(`catalog: image model ${model.id} is billed by ${caps.billing} but its pricing does not say how much`);
}

// ---------------------------------------------------------------------------------------------
// podcast

/** Input text tokens and output audio tokens, per million. */
export interface PodcastPricing {
  readonly input_per_million: number;
  readonly output_audio_per_million: number;
}

export interface PodcastCapabilities {
  readonly voices: readonly string[];
  /** The voices of the default two hosts when the request names no speakers. */
  readonly default_voices: readonly string[];
  readonly max_speakers: number;
  /** The fewest speakers the provider takes (absent: one). */
  readonly min_speakers?: number;
  readonly languages: readonly string[];
  readonly formats: readonly string[];
  /** Longest episode a request may ask for, and the cap used when it asks for none. */
  readonly max_duration_seconds: number;
  readonly default_max_duration_seconds: number;
  /** Audio tokens per second of output, for the freeze (the upper bound of the episode). */
  readonly audio_tokens_per_second: number;
  readonly max_text_chars: number;
  readonly upstream_model?: string;
}

export const podcastModelType = defineModelType<PodcastPricing, PodcastCapabilities>('podcast', {
  pricing: {
    type: 'object',
    properties: { input_per_million: MONEY_SCHEMA, output_audio_per_million: MONEY_SCHEMA },
    required: ['input_per_million', 'output_audio_per_million'],
    additionalProperties: false,
  },
  capabilities: {
    type: 'object',
    properties: {
      voices: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
      default_voices: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
      max_speakers: { type: 'integer', minimum: 1, maximum: 8 },
      min_speakers: { type: 'integer', minimum: 1, maximum: 8 },
      languages: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
      formats: { type: 'array', items: { type: 'string', enum: ['wav', 'mp3'] }, minItems: 1 },
      max_duration_seconds: { type: 'integer', minimum: 1 },
      default_max_duration_seconds: { type: 'integer', minimum: 1 },
      audio_tokens_per_second: { type: 'integer', minimum: 1 },
      max_text_chars: { type: 'integer', minimum: 1 },
      upstream_model: { type: 'string', minLength: 1 },
    },
    required: ['voices', 'default_voices', 'max_speakers', 'languages', 'formats', 'max_duration_seconds', 'default_max_duration_seconds', 'audio_tokens_per_second', 'max_text_chars'],
    additionalProperties: false,
  },
});

export function podcastPricing(model: ModelEntry): PodcastPricing {
  return podcastModelType.readPricing(model);
}

export function podcastCapabilities(model: ModelEntry): PodcastCapabilities {
  return podcastModelType.readCapabilities(model);
}

// ---------------------------------------------------------------------------------------------
// subtitle_erase

/** Per second of video processed. */
export interface ErasePricing {
  readonly per_second: number;
}

export interface EraseCapabilities {
  /** Longest video accepted (declared duration). */
  readonly max_duration_seconds: number;
  /** Seconds frozen when the request does not declare the video's duration. */
  readonly default_duration_seconds: number;
  readonly max_regions: number;
  readonly output_formats: readonly string[];
  readonly output_resolutions: readonly string[];
  /**
   * Where the provider keeps the video and its erased copy (Volcengine VOD: the operator's space,
   * `SpaceName`); unset: the gateway's model id, which only the simulated provider takes.
   */
  readonly upstream_space?: string;
}

export const subtitleEraseModelType = defineModelType<ErasePricing, EraseCapabilities>('subtitle_erase', {
  pricing: {
    type: 'object',
    properties: { per_second: MONEY_SCHEMA },
    required: ['per_second'],
    additionalProperties: false,
  },
  capabilities: {
    type: 'object',
    properties: {
      max_duration_seconds: { type: 'integer', minimum: 1 },
      default_duration_seconds: { type: 'integer', minimum: 1 },
      max_regions: { type: 'integer', minimum: 1, maximum: 32 },
      output_formats: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
      output_resolutions: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
      upstream_space: { type: 'string', minLength: 1 },
    },
    required: ['max_duration_seconds', 'default_duration_seconds', 'max_regions', 'output_formats', 'output_resolutions'],
    additionalProperties: false,
  },
});

export function erasePricing(model: ModelEntry): ErasePricing {
  return subtitleEraseModelType.readPricing(model);
}

export function eraseCapabilities(model: ModelEntry): EraseCapabilities {
  return subtitleEraseModelType.readCapabilities(model);
}
