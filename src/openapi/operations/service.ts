import type { OperationDocs } from '../types';

/** Public routes (the route guard answers 400 for bad text in a query): health, metrics and this documentation (src/http/routes/{health,metrics,docs}.ts). */
export const SERVICE_DOCS: OperationDocs = {
  'GET /healthz': {
    tag: 'service',
    summary: 'Liveness',
    responses: [{ status: 200, description: 'The process answers HTTP.', schema: 'Status', example: { status: 'ok' } }],
    errors: [400],
  },
  'GET /readyz': {
    tag: 'service',
    summary: 'Readiness',
    description: '503 while this gateway cannot serve (route traffic elsewhere); it recovers on its own.',
    responses: [
      { status: 200, description: 'Ready.', schema: 'Status', example: { status: 'ready' } },
      { status: 503, description: 'Not ready, with the reason.', schema: 'Status', example: { status: 'unavailable', reason: 'database unreachable' } },
    ],
    errors: [400],
  },
  'GET /metrics': {
    tag: 'service',
    summary: 'Prometheus metrics',
    description: 'With METRICS_TOKEN set, needs `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise); unset, it is open.',
    responses: [{ status: 200, description: 'Prometheus text format.', contentType: 'text/plain', schema: { type: 'string' } }],
    errors: [400, 401],
  },
  'GET /openapi.json': {
    tag: 'service',
    summary: 'This OpenAPI 3.1 document',
    responses: [{ status: 200, description: 'The document (identical to docs/openapi.json).', schema: { type: 'object' } }],
    errors: [400],
  },
  'GET /docs': {
    tag: 'service',
    summary: 'API explorer (Swagger UI, served offline)',
    responses: [{ status: 200, description: 'An HTML page rendering /openapi.json.', contentType: 'text/html', schema: { type: 'string' } }],
    errors: [400],
  },
  'GET /docs/:file': {
    tag: 'service',
    summary: 'A file of the API explorer',
    pathParams: { file: 'A Swagger UI bundle file (for example `swagger-ui-bundle.js`).' },
    responses: [{ status: 200, description: 'The file.', contentType: 'application/octet-stream', schema: { type: 'string' } }],
    errors: [400, 404],
  },
};
