import { isCredentialRefusal, UpstreamError } from '../upstreams/errors';
import { streamedError } from '../upstreams/openai/errors';
import { ChannelsBusyError } from '../upstreams/routing/router';
import { ApiError } from './errors';

/**
 * How a failed upstream call reaches the client: a provider's refusal of the request (4xx) is
 * passed through as a 400 with its message, its rate limit as a 429 with its Retry-After as it
 * sent it (the client's SDK waits as the provider asked; 1 second when it sent none), and anything
 * else (5xx, a timeout, no answer) as a 502. A refusal of the gateway's own credentials (isCredentialRefusal)
 * is the operator's to mend, not the client's: a 502 `upstream_auth_failed`, not the provider's
 * code (`invalid_api_key` would tell the client its own key is wrong). When every channel of the
 * model was cooling down or paused (ChannelsBusyError), nothing was sent: a 429
 * `rate_limit_exceeded` with the shortest wait left.
 */
export function upstreamToApiError(err: UpstreamError): ApiError {
  // Nothing was sent: the gateway's own rate limit answer, as for a key over its rate.
  if (err instanceof ChannelsBusyError) return new ApiError(429, 'rate_limit_exceeded', err.message, { headers: { 'retry-after': String(err.retryAfterSeconds) } });
  if (err.status === 429) return new ApiError(429, 'upstream_rate_limited', `upstream: ${err.message}`, { headers: { 'retry-after': err.retryAfter ?? '1' } });
  if (isCredentialRefusal(err)) return new ApiError(502, 'upstream_auth_failed', `upstream: ${err.message}`, { type: 'upstream_error' });
  if (err.status >= 400 && err.status < 500) return new ApiError(400, err.code ?? 'upstream_rejected', `upstream: ${err.message}`, { details: { upstream_status: err.status } });
  return new ApiError(502, err.code ?? 'upstream_error', `upstream: ${err.message}`, { type: 'upstream_error' });
}

export function isAbort(err: unknown): boolean {
  return (err as { name?: string } | null)?.name === 'AbortError' || (err as { code?: string } | null)?.code === 'UND_ERR_ABORTED';
}

export { streamedError, UpstreamError };
