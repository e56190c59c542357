import fs from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import { expect } from 'chai';
import { accessOfPath, openApiPath } from '../../src/openapi/document';
import { CHECKED_IN_PATH } from '../../src/openapi/write';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';

type Operation = { security: { [scheme: string]: string[] }[]; requestBody?: unknown; responses: Record<string, { $ref?: string; content?: Record<string, { schema: { $ref?: string } }> }> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, object>; responses: Record<string, any> } };

const documented: Document = JSON.parse(fs.readFileSync(CHECKED_IN_PATH, 'utf8'));

/** The statuses the interface spec lists per endpoint group (binding). */
const SPEC_STATUSES: Record<string, number[]> = {
  'post /v1/videos/generations': [400, 401, 402, 413, 429, 502],
  'post /v1/audio/minutes': [400, 401, 402, 429, 502],
  'post /v1/chat/completions': [400, 401, 402, 429, 502],
  'post /v1/responses': [400, 401, 402, 429, 502],
  'post /v1/images/generations': [400, 401, 402, 429, 502],
  'post /v1/agent/chat/completions': [400, 401, 402, 502],
  'post /v1/agent/chat/completion': [400, 401, 402, 502],
  'post /v1/agents/chat/completions': [400, 401, 402, 502],
  'get /v1/audio/minutes/{id}': [401, 404],
  'get /v1/audio/podcasts/{taskId}': [401, 404, 429],
  'get /v1/videos/erase-subtitle/{taskId}': [401, 404, 429],
  'get /v1/images/async/{taskId}': [401, 404, 429],
};

function operations(): [string, string, Operation][] {
  return Object.entries(documented.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]): [string, string, Operation] => [method, path, op]));
}

function errorStatuses(op: Operation): number[] {
  return Object.keys(op.responses).map(Number).filter((s) => s >= 400 && op.responses[String(s)]!.$ref !== undefined);
}

/** The schema component an error status of an operation answers with. */
function errorSchema(op: Operation, status: number): object {
  const name = op.responses[String(status)]!.$ref!.split('/').pop()!;
  const ref = documented.components.responses[name].content['application/json'].schema.$ref as string;
  return documented.components.schemas[ref.split('/').pop()!]!;
}

describe('OpenAPI: /openapi.json and /docs against the routes the gateway serves @integration', () => {
  let gw: TestGateway;
  const ajv = new Ajv2020({ strict: false });
  before(async () => {
    gw = await startTestGateway({ AUTH_FAILURE_LIMIT: '0' });
  });
  after(async () => gw.close());

  it('documents every served route, and only served routes, with the credential each needs', () => {
    const served = gw.routes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`);
    const inDocument = operations().map(([method, path]) => `${method} ${path}`);
    expect(served.filter((key) => !inDocument.includes(key)), 'served but not documented (add them under src/openapi/operations/, see docs/api.md)').to.deep.equal([]);
    expect(inDocument.filter((key) => !served.includes(key)), 'documented but not served').to.deep.equal([]);
    const schemeOf = { public: [], api_key: ['apiKey'], admin: ['adminToken'] } as const;
    for (const route of gw.routes.filter((r) => r.method !== 'HEAD')) {
      const op = documented.paths[openApiPath(route.path)]![route.method.toLowerCase()]!;
      expect(accessOfPath(route.path), route.path).to.equal(route.access);
      expect(op.security.flatMap((s) => Object.keys(s)), `${route.method} ${route.path}`).to.deep.equal(schemeOf[route.access]);
    }
  });

  it('gives each endpoint group the error statuses the spec lists for it', () => {
    for (const [key, statuses] of Object.entries(SPEC_STATUSES)) {
      const [method, path] = key.split(' ') as [string, string];
      expect(errorStatuses(documented.paths[path]![method]!), key).to.deep.equal(statuses);
    }
  });

  it('serves the checked-in document at /openapi.json without a credential', async () => {
    const res = await fetch(`${gw.url}/openapi.json`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(await res.json()).to.deep.equal(documented);
  });

  it('answers a missing credential with 401 in the documented error shape of every protected route', async () => {
    for (const [method, path, op] of operations()) {
      if (op.security.length === 0) continue;
      const res = await gw.api(null, method.toUpperCase(), path.replace(/\{[^}]+\}/g, 'x1'), op.requestBody ? {} : undefined);
      const what = `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`;
      expect(res.status, what).to.equal(401);
      expect(errorStatuses(op), what).to.include(401);
      expect(ajv.validate(errorSchema(op, 401), res.body), `${what}: ${ajv.errorsText()}`).to.equal(true);
    }
  });

  it('answers an invalid body with 400 in the documented error shape, before any money moves', async () => {
    const { key } = await gw.fundedAccount(1_000_000);
    const before = await gw.balance(key);
    let checked = 0;
    for (const [method, path, op] of operations()) {
      const body = (op.requestBody as { content?: Record<string, unknown> } | undefined)?.content?.['application/json'];
      if (!body || path.includes('{')) continue;
      const auth = path.startsWith('/admin/') ? TEST_ADMIN_TOKEN : key;
      const res = await gw.api(auth, method.toUpperCase(), path, { not_a_field: true });
      const what = `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`;
      expect(res.status, what).to.equal(400);
      expect(ajv.validate(errorSchema(op, 400), res.body), `${what}: ${ajv.errorsText()}`).to.equal(true);
      checked++;
    }
    expect(checked).to.be.greaterThan(10);
    expect(await gw.balance(key)).to.deep.equal(before);
    await gw.expectAuditClean();
  });

  it('renders the document at /docs with Swagger UI from node_modules, no CDN', async () => {
    const page = await fetch(`${gw.url}/docs`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    const html = await page.text();
    expect(html).to.not.match(/(src|href)="(https?:)?\/\//);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).to.include.members(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/swagger-initializer.js']);
    for (const asset of assets) {
      const res = await fetch(`${gw.url}${asset}`);
      const text = await res.text();
      expect(res.status, asset).to.equal(200);
      expect(text.length, asset).to.be.greaterThan(100);
      if (asset.endsWith('.js')) expect(res.headers.get('content-type'), asset).to.match(/^text\/javascript/);
      if (asset.endsWith('.css')) expect(res.headers.get('content-type'), asset).to.match(/^text\/css/);
      if (asset.endsWith('bundle.js')) expect(text, asset).to.include('SwaggerUIBundle');
      if (asset.endsWith('initializer.js')) expect(text, asset).to.include("url: '/openapi.json'");
    }
    const missing = await gw.api(null, 'GET', '/docs/package.json');
    expect([missing.status, missing.body?.error?.code]).to.deep.equal([404, 'not_found']);
  });
});
