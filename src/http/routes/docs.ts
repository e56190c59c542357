import { createReadStream } from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import { buildOpenApiDocument } from '../../openapi/document';
import { ApiError } from '../errors';
import type { GatewayState } from '../context';

const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** The explorer's files, served from node_modules so /docs works offline (no CDN). */
const BUNDLE_FILES: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** Our initializer, in place of the package's (which points at the petstore); a file, not inline script. */
const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Gateway API</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css" />
    <link rel="stylesheet" type="text/css" href="/docs/index.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="/docs/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="/docs/swagger-initializer.js" charset="UTF-8"></script>
  </body>
</html>
`;

/** `GET /openapi.json` (the document of every route) and `GET /docs` (Swagger UI rendering it). */
export function docsRouter(): Router<GatewayState> {
  const document = JSON.stringify(buildOpenApiDocument());
  const router = new Router<GatewayState>({ sensitive: true });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = document;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/:file', (ctx) => {
    const file = ctx.params.file!;
    if (file === 'swagger-initializer.js') {
      ctx.type = 'text/javascript; charset=utf-8';
      ctx.body = INITIALIZER;
      return;
    }
    const type = BUNDLE_FILES[file];
    if (!type) throw new ApiError(404, 'not_found', `no file ${file} in the API explorer`);
    ctx.type = type;
    ctx.set('cache-control', 'public, max-age=3600');
    ctx.body = createReadStream(path.join(SWAGGER_UI_DIR, file));
  });
  return router;
}
