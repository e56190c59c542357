import { arkImageRequest, readArkImages } from './ark/images';
import type { ImageGenerationAnswer, ImageGenerationCall } from './images';
import { openAiImageRequest, readOpenAiImages } from './openai/images';
import type { WireAnswer, WireRequest, WireTransport } from './wire';

/** One protocol's image generation: the request it builds and how it reads the answer. */
interface ImageProtocol {
  request(call: ImageGenerationCall): WireRequest;
  read(answer: WireAnswer, call: ImageGenerationCall, channel: string): ImageGenerationAnswer;
}

/** The protocols image generation is spoken in (docs/providers.md). */
const IMAGE_PROTOCOLS: Readonly<Record<string, ImageProtocol>> = {
  ark: { request: arkImageRequest, read: readArkImages },
  openai: { request: openAiImageRequest, read: readOpenAiImages },
};

/**
 * Generates images on a channel, in its protocol: the feature hands the call, the protocol's
 * adapter builds the request and reads the answer (an UpstreamError for a failure).
 */
export async function generateImages(channel: WireTransport & { readonly config: { readonly protocol: string } }, call: ImageGenerationCall, signal?: AbortSignal): Promise<ImageGenerationAnswer> {
  const protocol = Object.hasOwn(IMAGE_PROTOCOLS, channel.config.protocol) ? IMAGE_PROTOCOLS[channel.config.protocol]! : null;
  if (!protocol) throw new Error(`channel ${channel.name} speaks ${channel.config.protocol}, which has no image generation`);
  return protocol.read(await channel.call(protocol.request(call), signal), call, channel.name);
}
