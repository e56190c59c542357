/**
 * Image generation as every image protocol adapter takes and answers it (src/upstreams/ark/images.ts,
 * src/upstreams/openai/images.ts): the gateway's typed request after its validation, and what
 * came back, read out of the provider's own fields. Features build the one and read the other; the
 * wire is the adapters'.
 */

export interface ImageGenerationCall {
  /** The provider's model id (the catalog's `upstream_model`, else the model id). */
  readonly model: string;
  readonly prompt: string;
  /** Images wanted. */
  readonly n: number;
  readonly width: number;
  readonly height: number;
  /** The format asked for; null for a model that outputs its one format and refuses the parameter. */
  readonly outputFormat: 'png' | 'jpeg' | null;
  /** `b64_json`: the images inline; `url`: links the gateway downloads (a task archives them). */
  readonly responseFormat: 'url' | 'b64_json';
  /** OpenAI's image options the request set (quality, background, …), each one the model takes. */
  readonly options?: Readonly<Record<string, string | number>>;
  /** The catalog's watermark setting for the model; absent: the provider's default. */
  readonly watermark?: boolean;
}

/** One image of an answer, inline or by link. */
export interface ImageData {
  readonly url?: string;
  readonly b64_json?: string;
}

/** One generated image and (a layered model) its other layers, each named safely for a file key. */
export interface GeneratedImage extends ImageData {
  readonly layers: readonly (ImageData & { readonly name: string })[];
}

export interface ImageGenerationAnswer {
  /** The provider's creation time (unix seconds), when it said. */
  readonly created: number | null;
  /** The images that came back, in order, at most `n`: the ones the provider bills. */
  readonly images: readonly GeneratedImage[];
  /** Token usage the provider reported (token-billed models), null when it reported none. */
  readonly tokens: { readonly input_tokens: number; readonly output_tokens: number } | null;
}

/** The layer name of the image `output_format` applies to; a provider's other layers keep their names. */
export const BASE_LAYER = 'base';

/** A provider's layer list (`[{name, url | b64_json}]`), each named for a file key (`layer_<k>` when its name is not usable). */
function layersOf(layers: unknown): GeneratedImage['layers'] {
  if (!Array.isArray(layers)) return [];
  return layers
    .filter((l): l is Record<string, unknown> => typeof l === 'object' && l !== null)
    .map((l, k) => {
      const raw = typeof l.name === 'string' ? l.name.toLowerCase() : '';
      const name = /^[a-z0-9_-]{1,32}$/.test(raw) && raw !== BASE_LAYER ? raw : `layer_${k + 1}`;
      return { name, ...imageData(l) };
    });
}

/** The `url` and `b64_json` members of an answer's item that are strings. */
function imageData(item: Record<string, unknown>): ImageData {
  return { ...(typeof item.url === 'string' ? { url: item.url } : {}), ...(typeof item.b64_json === 'string' ? { b64_json: item.b64_json } : {}) };
}

/** The objects of an answer's `data` array (none when it is not one). */
export function dataItems(data: unknown): Record<string, unknown>[] {
  return (Array.isArray(data) ? data : []).filter((d): d is Record<string, unknown> => typeof d === 'object' && d !== null);
}

/** The items that carry an image (inline or by link), in order, each with its layers. */
export function imagesOf(items: readonly Record<string, unknown>[]): GeneratedImage[] {
  return items.map((item) => ({ ...imageData(item), layers: layersOf(item.layers) })).filter((i) => i.url !== undefined || i.b64_json !== undefined);
}

/** An answer's `created` (unix seconds), null when it is not an integer. */
export function createdOf(created: unknown): number | null {
  return typeof created === 'number' && Number.isSafeInteger(created) ? created : null;
}
