/**
 * A synchronous image generation that returned images: one event on its own stream
 * (`imagegen-<generationId>`), appended once the images are stored. Its money lives on the
 * account stream (reservation, settlement); this event is what the gallery folds. Async image
 * tasks reach the gallery through their task events instead (projections/gallery.ts).
 */
export const IMAGES_GENERATED = 'ImagesGenerated';

export interface StoredImageFile {
  /** File store key. */
  readonly key: string;
  readonly contentType: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface GeneratedImage extends StoredImageFile {
  /** Gallery id of the image. */
  readonly id: string;
  /** A layered model's other layers of this image, in the provider's order (not in the gallery). */
  readonly layers?: readonly (StoredImageFile & { readonly name: string })[];
}

export interface ImagesGenerated {
  readonly type: typeof IMAGES_GENERATED;
  readonly data: {
    readonly generationId: string;
    readonly accountId: string;
    readonly model: string;
    readonly prompt: string;
    readonly size: string;
    readonly images: readonly GeneratedImage[];
    readonly at: string;
  };
}

export function generationStream(generationId: string): string {
  return `imagegen-${generationId}`;
}
