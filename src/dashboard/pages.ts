import { createReadStream, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Next } from 'koa';
import type { GatewayContext } from '../http/context';
import { ApiError } from '../http/errors';
import { PACKAGE_ROOT } from '../package-root';

/** The SPA's build output (`npm run build:web`, run by `npm install`). */
export const DEFAULT_WEB_ROOT = path.join(PACKAGE_ROOT, 'web', 'dist');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

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
 * GET /dashboard and /dashboard/*: a built file when the path names one (hashed assets, cached
 * for a year), otherwise index.html, so the app's own routes load on refresh. No route of the
 * API: nothing here needs a credential, and the API stays under /dashboard/api.
 */
export function dashboardPages(webRoot: string = DEFAULT_WEB_ROOT) {
  const root = path.resolve(webRoot);
  return (ctx: GatewayContext, next: Next): Promise<void> | void => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !isPage(ctx.path)) return next();
    const index = path.join(root, 'index.html');
    if (!existsSync(index)) throw new ApiError(503, 'dashboard_not_built', 'the dashboard is not built: run `npm run build:web` (npm install runs it)');
    const relative = ctx.path.slice('/dashboard'.length).replace(/^\/+/, '');
    const candidate = path.resolve(root, relative);
    const inside = candidate.startsWith(root + path.sep);
    const file = inside && relative !== '' && existsSync(candidate) && statSync(candidate).isFile() ? candidate : index;
    ctx.set('content-security-policy', CONTENT_SECURITY_POLICY);
    ctx.set('x-content-type-options', 'nosniff');
    ctx.set('referrer-policy', 'same-origin');
    ctx.set('cache-control', file === index ? 'no-cache' : 'public, max-age=31536000, immutable');
    ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    ctx.body = createReadStream(file);
  };
}
