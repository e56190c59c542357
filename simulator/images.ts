import type { IncomingMessage } from 'node:http';
import { countTokens } from '../src/billing/tokens';
import { IMAGE_OPTION_VALUES } from '../src/media-tasks/model-types';
import { parseDirectives, stripDirectives, type SimDirectives } from './directives';
import { originOf, sendBytes } from './files';
import { HttpError, sendJson, waitUnlessGone } from './http';
import { JPEG, png } from './media';
import type { ExtraRoute } from './server';
import { sendSimTask, SimTaskStore, type SimTask } from './task-store';

/**
 * Image generation providers, simulated:
 * - `POST /v1/images/generations`: OpenAI-style synchronous generation. `response_format`
 *   `b64_json` (default) or `url`; `output_format` `png` (default) or `jpeg`; usage in tokens
 *   (prompt words; ceil(width × height / 1024) per image) always reported.
 * - `POST /v1/images/tasks`, `GET /v1/images/tasks/:id`: the same generation as a task (queued,
 *   running, succeeded with `data[{url}]` and `usage`, or failed); the same X-Client-Request-Id
 *   creates one task.
 * The provider knows its own models' formats (SIM_SINGLE_FORMAT_MODELS): the single-format models
 * (`image-4.5`, `image-4.0`) output JPEG and refuse `output_format` with 400, whatever its value;
 * every other model takes `png` (default) or `jpeg`.
 * Directives in the prompt: `[sim:fail]` (sync: HTTP 500; task: it fails), `[sim:status=NNN]`
 * (HTTP NNN), `[sim:delay=MS]` (sync: before answering; task: until it finishes, default 150 ms),
 * `[sim:count=K]` returns K images at most (fewer than asked).
 * OpenAI's other image options (`quality`, `style`, `background`, `moderation`,
 * `output_compression`, `user`) are checked as OpenAI's API defines them (null is unset) and taken
 * by every model; every PNG image of a request that set some carries them, as the JSON of an iTXt
 * chunk `sim-options`, so a test sees what reached the provider.
 * Layered models (SIM_LAYERED_MODELS) return each image with its other layers in a `layers`
 * member: `[{name, b64_json | url}]`, always PNG (`output_format` sets the base image only).
 * Images are real: a small PNG (width and height divided by 64) or a baseline JPEG, served at
 * `/sim/files/images/<w>x<h>-<seed>.<png|jpg>`.
 */

export interface SimImageRequest {
  model?: string;
  prompt?: string;
  n?: number;
  size?: string;
  response_format?: 'url' | 'b64_json';
  output_format?: 'png' | 'jpeg';
  quality?: unknown;
  style?: unknown;
  background?: unknown;
  moderation?: unknown;
  output_compression?: unknown;
  user?: unknown;
}

/** What a request's images carry of its options (their iTXt chunk), none when it set none. */
type SimImageOptions = Readonly<Record<string, string | number>>;

/** The key of the iTXt chunk holding a request's options. */
export const SIM_OPTIONS_KEYWORD = 'sim-options';

/** The options a request set, refused with 400 as OpenAI refuses a value outside its definition. */
function optionsOf(b: SimImageRequest): SimImageOptions {
  const options: Record<string, string | number> = {};
  const invalid = (option: string, takes: string) => new HttpError(400, `Invalid value for '${option}': expected ${takes}`, 'invalid_value', option);
  for (const [option, values] of Object.entries(IMAGE_OPTION_VALUES)) {
    const value = b[option as keyof typeof IMAGE_OPTION_VALUES];
    if (value === undefined || value === null) continue;
    if (!(values as readonly unknown[]).includes(value)) throw invalid(option, `one of ${values.join(', ')}`);
    options[option] = value as string;
  }
  if (b.output_compression !== undefined && b.output_compression !== null) {
    const c = b.output_compression;
    if (!Number.isInteger(c) || (c as number) < 0 || (c as number) > 100) throw invalid('output_compression', 'an integer from 0 to 100');
    options.output_compression = c as number;
  }
  if (b.user !== undefined && b.user !== null) {
    if (typeof b.user !== 'string') throw invalid('user', 'a string');
    options.user = b.user;
  }
  return options;
}

