import type { ModelEntry } from '../../billing/catalog';
import { charge, priceLine, pricingOf, tokenCharge, tokenLine, type Pricing } from '../../billing/money';
import { countTokens } from '../../billing/tokens';
import { ApiError } from '../../http/errors';
import { validator } from '../../http/validation';
import type { ImageGenerationCall } from '../../upstreams/images';
import { IMAGE_OPTION_VALUES, IMAGE_OPTIONS, imageCapabilities, imagePricing, type EnumeratedImageOption, type ImageOption } from '../model-types';

/** OpenAI's image options a request set, as the provider is sent them. */
export type ImageOptionValues = { readonly [K in EnumeratedImageOption]?: (typeof IMAGE_OPTION_VALUES)[K][number] } & {
  readonly output_compression?: number;
  readonly user?: string;
};

/** The body of POST /v1/images/generations and POST /v1/images/async; an option's null is unset. */
export type ImageRequestBody = { readonly [K in ImageOption]?: ImageOptionValues[K] | null } & {
  model: string;
  prompt: string;
  n?: number;
  size?: string;
  response_format?: 'url' | 'b64_json';
  output_format?: 'png' | 'jpeg';
};

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const IMAGE_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    model: { type: 'string', minLength: 1 },
    prompt: { type: 'string', minLength: 1, maxLength: 4000 },
    n: { type: 'integer', minimum: 1, maximum: 16 },
    size: { type: 'string', pattern: '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$' },
    response_format: { type: 'string', enum: ['url', 'b64_json'] },
    output_format: { type: 'string', enum: ['png', 'jpeg'] },
    // OpenAI's values; which of them a model takes is its catalog entry's `options`.
    ...Object.fromEntries(Object.entries(IMAGE_OPTION_VALUES).map(([option, values]) => [option, { type: ['string', 'null'], enum: [...values, null] }])),
    output_compression: { type: ['integer', 'null'], minimum: 0, maximum: 100 },
    user: { type: ['string', 'null'] },
  },
  required: ['model', 'prompt'],
  additionalProperties: false,
};
export const parseImageRequest = validator<ImageRequestBody>(IMAGE_REQUEST_SCHEMA);

/** The request with every default applied, as the sync call and the async task keep it. */
export interface NormalizedImageRequest {
  readonly prompt: string;
  readonly n: number;
  readonly size: string;
  readonly response_format: 'url' | 'b64_json';
  /** The format of the (base layer of the) image, whether asked for or the model's default. */
  readonly output_format: 'png' | 'jpeg';
  /**
   * A layered model (`output_format_scope` `base_layer`): each image's other layers (PNG) are
   * returned after it as extra `data` items, every item tagged with its `layer`. Absent in tasks
   * stored before layers were returned.
   */
  readonly layered?: boolean;
  /** OpenAI's image options the request set (each one the model takes). Absent in tasks stored before options were taken. */
  readonly options?: ImageOptionValues;
}

function bad(code: string, message: string, param: string): ApiError {
  return new ApiError(400, code, message, { param });
}

/** A field the model does not take at all, whatever its value (`why`: what the model does instead). */
function unsupportedParameter(model: ModelEntry, field: string, why?: string): ApiError {
  return bad('unsupported_parameter', `${model.id} ${why ? `${why} and ` : ''}does not accept ${field}`, field);
}

/** A value of a field the model takes, but not this one. */
function unsupportedValue(model: ModelEntry, field: string, accepted: readonly string[]): ApiError {
  return bad(`unsupported_${field}`, `${model.id} supports ${field} ${accepted.join(', ')}`, field);
}

/** The options a request set (null is unset), each refused unless the model's `options` lists it and its value. */
function imageOptionsOf(model: ModelEntry, body: ImageRequestBody): ImageOptionValues {
  const accepted = imageCapabilities(model).options ?? {};
  const set: Record<string, unknown> = {};
  for (const option of IMAGE_OPTIONS) {
    const value = body[option];
    if (value === undefined || value === null) continue;
    const values = accepted[option];
    if (values === undefined) throw unsupportedParameter(model, option);
    if (Array.isArray(values) && !values.includes(value)) throw unsupportedValue(model, option, values);
    set[option] = value;
  }
  return set as ImageOptionValues;
}

/**
 * Applies the model's rules, all from its catalog capabilities: `n` up to `max_n`, `size` one of
 * `sizes` and at least `min_pixels`, `output_format` by `output_format_scope` (null: the model outputs its one format
 * and refuses the parameter; `image` or `base_layer`: one of `output_formats`), and OpenAI's
 * other image options by `options`.
 */
