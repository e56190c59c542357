import type { Context, Next } from 'koa';
import { isDatabaseUnavailable } from '../db/unavailable';
import { FileStoreUnavailableError } from '../files/store';
import { DomainError } from '../domain/decider';
import { ReadModelBehindError } from '../projections-runtime/progress';

/**
 * An error answered to the client. Endpoints render it in their documented shape:
 * - `openai` (default): {error: {message, type, param, code}}
 * - `risk` (shape A): {error: {message, code}, request_id}
 * - `minutes` (shape B): {error: message, type}
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly options: { param?: string | null; type?: string; headers?: Record<string, string>; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type ErrorShape = 'openai' | 'risk' | 'minutes';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_balance',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  502: 'upstream_error',
  503: 'service_unavailable',
};

/**
 * The one table from a domain error's code to its HTTP status. Domain code (deciders, services,
 * the task engine) raises DomainError with a code and knows nothing of HTTP; this table decides
 * how each code is answered. A code missing here is a refused request: 400.
 */
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  invalid_amount: 400,
  refund_not_allowed: 400,
  refund_exceeds_charge: 400,
  invalid_idempotency_key: 400,
  idempotency_key_reused: 400,
  /** A file_url the gateway itself issued that cannot be used any more (expired, deleted). */
  invalid_request: 400,
  no_callback: 400,
  task_not_finished: 400,
  insufficient_balance: 402,
  key_budget_exceeded: 402,
  key_scope_exceeded: 403,
  account_not_found: 404,
  key_not_found: 404,
  reservation_not_found: 404,
  task_not_found: 404,
  channel_not_found: 404,
  credit_reference_conflict: 409,
  refund_reference_conflict: 409,
  reservation_exists: 409,
  account_exists: 409,
  channel_exists: 409,
  /** A catalog model names the channel: deleting it would leave the model unserved. */
  channel_in_use: 409,
  /** A channel's credentials are sealed under a key this process lacks (CHANNEL_SECRETS_PREVIOUS_KEYS). */
  credentials_unreadable: 409,
  /** Only an unfinished task can be cancelled. */
  task_finished: 409,
  /** An earlier request with the same Idempotency-Key is still being processed. */
  idempotent_request_in_progress: 429,
};

/** Headers a status or code is answered with. */
function headersFor(code: string, status: number, details: Record<string, unknown>): Record<string, string> {
  // SDKs retry some statuses; a short balance will not fix itself.
  if (status === 402) return { 'x-should-retry': 'false' };
  // The seconds left on the lease of the request that holds the key (src/tasks/idempotency.ts).
  if (code === 'idempotent_request_in_progress') return { 'retry-after': String(typeof details.retryAfterSeconds === 'number' ? details.retryAfterSeconds : 1) };
  return {};
}

/**
 * How long a client waits before it tries again while the database is unreachable: about the
 * interval at which a load balancer polls /readyz, which says when this gateway serves again.
 */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * The answer to any request that needed the database while it could not be reached: a failure
 * of the service, not of the request, so 503 with Retry-After in the endpoint's own shape. The
 * driver's text stays in the log (it names hosts and ports).
 */
export function databaseUnavailable(): ApiError {
  return new ApiError(503, 'database_unavailable', 'the service cannot reach its database right now; retry after the time in Retry-After', {
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
  });
}

export function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof DomainError) {
    const status = STATUS_BY_CODE[err.code] ?? 400;
    // `param` names the request field the refusal is about, when the domain knows it.
    const param = typeof err.details.param === 'string' ? err.details.param : undefined;
    return new ApiError(status, err.code, err.message, { headers: headersFor(err.code, status, err.details), details: err.details, ...(param ? { param } : {}) });
  }
  if (err instanceof ReadModelBehindError) {
    return new ApiError(503, 'read_model_behind', err.message, { headers: { 'retry-after': '1' } });
  }
  if (isDatabaseUnavailable(err)) return databaseUnavailable();
  if (err instanceof FileStoreUnavailableError) {
    return new ApiError(503, 'file_store_unavailable', 'the service cannot reach its file store right now; retry later', { headers: { 'retry-after': '5' } });
  }
  return null;
}

/** Shape B `type` by status, for the statuses the spec lists beyond 400 and 401. */
const SHAPE_B_TYPES: Readonly<Record<number, string>> = {
  402: 'insufficient_balance_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  502: 'upstream_error',
  503: 'service_unavailable',
};

export function renderError(ctx: Context, error: ApiError): void {
  const shape: ErrorShape = (ctx.state.errorShape as ErrorShape | undefined) ?? 'openai';
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.options.headers ?? {})) ctx.set(name, value);
  const requestId = String(ctx.state.requestId ?? '');
  if (shape === 'risk') {
    ctx.body = { error: { message: error.message, code: error.code }, request_id: requestId };
  } else if (shape === 'minutes') {
    ctx.body = { error: error.message, type: error.status === 401 ? 'auth_error' : (error.options.type ?? SHAPE_B_TYPES[error.status] ?? 'invalid_request_error') };
  } else {
    ctx.body = {
      error: {
        message: error.message,
        type: error.options.type ?? TYPE_BY_STATUS[error.status] ?? 'api_error',
        param: error.options.param ?? null,
        code: error.code,
      },
    };
  }
}

/** Renders ApiError and DomainError; anything else is a 500 without internals in the body. */
export async function errorMiddleware(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
    if (ctx.body === undefined || ctx.body === null) refuseUnrouted(ctx);
  } catch (err) {
    const apiError = toApiError(err);
    if (apiError) {
      if (apiError.code === 'database_unavailable') ctx.state.logger?.warn({ err }, 'database unreachable: answered 503');
      if (apiError.code === 'file_store_unavailable') ctx.state.logger?.error({ err }, 'file store unreachable: answered 503');
      renderError(ctx, apiError);
      return;
    }
    ctx.state.logger?.error({ err }, 'unhandled error');
    renderError(ctx, new ApiError(500, 'internal_error', 'internal error', { type: 'api_error' }));
  }
}

/**
 * The router answers an unknown path with an empty 404 and a known path with another method with
 * an empty 405 (or 501 for a method it does not know at all); these become errors in the
 * endpoint's shape. The router's Allow header stays.
 */
function refuseUnrouted(ctx: Context): void {
  const where = `${ctx.method} ${ctx.path.replace(/[^\x20-\x7e]/g, '\uFFFD')}`;
  if (ctx.status === 404) throw new ApiError(404, 'not_found', `no route for ${where}`);
  if (ctx.status === 405 || ctx.status === 501) throw new ApiError(405, 'method_not_allowed', `method not allowed: ${where}`);
}