/**
 * The simulated provider's models that output one format only and refuse `output_format` (the
 * 4.5 and 4.0 classes), by the model id the gateway sends (`upstream_model`, else the catalog id).
 */
export const SIM_SINGLE_FORMAT_MODELS: Readonly<Record<string, 'jpeg' | 'png'>> = Object.freeze({ 'image-4.5': 'jpeg', 'image-4.0': 'jpeg' });

/** The simulated provider's layered models (the 5.0 Pro class) and the layers each image has besides its base. */
export const SIM_LAYERED_MODELS: Readonly<Record<string, readonly string[]>> = Object.freeze({ 'image-5.0-pro': ['foreground', 'text'] });

/** The format a request gets: a single-format model's own (the parameter refused), else `output_format` or PNG. */
function formatOf(b: SimImageRequest): 'png' | 'jpeg' {
  const only = Object.hasOwn(SIM_SINGLE_FORMAT_MODELS, b.model!) ? SIM_SINGLE_FORMAT_MODELS[b.model!] : undefined;
  if (only) {
    if (b.output_format !== undefined) throw new HttpError(400, `${b.model} outputs ${only.toUpperCase()} only and does not support output_format`, 'unsupported_parameter', 'output_format');
    return only;
  }
  if (b.output_format !== undefined && b.output_format !== 'png' && b.output_format !== 'jpeg') {
    throw new HttpError(400, `output_format must be png or jpeg, got ${String(b.output_format)}`, 'invalid_value', 'output_format');
  }
  return b.output_format ?? 'png';
}

interface Dimensions {
  readonly width: number;
  readonly height: number;
}

function parseSize(size: string | undefined): Dimensions {
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(size ?? '1024x1024');
  if (!match) throw new HttpError(400, `size must be WIDTHxHEIGHT, got ${size}`, 'invalid_size', 'size');
  return { width: Number(match[1]), height: Number(match[2]) };
}

function imageBytes(format: 'png' | 'jpeg', d: Dimensions, seed: number, options: SimImageOptions): Buffer {
  const text: Record<string, string> = Object.keys(options).length > 0 ? { [SIM_OPTIONS_KEYWORD]: JSON.stringify(options) } : {};
  return format === 'jpeg' ? JPEG : png(Math.max(1, Math.ceil(d.width / 64)), Math.max(1, Math.ceil(d.height / 64)), seed, text);
}

/** Output tokens of one image of this size. */
export function simImageTokens(d: Dimensions): number {
  return Math.ceil((d.width * d.height) / 1024);
}

interface Generation {
  readonly count: number;
  /** Names of the PNG layers every image has besides its base (layered models). */
  readonly layers: readonly string[];
  readonly dimensions: Dimensions;
  readonly format: 'png' | 'jpeg';
  readonly seed: number;
  readonly options: SimImageOptions;
  readonly usage: { input_tokens: number; output_tokens: number; total_tokens: number };
}

function checked(b: SimImageRequest): { generation: Generation; directives: SimDirectives } {
  if (!b.model || typeof b.prompt !== 'string' || b.prompt === '') throw new HttpError(400, 'model and prompt are required', 'invalid_request');
  const n = b.n ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > 16) throw new HttpError(400, 'n must be an integer from 1 to 16', 'invalid_request', 'n');
  const format = formatOf(b);
  const options = optionsOf(b);
  const directives = parseDirectives(b.prompt);
  if (directives.status) throw new HttpError(directives.status, `simulated HTTP ${directives.status}`, null);
  const dimensions = parseSize(b.size);
  const count = Math.min(n, intOr(directives.raw['count'], n));
  const input = countTokens(stripDirectives(b.prompt));
  const output = count * simImageTokens(dimensions);
  return {
    directives,
    generation: {
      count,
      layers: Object.hasOwn(SIM_LAYERED_MODELS, b.model) ? SIM_LAYERED_MODELS[b.model]! : [],
      dimensions,
      format,
      seed: b.prompt.length,
      options,
      usage: { input_tokens: input, output_tokens: output, total_tokens: input + output },
    },
  };
}

function intOr(value: string | true | undefined, fallback: number): number {
  return typeof value === 'string' && /^\d{1,3}$/.test(value) ? Number(value) : fallback;
}

