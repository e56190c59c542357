import type { IncomingMessage } from 'node:http';
import { countTokens } from '../src/billing/tokens';
import { IMAGE_OPTION_VALUES } from '../src/media-tasks/model-types';
import { parseDirectives, stripDirectives, type SimDirectives } from './directives';
import { originOf, sendBytes } from './files';
import { HttpError, sendJson, waitUnlessGone } from './http';
import { JPEG, png } from './media';
import type { ExtraRoute } from './server';

/**
 * OpenAI's image generation, simulated (the OpenAI protocol's image models, e.g. the token-billed
 * one; Ark's Seedream is simulator/providers/ark/images.ts, which shares the images served here):
 * - `POST /v1/images/generations`: synchronous generation. `response_format` `b64_json` (default)
 *   or `url`; `output_format` `png` (default) or `jpeg`; usage in tokens (prompt words;
 *   ceil(width × height / 1024) per image) always reported.
 * Directives in the prompt: `[sim:fail]` (HTTP 500), `[sim:status=NNN]` (HTTP NNN),
 * `[sim:delay=MS]` (before answering), `[sim:count=K]` returns K images at most (fewer than asked).
 * OpenAI's other image options (`quality`, `style`, `background`, `moderation`,
 * `output_compression`, `user`) are checked as OpenAI's API defines them (null is unset); every
 * PNG image of a request that set some carries them, as the JSON of an iTXt chunk `sim-options`,
 * so a test sees what reached the provider.
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
export type SimImageOptions = Readonly<Record<string, string | number>>;

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

/** The format a request gets: `output_format`, else PNG. */
function formatOf(b: SimImageRequest): 'png' | 'jpeg' {
  if (b.output_format !== undefined && b.output_format !== 'png' && b.output_format !== 'jpeg') {
    throw new HttpError(400, `output_format must be png or jpeg, got ${String(b.output_format)}`, 'invalid_value', 'output_format');
  }
  return b.output_format ?? 'png';
}

export interface Dimensions {
  readonly width: number;
  readonly height: number;
}

function parseSize(size: string | undefined): Dimensions {
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(size ?? '1024x1024');
  if (!match) throw new HttpError(400, `size must be WIDTHxHEIGHT, got ${size}`, 'invalid_size', 'size');
  return { width: Number(match[1]), height: Number(match[2]) };
}

/** A generated image: a PNG of width/64 × height/64 carrying the request's options, or the baseline JPEG. */
export function simImageBytes(format: 'png' | 'jpeg', d: Dimensions, seed: number, options: SimImageOptions = {}): Buffer {
  const text: Record<string, string> = Object.keys(options).length > 0 ? { [SIM_OPTIONS_KEYWORD]: JSON.stringify(options) } : {};
  return format === 'jpeg' ? JPEG : png(Math.max(1, Math.ceil(d.width / 64)), Math.max(1, Math.ceil(d.height / 64)), seed, text);
}

/** Output tokens of one image of this size. */
export function simImageTokens(d: Dimensions): number {
  return Math.ceil((d.width * d.height) / 1024);
}

interface Generation {
  readonly count: number;
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
  const count = Math.min(n, simCount(directives, n));
  const input = countTokens(stripDirectives(b.prompt));
  const output = count * simImageTokens(dimensions);
  return {
    directives,
    generation: { count, dimensions, format, seed: b.prompt.length, options, usage: { input_tokens: input, output_tokens: output, total_tokens: input + output } },
  };
}

/** `[sim:count=K]`: at most K images come back (fewer than asked); `fallback` without it. */
export function simCount(directives: SimDirectives, fallback: number): number {
  const value = directives.raw['count'];
  return typeof value === 'string' && /^\d{1,3}$/.test(value) ? Number(value) : fallback;
}

/** The link of a generated image (the file route below draws it); its options travel in the query, for the route to write into it. */
export function simImageUrl(req: IncomingMessage, d: Dimensions, format: 'png' | 'jpeg', seed: number, options: SimImageOptions = {}): string {
  const query = Object.keys(options).length > 0 ? `?options=${encodeURIComponent(JSON.stringify(options))}` : '';
  return `${originOf(req.headers)}/sim/files/images/${d.width}x${d.height}-${seed}.${format === 'jpeg' ? 'jpg' : 'png'}${query}`;
}

export function imageRoutes(): ExtraRoute[] {
  return [
    {
      method: 'POST',
      path: '/v1/images/generations',
      handler: async ({ req, res, body }) => {
        const b = (body ?? {}) as SimImageRequest;
        const { generation: g, directives } = checked(b);
        if (directives.delayMs && !(await waitUnlessGone(res, directives.delayMs))) return;
        if (directives.fail) throw new HttpError(500, 'the simulated image generation failed', 'internal_error');
        const item = (i: number) =>
          b.response_format === 'url'
            ? { url: simImageUrl(req, g.dimensions, g.format, g.seed + i, g.options) }
            : { b64_json: simImageBytes(g.format, g.dimensions, g.seed + i, g.options).toString('base64') };
        sendJson(res, 200, { created: Math.floor(Date.now() / 1000), data: Array.from({ length: g.count }, (_, i) => item(i)), usage: g.usage });
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
        sendBytes(res, format === 'jpeg' ? 'image/jpeg' : 'image/png', simImageBytes(format, { width: Number(match[1]), height: Number(match[2]) }, Number(match[3]), options));
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
