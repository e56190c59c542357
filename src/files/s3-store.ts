import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Logger } from '../log';
import { contentTypeOf } from './content-types';
import { asReadable, BodyMeter, checkedKey, FileStoreUnavailableError, type FileStore, type StoredFile } from './store';

/** Where the S3 store keeps files: FILE_STORE=s3 and the S3_* settings (docs/configuration.md). */
export interface S3StoreSettings {
  readonly bucket: string;
  /** Unset: AWS S3 itself, found from the region. */
  readonly endpoint: string | undefined;
  readonly region: string;
  /** Unset: the SDK's own chain (AWS_* variables, a web identity, an instance role). */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
  /** Bucket in the path (`endpoint/bucket/key`) rather than the host name: MinIO, s3rver, most self-hosted stores. */
  readonly forcePathStyle: boolean;
  /** Prepended to every key ('' or segments ending in `/`), so one bucket can hold several deployments. */
  readonly keyPrefix: string;
  /** Size of each part of a multipart upload: what one upload holds in memory per part in flight. */
  readonly partBytes: number;
}

/** Parts of one upload sent at once: memory per upload is about (this + 1) × partBytes. */
const PARTS_IN_FLIGHT = 2;

/**
 * The FileStore on an S3-compatible bucket (AWS S3, Volcengine TOS, MinIO...), so that gateways
 * need no shared disk. A body smaller than one part is one PUT; a larger one is a multipart
 * upload, streamed part by part (never a whole file in memory) and aborted when the body fails or
 * runs past maxBytes. Either way the object appears whole or not at all, as S3 makes a PUT and a
 * completed multipart upload visible at once.
 */
export class S3FileStore implements FileStore {
  private readonly client: S3Client;

  constructor(
    private readonly settings: S3StoreSettings,
    private readonly logger: Logger,
  ) {
    this.client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      ...(settings.credentials ? { credentials: { ...settings.credentials } } : {}),
      forcePathStyle: settings.forcePathStyle,
      // Checksums only where S3 demands them: the SDK's default (a CRC32 trailer in aws-chunked
      // bodies) is refused or misread by several S3-compatible stores; the body's sha256 is ours.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: {
        connectionTimeout: 10_000,
        // Downloads hold a socket while the client reads: the SDK's default of 50 would queue
        // the 51st concurrent download behind the others.
        httpAgent: { keepAlive: true, maxSockets: 512 },
        httpsAgent: { keepAlive: true, maxSockets: 512 },
      },
    });
  }

  private objectKey(key: string): string {
    return this.settings.keyPrefix + checkedKey(key);
  }

  async put(key: string, body: AsyncIterable<Uint8Array> | Readable, options: { maxBytes?: number } = {}): Promise<StoredFile> {
    const objectKey = this.objectKey(key);
    const meter = new BodyMeter(options.maxBytes);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.settings.bucket, Key: objectKey, Body: meter, ContentType: contentTypeOf(key) },
      partSize: this.settings.partBytes,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    // The meter's errors (too large, a client gone mid-body) reach the upload as the end of its body.
    const feeding = pipeline(asReadable(body), meter).catch((err: unknown) => err);
    try {
      await upload.done();
    } catch (err) {
      // A body that failed (past the limit, a client gone) destroyed the meter with its error
      // before the upload saw it: that is the caller's answer (413, 400), whatever the upload or
      // its abort reported after. Otherwise the store failed.
      const bodyError = meter.tooLarge ?? meter.errored;
      // An upload that failed on its own stops reading: the body is ended here, or feeding never settles.
      meter.destroy();
      await feeding;
      throw bodyError ?? new FileStoreUnavailableError(err);
    }
    const fed = await feeding;
    if (fed instanceof Error) {
      // The body failed after its last byte reached the upload (rare): nothing may stay under the key.
      await this.delete(key).catch((err: unknown) => this.logger.warn({ err, key }, 'could not remove an object whose body failed'));
      throw meter.tooLarge ?? fed;
    }
    return meter.stored(key);
  }

  async open(key: string): Promise<Readable | null> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
      if (!(object.Body instanceof Readable)) throw new Error('the S3 client answered a body that is not a Node.js stream');
      return object.Body;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw new FileStoreUnavailableError(err);
    }
  }

  async stat(key: string): Promise<{ bytes: number } | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
      return { bytes: head.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw new FileStoreUnavailableError(err);
    }
  }

  async delete(key: string): Promise<void> {
    // S3 answers a delete of a missing key 204, as the local store ignores a missing file.
    const objectKey = this.objectKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: objectKey }));
    } catch (err) {
      throw new FileStoreUnavailableError(err);
    }
  }

  close(): void {
    this.client.destroy();
  }
}

/** A missing object: GetObject says NoSuchKey, HeadObject (no body to say it in) a bare 404. */
function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata.httpStatusCode === 404);
}
