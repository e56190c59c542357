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
    // No deep links (a link inside each operation's toggle button nests interactive controls) and
    // the base layout (the standalone top bar's URL field has no label): both fail axe.
    deepLinking: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    // Swagger UI leaves its server picker unnamed for assistive technology.
    onComplete: function () {
      var servers = document.getElementById('servers');
      if (servers) servers.setAttribute('aria-label', 'Server');
    },
  });
};
`;

/**
 * Swagger UI's stock colours put white text on light method badges and buttons (below WCAG AA);
 * these darker shades keep its look and pass axe's contrast check (test/e2e/api-docs.test.ts).
 */
const CONTRAST_CSS = `.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1d5f99; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #17683f; }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #8a4b00; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #a4161a; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #0b6153; }
.swagger-ui .opblock.opblock-head .opblock-summary-method, .swagger-ui .opblock.opblock-options .opblock-summary-method { background: #5b3590; }
.swagger-ui .download-url-wrapper .download-url-button, .swagger-ui .btn.authorize, .swagger-ui .btn { color: #17683f; border-color: #17683f; }
.swagger-ui .download-url-wrapper .download-url-button { background: #17683f; color: #fff; }
.swagger-ui .info .title small pre, .swagger-ui .info .title small.version-stamp, .swagger-ui .info .title small { background: #4a4f57; color: #fff; }
.swagger-ui .info .url, .swagger-ui .info a, .swagger-ui .info .base-url { color: #2c3036; }
.swagger-ui .btn.authorize span { color: #17683f; }
.swagger-ui .json-schema-2020-12-expand-deep-button { color: #4a4f57; }
`;

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Gateway API</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css" />
    <link rel="stylesheet" type="text/css" href="/docs/index.css" />
    <link rel="stylesheet" type="text/css" href="/docs/contrast.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
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
    if (file === 'contrast.css') {
      ctx.type = 'text/css; charset=utf-8';
      ctx.body = CONTRAST_CSS;
      return;
    }
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
