import type { Catalog, ModelEntry } from '../../billing/catalog';
import { priceLine, pricingOf, type Pricing } from '../../billing/money';
import { ApiError } from '../../http/errors';
import { clientUrlProblem } from '../../http/urls';
import { validator } from '../../http/validation';
import { eraseCapabilities, erasePricing } from '../model-types';

/**
 * The body of POST /v1/videos/erase-subtitle (the spec leaves it open; this is the gateway's
 * design): a publicly reachable https `video_url` (the address rule of every client URL:
 * src/http/public-address.ts); optional `regions` where subtitles sit, as fractions of the frame (omitted: the
 * provider detects them); `duration_seconds`, the video's length as the client declares it (the
 * freeze; omitted: the model's default); `output` options.
 */
export interface EraseRequestBody {
  model?: string;
  video_url: string;
  regions?: { x: number; y: number; width: number; height: number }[];
  duration_seconds?: number;
  output?: { format?: string; resolution?: string };
}

const fraction = { type: 'number', minimum: 0, maximum: 1 };

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const ERASE_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    model: { type: 'string', minLength: 1 },
    video_url: { type: 'string', minLength: 1, maxLength: 4096 },
    regions: {
      type: 'array',
      minItems: 1,
      maxItems: 32,
      items: {
        type: 'object',
        properties: { x: fraction, y: fraction, width: { type: 'number', exclusiveMinimum: 0, maximum: 1 }, height: { type: 'number', exclusiveMinimum: 0, maximum: 1 } },
        required: ['x', 'y', 'width', 'height'],
        additionalProperties: false,
      },
    },
    duration_seconds: { type: 'integer', minimum: 1, maximum: 86_400 },
    output: {
      type: 'object',
      properties: { format: { type: 'string', minLength: 1 }, resolution: { type: 'string', minLength: 1 } },
      additionalProperties: false,
    },
  },
  required: ['video_url'],
  additionalProperties: false,
};
export const parseEraseRequest = validator<EraseRequestBody>(ERASE_REQUEST_SCHEMA);

export interface NormalizedEraseRequest {
  readonly video_url: string;
  /** null: the provider finds the subtitles itself. */
  readonly regions: readonly { x: number; y: number; width: number; height: number }[] | null;
  readonly duration_seconds: number | null;
  readonly output: { readonly format: string; readonly resolution: string };
  /** Seconds frozen at submission: the declared duration, else the model's default. */
  readonly billed_seconds: number;
}

function bad(code: string, message: string, param: string): ApiError {
  return new ApiError(400, code, message, { param });
}

/** The model a request names, or the catalog's first subtitle erase model. */
export function eraseModelId(catalog: Catalog, body: EraseRequestBody): string {
  return body.model ?? catalog.list('subtitle_erase')[0]?.id ?? 'subtitle-erase';
}

/**
 * Validates and completes a request. `allowPrivateTargets` (FILE_URL_ALLOW_PRIVATE_TARGETS, the
 * setting of the other customer-given file URLs) lets `video_url` name a private host.
 */
export function normalizeEraseRequest(model: ModelEntry, body: EraseRequestBody, options: { allowPrivateTargets: boolean }): NormalizedEraseRequest {
  const caps = eraseCapabilities(model);
  const urlProblem = clientUrlProblem(body.video_url, 'video_url', { httpsOnly: true, allowPrivateTargets: options.allowPrivateTargets });
  if (urlProblem) throw bad('invalid_video_url', urlProblem, 'video_url');
  const regions = body.regions ?? null;
  if (regions && regions.length > caps.max_regions) throw bad('invalid_request', `${model.id} takes at most ${caps.max_regions} regions`, 'regions');
  regions?.forEach((r, i) => {
    if (r.x + r.width > 1 || r.y + r.height > 1) throw bad('invalid_region', 'a region must lie inside the frame (x + width ≤ 1, y + height ≤ 1)', `regions[${i}]`);
  });
  if (body.duration_seconds !== undefined && body.duration_seconds > caps.max_duration_seconds) {
    throw bad('invalid_request', `${model.id} takes videos of at most ${caps.max_duration_seconds} seconds`, 'duration_seconds');
  }
  const format = body.output?.format ?? caps.output_formats[0]!;
  if (!caps.output_formats.includes(format)) throw bad('unsupported_output_format', `${model.id} outputs ${caps.output_formats.join(', ')}`, 'output.format');
  const resolution = body.output?.resolution ?? caps.output_resolutions[0]!;
  if (!caps.output_resolutions.includes(resolution)) throw bad('unsupported_resolution', `${model.id} outputs resolution ${caps.output_resolutions.join(', ')}`, 'output.resolution');
  return {
    video_url: body.video_url,
    regions,
    duration_seconds: body.duration_seconds ?? null,
    output: { format, resolution },
    billed_seconds: body.duration_seconds ?? caps.default_duration_seconds,
  };
}

/** Seconds of video × the per-second price. */
export function eraseCharge(model: ModelEntry, seconds: number): Pricing {
  return pricingOf(priceLine({ seconds }, { seconds: erasePricing(model).per_second }));
}
