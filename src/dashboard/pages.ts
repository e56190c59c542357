import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Next } from 'koa';
import type { GatewayContext } from '../http/context';
import { ApiError } from '../http/errors';
import { PACKAGE_ROOT } from '../package-root';
import { chooseEncoding, StaticFiles } from './static-files';

/** The SPA's build output (`npm run build:web`, run by `npm install`). */
export const DEFAULT_WEB_ROOT = path.join(PACKAGE_ROOT, 'web', 'dist');

/** Content types, and whether compressing pays (text does; PNG and WOFF2 are compressed already). */
const TYPES: Readonly<Record<string, { readonly type: string; readonly compressible: boolean }>> = {
  '.html': { type: 'text/html; charset=utf-8', compressible: true },
  '.js': { type: 'text/javascript; charset=utf-8', compressible: true },
  '.css': { type: 'text/css; charset=utf-8', compressible: true },
  '.svg': { type: 'image/svg+xml', compressible: true },
  '.png': { type: 'image/png', compressible: false },
  '.ico': { type: 'image/x-icon', compressible: true },
  '.json': { type: 'application/json', compressible: true },
  '.woff2': { type: 'font/woff2', compressible: false },
  '.txt': { type: 'text/plain; charset=utf-8', compressible: true },
};
const UNKNOWN_TYPE = { type: 'application/octet-stream', compressible: false };

/** Vite's output under /dashboard/assets/: each name carries a hash of the content, so a name never changes meaning. */
const HASHED_ASSETS = /^assets\//;

/** Shared by every gateway of the process (tests start many): a file's bytes are the same for each. */
const files = new StaticFiles();

/**
 * Everything from this origin; inline styles because the chart library positions with them;
 * images from anywhere, since gallery thumbnails come by signed links of PUBLIC_BASE_URL.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https: http:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

function isPage(pathname: string): boolean {
  // Any spelling of the API's prefix is the API's: a wrong case is a 404 there, never the app.
  if (/^\/dashboard\/api(\/|$)/i.test(pathname)) return false;
  return pathname === '/dashboard' || pathname.startsWith('/dashboard/');
}

/**
 * GET /dashboard and /dashboard/*: a built file when the path names one, otherwise index.html, so
 * the app's own routes load on refresh. The hashed assets are cached for a year; index.html is
 * revalidated on every load (no-cache, with an ETag), so a new build is seen at once. Text is sent
 * brotli- or gzip-compressed as Accept-Encoding allows, compressed once per file (StaticFiles).
 * No route of the API: nothing here needs a credential, and the API stays under /dashboard/api.
 */
export function dashboardPages(webRoot: string = DEFAULT_WEB_ROOT) {
  const root = path.resolve(webRoot);
  return async (ctx: GatewayContext, next: Next): Promise<void> => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !isPage(ctx.path)) return next();
    const index = path.join(root, 'index.html');
    if (!existsSync(index)) throw new ApiError(503, 'dashboard_not_built', 'the dashboard is not built: run `npm run build:web` (npm install runs it)');
    const relative = ctx.path.slice('/dashboard'.length).replace(/^\/+/, '');
    const candidate = path.resolve(root, relative);
    const inside = candidate.startsWith(root + path.sep);
    const named = inside && relative !== '' && existsSync(candidate) ? statSync(candidate) : null;
    const file = named?.isFile() ? candidate : index;
    const { mtimeMs, size } = named?.isFile() ? named : statSync(index);
    const kind = TYPES[path.extname(file)] ?? UNKNOWN_TYPE;
    const built = await files.get(file, `${size}:${mtimeMs}`, kind.compressible);
    const encoding = chooseEncoding(ctx.get('accept-encoding'), new Set(built.variants.keys()));
    const variant = built.variants.get(encoding)!;
    ctx.set('content-security-policy', CONTENT_SECURITY_POLICY);
    ctx.set('x-content-type-options', 'nosniff');
    ctx.set('referrer-policy', 'same-origin');
    ctx.set('cache-control', file !== index && HASHED_ASSETS.test(relative) ? 'public, max-age=31536000, immutable' : 'no-cache');
    // Every response of a compressible file depends on Accept-Encoding, the uncompressed one too.
    if (built.variants.size > 1) ctx.vary('accept-encoding');
    if (encoding !== 'identity') ctx.set('content-encoding', encoding);
    ctx.set('etag', variant.etag);
    ctx.type = kind.type;
    ctx.body = variant.body;
    if (ctx.fresh) ctx.status = 304;
  };
}
