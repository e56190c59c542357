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
}

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`file exceeds ${maxBytes} bytes`);
    this.name = 'FileTooLargeError';
  }
}

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/** The default store: files under DATA_DIR/files, streamed to a temporary name and renamed. */
export class LocalFileStore implements FileStore {
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`unsafe file key: ${key}`);
    return path.join(this.root, key);
  }

  async put(key: string, body: AsyncIterable<Uint8Array> | Readable, options: { maxBytes?: number } = {}): Promise<StoredFile> {
    const target = this.pathOf(key);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.${randomUUID()}.part`;
    const hash = createHash('sha256');
    let bytes = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        if (options.maxBytes !== undefined && bytes > options.maxBytes) return callback(new FileTooLargeError(options.maxBytes));
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    // The temporary file exists before any byte flows: a write stream that opened lazily could
    // create it after a failed upload had already been cleaned up, leaving a stray `.part`.
    const out = (await fs.promises.open(temp, 'wx')).createWriteStream();
    try {
      await pipeline(body instanceof Readable ? body : Readable.from(body), meter, out);
      await fs.promises.rename(temp, target);
    } catch (err) {
      // Only 'close': the stream's own 'error' is the one being thrown already.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
    return { key, bytes, sha256: hash.digest('hex') };
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
