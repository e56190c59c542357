import { ERROR_SCHEMAS, ERROR_STATUSES, errorExample, RESPONSE_SCHEMAS } from './components';
import { ROUTE_DOCS } from './registry';
import type { ErrorShape, OperationDoc, RouteKey, Schema, SuccessResponse } from './types';

/** Who may call a path, by its prefix (test/integration/routing.test.ts holds the routers to it). */
export function accessOfPath(path: string): 'public' | 'api_key' | 'admin' {
  if (path.startsWith('/admin/')) return 'admin';
  if (path.startsWith('/v1/')) return 'api_key';
  return 'public';
}

/** `/v1/files/:id` → `/v1/files/{id}`. */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/** The version of the /v1 API this document describes (not the package's release). */
export const API_VERSION = '1.0.0';

const SECURITY = { api_key: [{ apiKey: [] }], admin: [{ adminToken: [] }], public: [] } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function successResponse(doc: OperationDoc, response: SuccessResponse, first: boolean): object {
  const content: Record<string, object> = {};
  if (response.schema !== undefined) {
    const schema = typeof response.schema === 'string' ? ref(response.schema) : response.schema;
    content[response.contentType ?? 'application/json'] = { schema, ...(response.example === undefined ? {} : { example: response.example }) };
  }
  if (first && doc.stream) content['text/event-stream'] = { schema: { type: 'string', description: doc.stream } };
  return { description: response.description, ...(Object.keys(content).length ? { content } : {}) };
}

function operation(key: RouteKey, doc: OperationDoc): object {
  const path = key.slice(key.indexOf(' ') + 1);
  const access = accessOfPath(path);
  const names = [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
  const parameters: object[] = names.map((name) => {
    const description = doc.pathParams?.[name];
    if (!description) throw new Error(`${key}: describe the path parameter ${name}`);
    return { name, in: 'path', required: true, description, schema: { type: 'string' } };
  });
  for (const q of doc.query ?? []) parameters.push({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema });
  if (doc.idempotent) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'Repeating a request with the same key within 24 hours answers the first result without charging again.',
      schema: { type: 'string', maxLength: 255 },
    });
  }
  const responses: Record<string, object> = {};
  doc.responses.forEach((response, i) => (responses[String(response.status)] = successResponse(doc, response, i === 0)));
  const errorRef = `#/components/responses/${ERROR_SCHEMAS[doc.errorShape ?? 'openai'].name}`;
  for (const status of [...new Set(doc.errors)].sort((a, b) => a - b)) {
    if (!ERROR_STATUSES[status]) throw new Error(`${key}: no description for error status ${status}`);
    responses[String(status)] = { $ref: `${errorRef}${status}` };
  }
  let requestBody: object | undefined;
  if (doc.body) requestBody = { required: true, content: { 'application/json': { schema: ref(doc.body.name), example: doc.body.example } } };
  if (doc.multipart) requestBody = { required: true, content: { 'multipart/form-data': { schema: doc.multipart } } };
  return {
    operationId: operationId(key),
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    security: SECURITY[access],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

/** `POST /v1/audio/minutes/:id` → `post_v1_audio_minutes_id`: stable, unique, readable. */
function operationId(key: RouteKey): string {
  return key.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
}

/** The error responses each shape can give, one per status, shared by every operation. */
function errorResponses(): Record<string, object> {
  const out: Record<string, object> = {};
  const used = new Set(Object.values(ROUTE_DOCS).flatMap((doc) => doc!.errors.map((s) => `${doc!.errorShape ?? 'openai'} ${s}`)));
  for (const [shape, error] of Object.entries(ERROR_SCHEMAS) as [ErrorShape, { name: string }][]) {
    for (const [status, { description }] of Object.entries(ERROR_STATUSES)) {
      if (!used.has(`${shape} ${status}`)) continue;
      const example = errorExample(shape, Number(status));
      out[`${error.name}${status}`] = { description, content: { 'application/json': { schema: ref(error.name), example } } };
    }
  }
  return out;
}

/**
 * The OpenAPI 3.1 document of every route in ROUTE_DOCS. Deterministic (docs/openapi.json is
 * this, written by `npm run openapi:write`), so the served and checked-in documents are equal.
 */
export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, object>> = {};
  const bodies: Record<string, Schema> = {};
  for (const [key, doc] of Object.entries(ROUTE_DOCS) as [RouteKey, OperationDoc][]) {
    const [method, path] = key.split(' ') as [string, string];
    (paths[openApiPath(path)] ??= {})[method.toLowerCase()] = operation(key, doc);
    if (doc.body) {
      for (const [name, schema] of [[doc.body.name, doc.body.schema] as const, ...Object.entries(doc.body.components ?? {})]) {
        if ((bodies[name] && bodies[name] !== schema) || name in RESPONSE_SCHEMAS) throw new Error(`two schemas named ${name}`);
        bodies[name] = schema;
      }
    }
  }
  const tags = [...new Set(Object.values(ROUTE_DOCS).map((doc) => doc!.tag))].map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Media, Agent and Chat Gateway',
      version: API_VERSION,
      description: 'Prepaid HTTP gateway for AI media, agent and chat capabilities. Money is in integer minor units (CNY fen). See docs/api.md.',
    },
    servers: [{ url: '/' }],
    tags,
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (starts with `tr-`) as `Authorization: Bearer <API_KEY>`.' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The operator’s ADMIN_TOKEN as `Authorization: Bearer <ADMIN_TOKEN>`.' },
      },
      schemas: {
        ...Object.fromEntries(Object.values(ERROR_SCHEMAS).map((e) => [e.name, e.schema])),
        ...RESPONSE_SCHEMAS,
        ...bodies,
      },
      responses: errorResponses(),
    },
  };
}
