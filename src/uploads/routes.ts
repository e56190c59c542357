import Router from '@koa/router';
import { authOf, type GatewayContext, type GatewayState } from '../http/context';
import { ApiError } from '../http/errors';
import { listBody, pageParams } from '../http/pagination';
import { FileTooLargeError, type StoredFile, type FileStore } from '../files/store';
import { contentTypeOf } from '../files/content-types';
import { newId } from '../ids';
import { uploadKey } from './events';
import { boundaryOf, MultipartError, readMultipart } from './multipart';
import type { UploadService } from './service';
import type { Config } from '../config';
import type { Clock } from '../feature-types';

/** What the upload endpoints use besides the upload service. */
export interface UploadRouteDeps {
  readonly files: Pick<FileStore, 'put' | 'delete' | 'open'>;
  readonly clock: Clock;
  readonly config: Pick<Config, 'uploadMaxBytes'>;
}

/** Purposes a file may be uploaded for: `minutes` (recordings for /v1/audio/minutes) and `user_data`. */
export const FILE_PURPOSES = ['minutes', 'user_data'] as const;

/** Multipart framing and the purpose field never need more than this beside the file itself. */
const FRAMING_ALLOWANCE = 64 * 1024;

function bad(message: string, param: string | null = null, code = 'invalid_request'): ApiError {
  return new ApiError(400, code, message, { param });
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, 'file_too_large', `the file exceeds the upload limit of ${maxBytes} bytes`, { param: 'file' });
}

/** The last path component, without control characters, at most 255 characters. */
function cleanFilename(raw: string): string {
  // eslint-disable-next-line no-control-regex
  const base = raw.split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  // By code points: cutting between the halves of a surrogate pair would leave text PostgreSQL refuses.
  return Array.from(base).slice(0, 255).join('');
}

async function readField(body: AsyncIterable<Buffer>, max: number, name: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) throw bad(`${name} is at most ${max} bytes`, name);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The upload: `multipart/form-data` with the fields `file` (one file) and `purpose`, streamed part
 * by part straight into the file store, which counts the bytes and stops at the cap (413). Nothing
 * is recorded unless the whole upload arrived and validated; a refused upload leaves no bytes.
 */
async function upload(deps: UploadRouteDeps, uploads: UploadService, ctx: GatewayContext): Promise<void> {
  const auth = authOf(ctx);
  const maxBytes = deps.config.uploadMaxBytes;
  const boundary = boundaryOf(ctx.get('content-type'));
  if (!boundary) throw new ApiError(415, 'unsupported_media_type', 'an upload is multipart/form-data with a boundary, carrying the fields file and purpose');
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > maxBytes + FRAMING_ALLOWANCE) {
    // Refused before reading: the connection closes rather than take in the body.
    ctx.set('connection', 'close');
    throw tooLarge(maxBytes);
  }
  const fileId = newId('file');
  let stored: StoredFile | null = null;
  let filename = '';
  let contentType = 'application/octet-stream';
  let purpose: string | null = null;
  try {
    for await (const part of readMultipart(ctx.req, boundary)) {
      if (part.name === 'file') {
        if (stored) throw bad('an upload carries exactly one file', 'file');
        filename = cleanFilename(part.filename ?? '');
        if (filename === '') throw bad('the file part needs a filename', 'file');
        contentType = part.contentType?.split(';')[0]!.trim() || 'application/octet-stream';
        stored = await deps.files.put(uploadKey(fileId, filename), part.body, { maxBytes });
      } else if (part.name === 'purpose') {
        purpose = (await readField(part.body, 64, 'purpose')).trim();
      } else {
        throw bad(`${part.name} is not a recognised field (file, purpose)`, part.name);
      }
    }
    if (!stored) throw bad('file is required', 'file');
    if (purpose === null) throw bad('purpose is required', 'purpose');
    if (!(FILE_PURPOSES as readonly string[]).includes(purpose)) throw bad(`purpose must be one of ${FILE_PURPOSES.join(', ')}`, 'purpose');
    if (stored.bytes === 0) throw bad('the file is empty', 'file');
  } catch (err) {
    if (stored) await deps.files.delete(stored.key);
    // Whatever of the body is left unread is not worth reading.
    ctx.set('connection', 'close');
    if (err instanceof FileTooLargeError) throw tooLarge(maxBytes);
    if (err instanceof MultipartError) throw bad(`malformed multipart body: ${err.message}`, null, 'invalid_multipart');
    if (err instanceof ApiError) throw err;
    if ((err as { code?: string }).code === 'ECONNRESET' || (err as Error).message === 'aborted') throw bad('the upload was not completed', null, 'incomplete_body');
    throw err;
  }
  const row = await uploads.record(
    {
      fileId,
      accountId: auth.accountId,
      key: stored.key,
      bytes: stored.bytes,
      sha256: stored.sha256,
      filename,
      contentType,
      purpose,
      at: deps.clock().toISOString(),
    },
    ctx.state.requestId,
  );
  ctx.body = uploads.render(row);
}

/** POST /v1/files, GET /v1/files, GET /v1/files/{id}, GET /v1/files/{id}/content, DELETE /v1/files/{id}: the owner only. */
export function filesRouter(deps: UploadRouteDeps, uploads: UploadService): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/v1/files', sensitive: true });
  const notFound = (id: string) => new ApiError(404, 'file_not_found', `file ${id} not found`, { param: 'file_id' });

  router.post('/', (ctx) => upload(deps, uploads, ctx));

  router.get('/', async (ctx) => {
    const page = pageParams(ctx.query);
    const purpose = typeof ctx.query.purpose === 'string' && ctx.query.purpose !== '' ? ctx.query.purpose : null;
    const { rows, hasMore } = await uploads.list(authOf(ctx).accountId, page, purpose);
    ctx.body = listBody(rows.map((r) => uploads.render(r)), hasMore, (f) => String(f.id));
  });

  router.get('/:id', async (ctx) => {
    const row = await uploads.get(authOf(ctx).accountId, ctx.params.id!);
    if (!row) throw notFound(ctx.params.id!);
    ctx.body = uploads.render(row);
  });

  router.get('/:id/content', async (ctx) => {
    const row = await uploads.get(authOf(ctx).accountId, ctx.params.id!);
    const body = row ? await deps.files.open(row.key) : null;
    if (!row || !body) throw notFound(ctx.params.id!);
    ctx.type = row.content_type || contentTypeOf(row.key);
    ctx.length = Number(row.bytes);
    ctx.set('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(row.filename)}`);
    // The content type is the uploader's claim: never let a browser sniff it into something active.
    ctx.set('x-content-type-options', 'nosniff');
    ctx.body = body;
  });

  router.delete('/:id', async (ctx) => {
    if (!(await uploads.delete(authOf(ctx).accountId, ctx.params.id!, ctx.state.requestId))) throw notFound(ctx.params.id!);
    ctx.body = { id: ctx.params.id, object: 'file', deleted: true };
  });

  return router;
}
