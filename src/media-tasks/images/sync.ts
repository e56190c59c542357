import { Readable } from 'node:stream';
import { request as httpRequest } from 'undici';
import { metered, routedCall, type MeteringDeps, type RoutingDeps } from '../../billing/metered';
import { readJson } from '../../http/body';
import { authOf, type GatewayContext } from '../../http/context';
import { resolveModel } from '../../http/models-access';
import { newId } from '../../ids';
import { UpstreamError } from '../../upstreams/errors';
import { sniffImage, unixSeconds } from '../common';
import { imagePricing } from '../model-types';
import { generationStream, IMAGES_GENERATED, type GeneratedImage, type ImagesGenerated, type StoredImageFile } from './events';
import { imageCall, imageEstimate, imageSettlement, normalizeImageRequest, parseImageRequest, tokenUsageOf, type ImageTokenUsage } from './request';
import { generateImages } from '../../upstreams/image-protocols';
import { BASE_LAYER, type ImageData } from '../../upstreams/images';
import { recordFact } from '../../domain/facts';
import type { Catalog } from '../../billing/catalog';
import type { Config } from '../../config';
import type { EventStore } from '../../eventstore/port';
import type { Clock } from '../../feature-types';
import type { UrlSigner } from '../../files/signed-urls';
import type { FileStore } from '../../files/store';
import type { ConsumerProgress } from '../../projections-runtime/progress';

/** What synchronous image generation uses. */
export type ImageGenerationDeps = MeteringDeps & RoutingDeps & {
  readonly catalog: Catalog;
  readonly files: Pick<FileStore, 'put' | 'delete'>;
  readonly signer: UrlSigner;
  readonly store: Pick<EventStore, 'append'>;
  readonly progress: Pick<ConsumerProgress, 'waitFor'>;
  readonly clock: Clock;
  readonly config: Pick<Config, 'projectionWaitMs' | 'imageUrlTtlMs'>;
};

type Kept = StoredImageFile & { data: Buffer };

/** Largest image accepted from a provider. */
const MAX_IMAGE_BYTES = 50 * 1024 * 1024;

