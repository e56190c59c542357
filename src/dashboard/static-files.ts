import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

export type Encoding = 'br' | 'gzip' | 'identity';

/** One file of the build as it is sent: its bytes in each encoding worth sending, and their ETags. */
export interface StaticFile {
  readonly variants: ReadonlyMap<Encoding, { readonly body: Buffer; readonly etag: string }>;
}

/** Below this, compression saves less than the header costs. */
const MIN_COMPRESSED_BYTES = 1024;

/**
 * Brotli's quality 9: the dashboard's JavaScript in about 80 ms of CPU, against 1.8 s for the
 * maximum (11), which would be only 8 % smaller; paid at the first request after each start.
 */
const BROTLI_QUALITY = 9;

/**
 * The dashboard's built files, read and compressed once per version of each file (its size and
 * modification time), never per request: the build is a few hashed assets and index.html, and a
 * rebuild under a running gateway is picked up by the next request. Concurrent first requests for
 * a file share one read.
 */
export class StaticFiles {
  private readonly files = new Map<string, { readonly version: string; readonly file: Promise<StaticFile> }>();

  get(file: string, version: string, compressible: boolean): Promise<StaticFile> {
    const cached = this.files.get(file);
    if (cached?.version === version) return cached.file;
    const loading = load(file, compressible);
    this.files.set(file, { version, file: loading });
    // A failed read is not remembered: the next request tries again.
    loading.catch(() => this.files.get(file)?.file === loading && this.files.delete(file));
    return loading;
  }
}

async function load(file: string, compressible: boolean): Promise<StaticFile> {
  const raw = await readFile(file);
  const tag = createHash('sha256').update(raw).digest('base64url').slice(0, 27);
  const variants = new Map<Encoding, { body: Buffer; etag: string }>([['identity', { body: raw, etag: `"${tag}"` }]]);
  if (compressible && raw.length >= MIN_COMPRESSED_BYTES) {
    const [br, gz] = await Promise.all([
      brotli(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length } }),
      gzipped(raw, { level: zlib.Z_BEST_COMPRESSION }),
    ]);
    variants.set('br', { body: br, etag: `"${tag}-br"` });
    variants.set('gzip', { body: gz, etag: `"${tag}-gz"` });
  }
  return { variants };
}

/**
 * The encoding to send, from Accept-Encoding (RFC 9110 §12.5.3): brotli when acceptable, else
 * gzip, else the bytes as they are. A coding with q=0 is refused; `*` stands for any coding not named.
 */
export function chooseEncoding(acceptEncoding: string | undefined, available: ReadonlySet<Encoding>): Encoding {
  const weights = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find((m) => m !== null);
    const weight = q ? Number(q[1]) : 1;
    weights.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const weight = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0;
  for (const coding of ['br', 'gzip'] as const) if (available.has(coding) && weight(coding) > 0) return coding;
  return 'identity';
}
