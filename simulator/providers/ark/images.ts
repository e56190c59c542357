/**
 * The simulated Volcengine Ark image generation (Seedream), `/images/generations` on its base URL
 * (`{sim}/ark/api/v3`, index.ts):
 * synchronous, Bearer key, Ark's request fields, answer fields and errors.
 * Reference: https://www.volcengine.com/docs/82379/1541523 (图片生成 API).
 *
 * - `size` is `WxH` within the model's total pixel range ([min, 4096×4096], aspect ratio 1/16 to
 *   16) or one of the model's resolutions (`1K`, `2K`, `3K`, `4K`: drawn square here, where Ark's
 *   model picks the shape from the prompt); anything else is 400 `InvalidParameter` on `size`.
 * - `sequential_image_generation` `disabled` (default) makes one image; `auto` up to
 *   `sequential_image_generation_options.max_images` (1–15, default 15): as many as the prompt's
 *   `[sim:count=K]` says, else all of them (Ark's model decides from the prompt).
 * - `output_format` (`png` | `jpeg`, default `jpeg`) only for the models that take it
 *   (SIM_ARK_IMAGE_MODELS); the others output JPEG and refuse the parameter with 400 (whether Ark
 *   refuses or ignores it is not checked against the provider).
 * - `response_format` `url` (default; a link to the simulator's image files) or `b64_json`;
 *   `watermark` a boolean; `stream: true` is refused (not simulated).
 * - The answer: `model`, `created`, `data[]` (`url` | `b64_json`, `size`), `usage`
 *   (`generated_images`, `output_tokens` = floor(Σ w×h / 256), `total_tokens`).
 * Directives in the prompt: `[sim:fail]` 500 `InternalServiceError`, `[sim:status=NNN]` that
 * status, `[sim:delay=MS]` before answering, `[sim:count=K]` as above, `[sim:refuse=I]` image I
 * (from 0) fails moderation: its item is `{error: {code: OutputImageSensitiveContentDetected}}`
 * and it is not among `generated_images`, as Ark answers a sequential generation.
 * The gateway's layered class (`image-5.0-pro`, no public Ark model) returns each image's other
 * layers in a `layers` member, always PNG: a gateway convention, not Ark's (docs/providers.md).
 */
import type { IncomingMessage } from 'node:http';
import { parseDirectives } from '../../directives';
import { HttpError, waitUnlessGone } from '../../http';
import { simCount, simImageBytes, simImageUrl, type Dimensions } from '../../images';
import type { ExtraRoute } from '../../route';
import { ARK_STATUS_CODES, arkJsonBody, arkRoute, sendArk } from './common';

/** What the simulated Ark knows of each model it serves. */
interface SimArkImageModel {
  /** The fewest total pixels of a `WxH` size. */
  readonly minPixels: number;
  /** The resolutions `size` may name instead, with the square each is drawn at. */
  readonly resolutions: Readonly<Record<string, number>>;
  /** Whether it takes `output_format` (else JPEG only). */
  readonly outputFormat: boolean;
  /** The PNG layers every image has besides its base (the layered class). */
  readonly layers: readonly string[];
}

const SEEDREAM_4_0: SimArkImageModel = { minPixels: 921_600, resolutions: { '1K': 1024, '2K': 2048, '4K': 4096 }, outputFormat: false, layers: [] };
const SEEDREAM_4_5: SimArkImageModel = { minPixels: 3_686_400, resolutions: { '2K': 2048, '4K': 4096 }, outputFormat: false, layers: [] };
const SEEDREAM_5_0: SimArkImageModel = { minPixels: 3_686_400, resolutions: { '2K': 2048, '3K': 3072, '4K': 4096 }, outputFormat: true, layers: [] };

/**
 * The models the simulated Ark serves, by the id the gateway sends (the catalog's `upstream_model`,
 * else its id): Ark's published Seedream models, and the layered class under its catalog id.
 */
export const SIM_ARK_IMAGE_MODELS: Readonly<Record<string, SimArkImageModel>> = Object.freeze({
  'doubao-seedream-4-0-250828': SEEDREAM_4_0,
  'doubao-seedream-4-5-251128': SEEDREAM_4_5,
  'doubao-seedream-5-0-260128': SEEDREAM_5_0,
  'image-5.0-pro': { ...SEEDREAM_5_0, layers: ['foreground', 'text'] },
});

/** An Ark error code for a status a directive asks for (Ark's error-code reference has many per status; one each here). */

/** Ark's largest image, 4096×4096 pixels. */
const MAX_PIXELS = 16_777_216;

function invalid(param: string, why: string): HttpError {
  return new HttpError(400, `The parameter \`${param}\` specified in the request is not valid: ${why}.`, 'InvalidParameter', param);
}