export function normalizeImageRequest(model: ModelEntry, body: ImageRequestBody, mode: 'sync' | 'async'): NormalizedImageRequest {
  const caps = imageCapabilities(model);
  const n = body.n ?? 1;
  if (n > caps.max_n) throw bad('invalid_request', `n must be at most ${caps.max_n} for ${model.id}`, 'n');
  const size = body.size ?? caps.default_size;
  if (!caps.sizes.includes(size)) throw unsupportedValue(model, 'size', caps.sizes);
  const { width, height } = dimensionsOf(size);
  // A size the catalog lists but the provider's minimum refuses: refused here, before any freeze.
  if (caps.min_pixels !== undefined && width * height < caps.min_pixels) throw bad('unsupported_size', `${model.id} generates at least ${caps.min_pixels} pixels (${size} is ${width * height})`, 'size');
  if (body.output_format !== undefined) {
    if (caps.output_format_scope === null) throw unsupportedParameter(model, 'output_format', `outputs ${caps.output_formats.map((f) => f.toUpperCase()).join(' or ')} only`);
    if (!caps.output_formats.includes(body.output_format)) throw unsupportedValue(model, 'output_format', caps.output_formats);
  }
  const options = imageOptionsOf(model, body);
  const responseFormat = body.response_format ?? 'url';
  if (mode === 'async' && responseFormat !== 'url') throw bad('unsupported_parameter', 'async image results are links: response_format must be url', 'response_format');
  return {
    prompt: body.prompt,
    n,
    size,
    response_format: responseFormat,
    output_format: body.output_format ?? caps.default_output_format,
    layered: caps.output_format_scope === 'base_layer',
    ...(Object.keys(options).length > 0 ? { options } : {}),
  };
}

/**
 * The generation as the provider adapter takes it (sync and async alike): the provider's model id,
 * the size as width and height, `output_format` only for a model that takes it (the
 * single-format classes, 4.5 and 4.0, output their one format and refuse the parameter, as their
 * providers do), the options as the request set them, the catalog's watermark setting.
 */
export function imageCall(model: ModelEntry, request: NormalizedImageRequest, responseFormat: 'url' | 'b64_json'): ImageGenerationCall {
  const caps = imageCapabilities(model);
  return {
    model: caps.upstream_model ?? model.id,
    prompt: request.prompt,
    n: request.n,
    ...dimensionsOf(request.size),
    outputFormat: caps.output_format_scope === null ? null : request.output_format,
    responseFormat,
    ...(request.options ? { options: request.options } : {}),
    ...(caps.watermark === undefined ? {} : { watermark: caps.watermark }),
  };
}

export function dimensionsOf(size: string): { width: number; height: number } {
  const [width, height] = size.split('x').map(Number) as [number, number];
  return { width, height };
}

/** Output tokens one image of `size` is frozen at: the catalog's figure, else width × height / 1024. */
export function outputTokensPerImage(model: ModelEntry, size: string): number {
  const listed = imageCapabilities(model).output_tokens_per_image?.[size];
  if (listed !== undefined) return listed;
  const { width, height } = dimensionsOf(size);
  return Math.ceil((width * height) / 1024);
}

/** The freeze: n images at the per-image price, or the prompt's tokens plus n images' output tokens. */
export function imageEstimate(model: ModelEntry, request: NormalizedImageRequest): number {
  const pricing = imagePricing(model);
  if (pricing.billing === 'per_image') return charge([[request.n, pricing.per_image]]);
  return tokenCharge(pricing, countTokens(request.prompt), request.n * outputTokensPerImage(model, request.size));
}

export interface ImageTokenUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly total_tokens: number;
}

/** The token usage an upstream reported, or (when it reported none) the gateway's own count of what came back. */
export function tokenUsageOf(model: ModelEntry, request: NormalizedImageRequest, images: number, reported: Partial<Omit<ImageTokenUsage, 'total_tokens'>> | null): ImageTokenUsage {
  const valid = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
  const r = reported ?? {};
  if (valid(r.input_tokens) && valid(r.output_tokens)) return { input_tokens: r.input_tokens, output_tokens: r.output_tokens, total_tokens: r.input_tokens + r.output_tokens };
  const input = countTokens(request.prompt);
  const output = images * outputTokensPerImage(model, request.size);
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

/**
 * The charge for the images that actually came back: count × per-image price, or the reported
 * tokens; plus the usage record the settlement carries.
 */
export function imageSettlement(model: ModelEntry, request: NormalizedImageRequest, images: number, tokens: ImageTokenUsage | null): { pricing: Pricing; usage: Record<string, unknown> } {
  const pricing = imagePricing(model);
  const base = { model: model.id, images, requested: request.n, size: request.size };
  if (pricing.billing === 'per_image') return { pricing: pricingOf(priceLine({ images }, { images: pricing.per_image })), usage: base };
  const t = tokens ?? tokenUsageOf(model, request, images, null);
  return { pricing: pricingOf(tokenLine(pricing, t.input_tokens, t.output_tokens)), usage: { ...base, ...t } };
}
