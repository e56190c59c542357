/**
 * Volcengine Ark image generation (Seedream), synchronous: `POST {base}/images/generations` on a
 * base such as `https://ark.cn-beijing.volces.com/api/v3`, Bearer API key.
 * Reference: https://www.volcengine.com/docs/82379/1541523 (图片生成 API): request `model`,
 * `prompt`, `size` (`WxH`, or `2K`/`3K`/`4K`; minimum total pixels per model), `sequential_image_generation`
 * (`disabled` | `auto`) with `sequential_image_generation_options.max_images` (1–15),
 * `output_format` (5.0-lite only), `response_format` (`url`, valid 24 h, | `b64_json`), `watermark`
 * (default true), `stream`; answer `model`, `created`, `data[]` (`url` | `b64_json`, `size`, or a
 * failed image's `error {code, message}`), `usage {generated_images, output_tokens, total_tokens}`
 * (only generated images are billed), `error {code, message}`.
 */
import { UpstreamError } from '../errors';
import { createdOf, dataItems, imagesOf, type ImageGenerationAnswer, type ImageGenerationCall } from '../images';
import { streamedError } from '../openai/errors';
import type { WireAnswer, WireRequest } from '../wire';
import { arkProtocol } from './protocol';

/** Ark's most images in one sequential generation (`max_images`). */
export const ARK_MAX_IMAGES = 15;

/**
 * The request: `n` images as a sequential generation (`auto`, at most `n`: Ark may make fewer,
 * as its model reads the prompt), one as `disabled`; the size as `WxH`; `output_format` only for
 * a model that takes it. Ark takes none of OpenAI's other image options: the catalog lists none
 * for its models, so none reaches here.
 */
export function arkImageRequest(call: ImageGenerationCall): WireRequest {
  if (call.options && Object.keys(call.options).length > 0) throw new Error(`Ark image generation takes none of OpenAI's image options (${Object.keys(call.options).join(', ')})`);
  if (!Number.isInteger(call.n) || call.n < 1 || call.n > ARK_MAX_IMAGES) throw new Error(`Ark generates 1 to ${ARK_MAX_IMAGES} images, not ${call.n}`);
  return {
    method: 'POST',
    path: '/images/generations',
    model: call.model,
    body: {
      model: call.model,
      prompt: call.prompt,
      size: `${call.width}x${call.height}`,
      ...(call.n > 1 ? { sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: call.n } } : { sequential_image_generation: 'disabled' }),
      ...(call.outputFormat === null ? {} : { output_format: call.outputFormat }),
      response_format: call.responseFormat,
      ...(call.watermark === undefined ? {} : { watermark: call.watermark }),
      stream: false,
    },
  };
}

interface ArkImagesBody {
  created?: unknown;
  data?: unknown;
  usage?: { generated_images?: unknown };
  error?: unknown;
}

/**
 * The answer: the images Ark generated, in order, as many as `usage.generated_images` says it
 * bills (never more than asked, never more than came back); a failed image of a sequential
 * generation (`data[].error`) is skipped. No image at all is Ark's failure: its request-level or
 * first image `error` as a refusal (400, its code, e.g. `OutputImageSensitiveContentDetected`),
 * else a 502. `layers` of an item (the gateway's layered class) is read where present: Ark's
 * reference has no such member (docs/providers.md).
 */
export function readArkImages(answer: WireAnswer, call: Pick<ImageGenerationCall, 'n'>, channel: string): ImageGenerationAnswer {
  if (answer.status >= 400) throw arkProtocol.errorOf(answer, channel);
  const body = (answer.json() ?? {}) as ArkImagesBody;
  const items = dataItems(body.data);
  const images = imagesOf(items);
  const generated = body.usage?.generated_images;
  const billed = Number.isSafeInteger(generated) && (generated as number) >= 0 ? (generated as number) : images.length;
  const kept = images.slice(0, Math.min(billed, call.n));
  if (kept.length === 0) {
    // Ark's error object is OpenAI's shape (ark/protocol.ts): read as the OpenAI protocol reads one.
    const error = [body.error, ...items.map((item) => item.error)].find((e) => typeof e === 'object' && e !== null);
    if (error === undefined) throw new UpstreamError(502, `channel ${channel} returned no images`, 'no_images', 'protocol');
    const reported = streamedError(error, channel);
    throw new UpstreamError(400, reported.message, reported.code);
  }
  return { created: createdOf(body.created), images: kept, tokens: null };
}
