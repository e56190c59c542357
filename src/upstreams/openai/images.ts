/**
 * OpenAI's image generation: `POST {base}/images/generations`, Bearer key.
 * Reference: https://platform.openai.com/docs/api-reference/images/create (CreateImageRequest,
 * ImagesResponse in OpenAI's OpenAPI document): `model`, `prompt`, `n`, `size` (`WxH`),
 * `output_format`, `response_format`, `quality`, `style`, `background`, `moderation`,
 * `output_compression`, `user`; answer `created`, `data[]` (`url` | `b64_json`),
 * `usage {input_tokens, output_tokens, total_tokens}` (token-billed models).
 */
import { UpstreamError } from '../errors';
import { createdOf, dataItems, imagesOf, type ImageGenerationAnswer, type ImageGenerationCall } from '../images';
import type { WireAnswer, WireRequest } from '../wire';
import { openaiErrorOf } from './errors';

/** The request: the gateway's fields as OpenAI names them, `output_format` only for a model that takes it, the options as set. */
export function openAiImageRequest(call: ImageGenerationCall): WireRequest {
  return {
    method: 'POST',
    path: '/images/generations',
    model: call.model,
    body: {
      model: call.model,
      prompt: call.prompt,
      n: call.n,
      size: `${call.width}x${call.height}`,
      ...(call.outputFormat === null ? {} : { output_format: call.outputFormat }),
      ...call.options,
      response_format: call.responseFormat,
    },
  };
}

/**
 * The answer: the images that came back (never more than asked), a layered model's `layers` with
 * them, and the token usage when it reported a valid one. None at all is a 502.
 */
export function readOpenAiImages(answer: WireAnswer, call: Pick<ImageGenerationCall, 'n'>, channel: string): ImageGenerationAnswer {
  if (answer.status >= 400) throw openaiErrorOf(answer, channel);
  const body = (answer.json() ?? {}) as { created?: unknown; data?: unknown; usage?: { input_tokens?: unknown; output_tokens?: unknown } };
  const images = imagesOf(dataItems(body.data)).slice(0, call.n);
  if (images.length === 0) throw new UpstreamError(502, `channel ${channel} returned no images`, 'no_images', 'protocol');
  const valid = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
  const { input_tokens: input, output_tokens: output } = body.usage ?? {};
  return {
    created: createdOf(body.created),
    images,
    tokens: valid(input) && valid(output) ? { input_tokens: input, output_tokens: output } : null,
  };
}
