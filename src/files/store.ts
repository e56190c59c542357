import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface StoredFile {
  readonly key: string;
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * Where the gateway keeps the bytes it serves (archived videos, generated images, audio, uploads).
 * A port, so that an S3-compatible bucket can replace the local disk: keys are opaque relative
 * paths, writes are atomic (a reader never sees half a file).
 */
export interface FileStore {
  put(key: string, body: AsyncIterable<Uint8Array> | Readable, options?: { maxBytes?: number }): Promise<StoredFile>;
  /** The file's bytes; null when no file has the key (a key that names a directory names none). */
  open(key: string): Promise<Readable | null>;
  /** The file's size; null when no file has the key, as for open. */
  stat(key: string): Promise<{ bytes: number } | null>;
  delete(key: string): Promise<void>;
  /** Releases the store's connections, at shutdown. */
  close?(): void;
}

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`file exceeds ${maxBytes} bytes`);
    this.name = 'FileTooLargeError';
  }
}

/**
 * The store could not do what was asked (an object store unreachable, refusing the gateway's
 * keys, missing its bucket): the service's trouble, not the request's, answered 503. `cause` says
 * what happened, for the log.
 */
export class FileStoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the file store cannot be reached', { cause });
    this.name = 'FileStoreUnavailableError';
  }
}

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/** `key` when every store may use it: relative path segments of letters, digits, `.`, `_` and `-`, never `..`. */
export function checkedKey(key: string): string {
  if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`unsafe file key: ${key}`);
  return key;
}

export function asReadable(body: AsyncIterable<Uint8Array> | Readable): Readable {
  return body instanceof Readable ? body : Readable.from(body);
}

/**
 * The pass-through every store writes a body through: counts its bytes, refuses the first chunk
 * past `maxBytes` with FileTooLargeError (before it reaches the store), and hashes what passes.
 */
export class BodyMeter extends Transform {
  private readonly hash = createHash('sha256');
  private bytes = 0;
  /** Set once the body went past maxBytes, whatever error the store's own writer reports after. */
  tooLarge: FileTooLargeError | null = null;

  constructor(private readonly maxBytes: number | undefined) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null, chunk?: Buffer) => void): void {
    this.bytes += chunk.length;
    if (this.maxBytes !== undefined && this.bytes > this.maxBytes) {
      this.tooLarge = new FileTooLargeError(this.maxBytes);
      return callback(this.tooLarge);
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }

  /** The stored file's description, once the whole body went through. */
  stored(key: string): StoredFile {
    return { key, bytes: this.bytes, sha256: this.hash.digest('hex') };
  }
}

/** The default store: files under DATA_DIR/files, streamed to a temporary name and renamed. */
export class LocalFileStore implements FileStore {
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    return path.join(this.root, checkedKey(key));
  }

  async put(key: string, body: AsyncIterable<Uint8Array> | Readable, options: { maxBytes?: number } = {}): Promise<StoredFile> {
    const target = this.pathOf(key);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.${randomUUID()}.part`;
    const meter = new BodyMeter(options.maxBytes);
    // The temporary file exists before any byte flows: a write stream that opened lazily could
    // create it after a failed upload had already been cleaned up, leaving a stray `.part`.
    const out = (await fs.promises.open(temp, 'wx')).createWriteStream();
    try {
      await pipeline(asReadable(body), meter, out);
      await fs.promises.rename(temp, target);
    } catch (err) {
      // Only 'close': the stream's own 'error' is the one being thrown already.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
    return meter.stored(key);
  }

  // A key names a file, never a directory: keys are nested paths, so every prefix of one is a
  // directory here, and a read stream of a directory fails with EISDIR after its answer began.
  async open(key: string): Promise<Readable | null> {
    const file = this.pathOf(key);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file, 'r');
    } catch {
      return null;
    }
    if (!(await handle.stat()).isFile()) {
      await handle.close();
      return null;
    }
    return handle.createReadStream();
  }

  async stat(key: string): Promise<{ bytes: number } | null> {
    try {
      const stat = await fs.promises.stat(this.pathOf(key));
      return stat.isFile() ? { bytes: stat.size } : null;
    } catch {
      return null;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.promises.rm(this.pathOf(key), { force: true });
  }
}
