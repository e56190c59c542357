/**
 * What every simulated Volcengine Ark API shares: its API-key authentication
 * (`Authorization: Bearer <key>`, the channels file's placeholder) and its error answers, `{"error": {"code", "message", "param",
 * "type"}}` with the `type` Ark gives each HTTP status. Reference: Ark error codes,
 * https://www.volcengine.com/docs/82379/1299023.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { HttpError, sendJson } from '../../http';
import type { ExtraRoute, SimContext } from '../../route';
import { hasAcceptedBearer } from '../credentials';

/** Ark's error `type` by HTTP status, as its error-code reference lists them. */
const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  429: 'TooManyRequests',
  500: 'InternalServiceError',
  503: 'ServiceUnavailable',
};

/** The code the simulated Ark gives a refusal of an HTTP status a `[sim:status=NNN]` directive asks for. */
export const ARK_STATUS_CODES: Readonly<Record<number, string>> = { 400: 'InvalidParameter', 404: 'InvalidEndpointOrModel.NotFound', 429: 'RateLimitExceeded.EndpointRPMExceeded' };

/** A request id in Ark's form (digits and hex), quoted in error messages and sent as `x-request-id`. */
function requestId(): string {
  return `${Date.now()}${randomBytes(12).toString('hex')}`;
}

/** Answers Ark's error body; the message ends with the request id, as Ark's messages do. */
export function sendArkError(res: ServerResponse, status: number, code: string, message: string, param = ''): void {
  const id = requestId();
  sendJson(res, status, { error: { code, message: `${message} Request id: ${id}`, param, type: ERROR_TYPES[status] ?? 'InternalServiceError' } }, { 'x-request-id': id });
}

/** Answers a JSON success with a request id header. */
export function sendArk(res: ServerResponse, body: unknown): void {
  sendJson(res, 200, body, { 'x-request-id': requestId() });
}

/** Whether the request carries a key of an Ark channel of the channels file; answers Ark's 401 when it does not. */
function authorized(ctx: SimContext): boolean {
  if (hasAcceptedBearer(ctx, 'ark')) return true;
  sendArkError(ctx.res, 401, 'AuthenticationError', 'The API key or AK/SK in the request is missing or invalid.');
  return false;
}

/**
 * A route of the simulated Ark, `path` relative to its base URL: authenticated first, and any
 * HttpError its handler throws answered in Ark's error shape (code `error.code`).
 */
export function arkRoute(method: 'GET' | 'POST' | 'DELETE', path: string, handler: (ctx: SimContext) => void | Promise<void>): ExtraRoute {
  return {
    method,
    path,
    // Read raw: a body that is not JSON is answered by Ark's error, not the simulator's.
    body: method === 'POST' ? 'raw' : 'none',
    handler: async (ctx) => {
      if (!authorized(ctx)) return;
      try {
        await handler(ctx);
      } catch (err) {
        if (!(err instanceof HttpError) || ctx.res.headersSent) throw err;
        sendArkError(ctx.res, err.status, err.code ?? 'InternalServiceError', err.message, err.param ?? '');
      }
    },
  };
}

/** The JSON object of a raw request body; Ark's 400 `InvalidParameter` when it is none. */
export function arkJsonBody(raw: Buffer | undefined): Record<string, unknown> {
  try {
    const body: unknown = JSON.parse(raw?.toString('utf8') ?? '');
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new HttpError(400, 'The request body is not a valid JSON object.', 'InvalidParameter');
}
