import type { Next } from 'koa';
import type { GatewayContext } from '../http/context';
import { ApiError } from '../http/errors';
import { isSafeText } from '../http/safe-text';
import { contentTypeOf } from './content-types';
import type { UrlSigner } from './signed-urls';
import type { FileStore } from './store';

const PREFIX = '/files/';

/** GET /files/<key>?expires=&sig=: stored files by signed, expiring link (no API key: the link is the credential). */
export function signedFiles(files: FileStore, signer: UrlSigner) {
  // Every request passes through: those it does not serve go on without an async function's promise.
  return (ctx: GatewayContext, next: Next): Promise<void> => {
    if (!ctx.path.startsWith(PREFIX) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    return serveSignedFile(ctx, files, signer);
  };
}

async function serveSignedFile(ctx: GatewayContext, files: FileStore, signer: UrlSigner): Promise<void> {
  const key = storedKeyOf(ctx.path.slice(PREFIX.length));
  if (key === null) throw new ApiError(404, 'file_not_found', 'no file has this name');
  const verdict = signer.verify(key, ctx.query.expires as string | undefined, ctx.query.sig as string | undefined);
  if (verdict === 'expired') throw new ApiError(403, 'link_expired', 'this download link has expired');
  if (verdict !== 'ok') throw new ApiError(403, 'invalid_signature', 'this download link is not valid');
  const stat = await files.stat(key);
  // A HEAD needs the size only: opening the object would start a download from the store for nothing.
  const body = stat && ctx.method === 'GET' ? await files.open(key) : null;
  if (!stat || (ctx.method === 'GET' && !body)) throw new ApiError(404, 'file_not_found', 'the file no longer exists');
  ctx.set('cache-control', 'private, max-age=300');
  ctx.type = contentTypeOf(key);
  ctx.status = 200;
  ctx.length = stat.bytes;
  if (body) ctx.body = body;
}

/** The store key a link names, or null when the path cannot name one (bad escapes, NUL...). */
function storedKeyOf(encoded: string): string | null {
  try {
    const key = encoded.split('/').map(decodeURIComponent).join('/');
    return isSafeText(key) ? key : null;
  } catch {
    return null;
  }
}
