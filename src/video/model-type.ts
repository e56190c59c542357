import { defineModelType, MONEY_SCHEMA, type ModelEntry } from '../billing/catalog';

/** Per-second prices by resolution, in minor units. */
export interface VideoPricing {
  readonly per_second: Readonly<Record<string, number>>;
  /** Used instead when the task (or, for a draft's final step, its draft) has a reference video. */
  readonly per_second_with_reference_video?: Readonly<Record<string, number>>;
}

/** What a video model accepts; every model-specific validation rule reads these, never the model id. */
export interface VideoCapabilities {
  readonly resolutions: readonly string[];
  readonly durations: { readonly min: number; readonly max: number; readonly auto: boolean };
  /** Seconds billed up front when the request lets the model choose (duration -1). */
  readonly auto_duration_seconds: number;
  /** Reference images (role reference_image). */
  readonly reference_assets: boolean;
  /** `video_url` and `audio_url` items (reference videos and audio). */
  readonly reference_media?: boolean;
  /**
   * `asset://<id>` images (the real-person asset library, which is Ark's): false where the model's
   * provider cannot fetch the library's assets (the H3 class, served by MiniMax).
   */
  readonly asset_images: boolean;
  /** first_frame / last_frame images. */
  readonly frame_inputs: boolean;
  readonly mix_frames_and_references: boolean;
  /** Generates audio: accepts `generate_audio` (default true). */
  readonly audio: boolean;
  /**
   * Without `audio`: true accepts `generate_audio: false` (only `true` is refused); absent or
   * false, the model does not take the field at all, whatever its value (the H3 class).
   */
  readonly accepts_audio_off?: boolean;
  /** Accepts `draft: true` and the draft final step. */
  readonly draft: boolean;
  /** Text-to-video needs a concrete ratio (not `adaptive`). */
  readonly text_to_video_requires_ratio: boolean;
  /** Accepts `video_url_mode: upstream`. */
  readonly upstream_url_mode: boolean;
  readonly upstream_model?: string;
}

const PRICE_TABLE = { type: 'object', additionalProperties: MONEY_SCHEMA, minProperties: 1 };

export const videoModelType = defineModelType<VideoPricing, VideoCapabilities>('video', {
  pricing: {
    type: 'object',
    properties: { per_second: PRICE_TABLE, per_second_with_reference_video: PRICE_TABLE },
    required: ['per_second'],
    additionalProperties: false,
  },
  capabilities: {
    type: 'object',
    properties: {
      resolutions: { type: 'array', items: { type: 'string' }, minItems: 1 },
      durations: {
        type: 'object',
        properties: { min: { type: 'integer', minimum: 1 }, max: { type: 'integer', minimum: 1 }, auto: { type: 'boolean' } },
        required: ['min', 'max', 'auto'],
        additionalProperties: false,
      },
      auto_duration_seconds: { type: 'integer', minimum: 1 },
      reference_assets: { type: 'boolean' },
      reference_media: { type: 'boolean' },
      asset_images: { type: 'boolean' },
      frame_inputs: { type: 'boolean' },
      mix_frames_and_references: { type: 'boolean' },
      audio: { type: 'boolean' },
      accepts_audio_off: { type: 'boolean' },
      draft: { type: 'boolean' },
      text_to_video_requires_ratio: { type: 'boolean' },
      upstream_url_mode: { type: 'boolean' },
      upstream_model: { type: 'string' },
    },
    required: [
      'resolutions',
      'durations',
      'auto_duration_seconds',
      'reference_assets',
      'asset_images',
      'frame_inputs',
      'mix_frames_and_references',
      'audio',
      'draft',
      'text_to_video_requires_ratio',
      'upstream_url_mode',
    ],
    additionalProperties: false,
  },
});

export function videoPricing(model: ModelEntry): VideoPricing {
  return videoModelType.readPricing(model);
}

export function videoCapabilities(model: ModelEntry): VideoCapabilities {
  return videoModelType.readCapabilities(model);
}