/** The bytes of one image a provider returned, inline (b64_json) or by link. */
async function imageBytes(item: ImageData, signal: AbortSignal): Promise<Buffer> {
  if (typeof item.b64_json === 'string') return Buffer.from(item.b64_json, 'base64');
  if (typeof item.url !== 'string') throw new UpstreamError(502, 'the upstream returned an image without url or b64_json', 'invalid_image', 'protocol');
  let res;
  try {
    res = await httpRequest(item.url, { method: 'GET', headersTimeout: 30_000, bodyTimeout: 60_000, signal });
  } catch (err) {
    if ((err as { name?: string }).name === 'AbortError') throw err;
    throw new UpstreamError(0, `image download failed: ${(err as Error).message}`, 'upstream_unreachable', 'network');
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new UpstreamError(502, `image download answered HTTP ${res.statusCode}`, 'invalid_image', 'protocol');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > MAX_IMAGE_BYTES) throw new UpstreamError(502, 'the upstream image is too large', 'invalid_image', 'protocol');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * POST /v1/images/generations: freeze n images' worth (or the token estimate), generate, store
 * every image in the file store (served by expiring signed link), record the generation for the
 * gallery, then settle what actually came back. An upstream that returns fewer images than asked
 * is charged for those; one that returns none or fails releases the freeze (502, or its 4xx as 400).
 * A layered model's other layers are stored with their image and answered after it.
 */
export async function handleImageGeneration(deps: ImageGenerationDeps, ctx: GatewayContext): Promise<void> {
  const body = parseImageRequest(await readJson(ctx));
  const auth = authOf(ctx);
  const model = resolveModel(deps.catalog, auth, body.model, ['image']);
  const request = normalizeImageRequest(model, body, 'sync');
  const tokenBilled = imagePricing(model).billing === 'tokens';
  await metered(deps, ctx, { model, estimate: imageEstimate(model, request), router: deps.router }, async (charge) => {
    // The images the provider generated and bills, never more than asked (none is its failure),
    // from the first of the model's channels that answers (failover before any answer).
    const call = imageCall(model, request, 'b64_json');
    const { value: upstream } = await routedCall(deps, model, charge, (channel) => generateImages(channel, call, charge.signal));
    const items = upstream.images;

    const generationId = newId('igen');
    const images: (GeneratedImage & { data: Buffer; layerFiles: (Kept & { name: string })[] })[] = [];
    const keep = async (item: ImageData, key: string): Promise<Kept> => {
      const bytes = await imageBytes(item, charge.signal);
      const type = sniffImage(bytes);
      if (!type) throw new UpstreamError(502, 'the upstream returned an image that is neither PNG nor JPEG', 'invalid_image', 'protocol');
      const stored = await deps.files.put(`${key}${type.extension}`, Readable.from([bytes]));
      return { key: stored.key, contentType: type.contentType, bytes: stored.bytes, sha256: stored.sha256, data: bytes };
    };
    const tokens: ImageTokenUsage | null = tokenBilled ? tokenUsageOf(model, request, items.length, upstream.tokens) : null;
    const now = deps.clock();
    let appended;
    try {
      for (const [index, item] of items.entries()) {
        const id = `img_${generationId.slice(generationId.indexOf('_') + 1)}_${index}`;
        const image = { id, ...(await keep(item, `images/${auth.accountId}/${id}`)), layerFiles: [] as (Kept & { name: string })[] };
        images.push(image);
        if (!request.layered) continue;
        for (const layer of item.layers) image.layerFiles.push({ name: layer.name, ...(await keep(layer, `images/${auth.accountId}/${id}-${layer.name}`)) });
      }
      const fileRecord = ({ key, contentType, bytes, sha256 }: Kept): StoredImageFile => ({ key, contentType, bytes, sha256 });
      const event: ImagesGenerated = {
        type: IMAGES_GENERATED,
        data: {
          generationId,
          accountId: auth.accountId,
          model: model.id,
          prompt: request.prompt,
          size: request.size,
          images: images.map((image) => ({
            id: image.id,
            ...fileRecord(image),
            ...(image.layerFiles.length > 0 ? { layers: image.layerFiles.map((l) => ({ name: l.name, ...fileRecord(l) })) } : {}),
          })),
          at: now.toISOString(),
        },
      };
      appended = await recordFact(deps.store, generationStream(generationId), event, { expected: 'no_stream', metadata: { requestId: ctx.state.requestId } });
    } catch (err) {
      // Unrecorded, so never charged: nothing will link to these files (best-effort removal).
      await Promise.allSettled(images.flatMap((image) => [image, ...image.layerFiles]).map((file) => deps.files.delete(file.key)));
      throw err;
    }
    // Recorded first, then charged: every settlement names a generation the log holds. If the
    // settlement fails (or the process dies first), the freeze is released and the recorded
    // images stay in the gallery unpaid: a failure never leaves a charge for nothing.
    const settlement = imageSettlement(model, request, images.length, tokens);
    await charge.settle(settlement.pricing, { ...settlement.usage, generation_id: generationId });
    // Read your writes: a gallery read waits for the log head it can see, and an event committed a
    // moment ago stays out of sight while an older transaction is open (typically a projection
    // folding a settlement). So answer once the gallery has this generation (bounded by
    // PROJECTION_WAIT_MS; past that, answer anyway).
    await deps.progress.waitFor(appended.position, ['gallery'], deps.config.projectionWaitMs);
    const item = (file: Kept) => (request.response_format === 'b64_json' ? { b64_json: file.data.toString('base64') } : { url: deps.signer.url(file.key, deps.config.imageUrlTtlMs).url });
    ctx.body = {
      created: unixSeconds(now),
      // A layered model: each image (layer `base`), then its other layers; n and the bill count images.
      data: images.flatMap((image) =>
        request.layered ? [{ ...item(image), layer: BASE_LAYER }, ...image.layerFiles.map((l) => ({ ...item(l), layer: l.name }))] : [item(image)],
      ),
      ...(tokens ? { usage: tokens } : {}),
    };
  });
}