/** A generated image's link; its options travel in the query, for the file route to write into it. */
function fileUrl(req: IncomingMessage, g: Generation, index: number, format = g.format, seed = g.seed + index): string {
  const query = Object.keys(g.options).length > 0 ? `?options=${encodeURIComponent(JSON.stringify(g.options))}` : '';
  return `${originOf(req.headers)}/sim/files/images/${g.dimensions.width}x${g.dimensions.height}-${seed}.${format === 'jpeg' ? 'jpg' : 'png'}${query}`;
}

/** Layer `k` of image `index`: a PNG of its own. */
function layerSeed(g: Generation, index: number, k: number): number {
  return g.seed + index + 1000 * (k + 1);
}

/** One image of a generation: the base in the requested format, and a layered model's other layers (PNG). */
function imageItem(req: IncomingMessage, g: Generation, index: number, asUrl: boolean): Record<string, unknown> {
  const item = (format: 'png' | 'jpeg', seed: number) =>
    asUrl ? { url: fileUrl(req, g, index, format, seed) } : { b64_json: imageBytes(format, g.dimensions, seed, g.options).toString('base64') };
  const layers = g.layers.map((name, k) => ({ name, ...item('png', layerSeed(g, index, k)) }));
  return { ...item(g.format, g.seed + index), ...(layers.length > 0 ? { layers } : {}) };
}

interface SimImageTask extends SimTask {
  readonly generation: Generation;
}

export function imageRoutes(): ExtraRoute[] {
  const tasks = new SimTaskStore<SimImageTask>('imgtask-sim', 'task');

  return [
    {
      method: 'POST',
      path: '/v1/images/generations',
      handler: async ({ req, res, body }) => {
        const b = (body ?? {}) as SimImageRequest;
        const { generation: g, directives } = checked(b);
        if (directives.delayMs && !(await waitUnlessGone(res, directives.delayMs))) return;
        if (directives.fail) throw new HttpError(500, 'the simulated image generation failed', 'internal_error');
        const asUrl = b.response_format === 'url';
        const data = Array.from({ length: g.count }, (_, i) => imageItem(req, g, i, asUrl));
        sendJson(res, 200, { created: Math.floor(Date.now() / 1000), data, usage: g.usage });
      },
    },
    {
      method: 'POST',
      path: '/v1/images/tasks',
      handler: ({ req, res, body }) => {
        const b = (body ?? {}) as SimImageRequest;
        if (tasks.replayed(req, res)) return;
        const { generation, directives } = checked(b);
        tasks.create(req, res, b.model!, directives, (task) => ({ ...task, generation }));
      },
    },
    tasks.releaseRoute('/sim/images/:id/release'),
    {
      method: 'GET',
      path: '/v1/images/tasks/:id',
      handler: ({ req, res, params }) => {
        const task = tasks.find(params.id!);
        const g = task.generation;
        sendSimTask(res, task, { code: 'ImageGenerationFailed', message: 'the simulated image generation failed' }, () => ({
          created: Math.floor(task.finishAt / 1000),
          data: Array.from({ length: g.count }, (_, i) => imageItem(req, g, i, true)),
          usage: g.usage,
        }));
      },
    },
    {
      method: 'GET',
      path: '/sim/files/images/:name',
      handler: ({ res, params, query }) => {
        const match = /^(\d{1,5})x(\d{1,5})-(\d{1,9})\.(png|jpg)$/.exec(params.name!);
        if (!match) throw new HttpError(404, 'no such file', 'not_found');
        const format = match[4] === 'jpg' ? 'jpeg' : 'png';
        const options = optionsOf(jsonObjectOf(query.get('options')));
        sendBytes(res, format === 'jpeg' ? 'image/jpeg' : 'image/png', imageBytes(format, { width: Number(match[1]), height: Number(match[2]) }, Number(match[3]), options));
      },
    },
  ];
}

/** The JSON object a query parameter holds; none (or not an object) is an empty one. */
function jsonObjectOf(text: string | null): SimImageRequest {
  if (text === null) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'options is not JSON', 'invalid_request', 'options');
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as SimImageRequest) : {};
}