function sizeOf(model: SimArkImageModel, size: unknown): Dimensions {
  if (size === undefined) return { width: 2048, height: 2048 };
  if (typeof size === 'string' && Object.hasOwn(model.resolutions, size)) return { width: model.resolutions[size]!, height: model.resolutions[size]! };
  const match = typeof size === 'string' ? /^(\d{1,5})x(\d{1,5})$/.exec(size) : null;
  if (!match) throw invalid('size', `expected WIDTHxHEIGHT or one of ${Object.keys(model.resolutions).join(', ')}`);
  const d = { width: Number(match[1]), height: Number(match[2]) };
  const pixels = d.width * d.height;
  if (pixels < model.minPixels || pixels > MAX_PIXELS) throw invalid('size', `total pixels must be within [${model.minPixels}, ${MAX_PIXELS}]`);
  if (d.width * 16 < d.height || d.height * 16 < d.width) throw invalid('size', 'the aspect ratio must be within [1/16, 16]');
  return d;
}

/** How many images a request may make: one, or up to `max_images` for a sequential generation. */
function maxImagesOf(b: Record<string, unknown>): number {
  const mode = b.sequential_image_generation ?? 'disabled';
  if (mode !== 'disabled' && mode !== 'auto') throw invalid('sequential_image_generation', 'expected auto or disabled');
  if (mode === 'disabled') return 1;
  const options = b.sequential_image_generation_options;
  const max = typeof options === 'object' && options !== null ? (options as { max_images?: unknown }).max_images : undefined;
  if (max === undefined) return 15;
  if (!Number.isInteger(max) || (max as number) < 1 || (max as number) > 15) throw invalid('sequential_image_generation_options.max_images', 'expected an integer from 1 to 15');
  return max as number;
}

function formatOf(model: SimArkImageModel, modelId: string, value: unknown): 'png' | 'jpeg' {
  if (value === undefined) return 'jpeg';
  if (!model.outputFormat) throw invalid('output_format', `${modelId} does not support it`);
  if (value !== 'png' && value !== 'jpeg') throw invalid('output_format', 'expected png or jpeg');
  return value;
}

export function arkImageRoutes(): ExtraRoute[] {
  return [
    arkRoute('POST', '/images/generations', async ({ req, res, rawBody }) => {
      const b = arkJsonBody(rawBody);
      const modelId = b.model;
      if (typeof modelId !== 'string' || modelId === '') throw invalid('model', 'it is required');
      if (!Object.hasOwn(SIM_ARK_IMAGE_MODELS, modelId)) {
        throw new HttpError(404, `The model or endpoint ${modelId} does not exist or you do not have access to it.`, 'InvalidEndpointOrModel.NotFound');
      }
      const model = SIM_ARK_IMAGE_MODELS[modelId]!;
      if (typeof b.prompt !== 'string' || b.prompt === '') throw invalid('prompt', 'it is required');
      const dimensions = sizeOf(model, b.size);
      const maxImages = maxImagesOf(b);
      const format = formatOf(model, modelId, b.output_format);
      const responseFormat = b.response_format ?? 'url';
      if (responseFormat !== 'url' && responseFormat !== 'b64_json') throw invalid('response_format', 'expected url or b64_json');
      if (b.watermark !== undefined && typeof b.watermark !== 'boolean') throw invalid('watermark', 'expected a boolean');
      if (b.stream === true) throw invalid('stream', 'streamed generation is not simulated');

      const directives = parseDirectives(b.prompt);
      if (directives.status) throw new HttpError(directives.status, `simulated HTTP ${directives.status}`, ARK_STATUS_CODES[directives.status] ?? 'InternalServiceError');
      if (directives.delayMs && !(await waitUnlessGone(res, directives.delayMs))) return;
      if (directives.fail) throw new HttpError(500, 'The service encountered an unexpected internal error.', 'InternalServiceError');

      const count = Math.min(maxImages, simCount(directives, maxImages));
      const refused = new Set(String(directives.raw['refuse'] ?? '').split(',').filter((i) => /^\d{1,2}$/.test(i)).map(Number));
      const seed = b.prompt.length;
      const item = (req: IncomingMessage, fmt: 'png' | 'jpeg', s: number) =>
        responseFormat === 'url' ? { url: simImageUrl(req, dimensions, fmt, s) } : { b64_json: simImageBytes(fmt, dimensions, s).toString('base64') };
      const data = Array.from({ length: count }, (_, i) => {
        if (refused.has(i)) return { error: { code: 'OutputImageSensitiveContentDetected', message: 'The generated image may contain sensitive content.' } };
        const layers = model.layers.map((name, k) => ({ name, ...item(req, 'png', seed + i + 1000 * (k + 1)) }));
        return { ...item(req, format, seed + i), size: `${dimensions.width}x${dimensions.height}`, ...(layers.length > 0 ? { layers } : {}) };
      });
      const generated = data.filter((d) => !('error' in d)).length;
      const tokens = Math.floor((generated * dimensions.width * dimensions.height) / 256);
      sendArk(res, { model: modelId, created: Math.floor(Date.now() / 1000), data, usage: { generated_images: generated, output_tokens: tokens, total_tokens: tokens } });
    }),
  ];
}
