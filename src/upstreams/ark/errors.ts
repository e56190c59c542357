/**
 * Volcengine Ark's error answers as the gateway's UpstreamError: the one place Ark's error body is
 * read. Reference: Ark error codes, https://www.volcengine.com/docs/82379/1299023 (HTTP status,
 * `type`, `code`, `message` per error; the body is `{"error": {"code", "message", "param",
 * "type"}}`).
 */
import { UpstreamError } from '../channel';
import type { WireAnswer } from '../wire';

/** Ark's error object, as its error-code reference lists its members. */
interface ArkErrorObject {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly param?: unknown;
  readonly type?: unknown;
}

/** A header value that can be passed on as it came: printable ASCII, as HTTP allows. */
const PASSABLE_HEADER = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * The gateway's error for an Ark answer with an HTTP error status. A refusal of the gateway's key
 * (401 `AuthenticationError`, 403) carries the gateway's own message, never Ark's, which names the
 * request and may quote the key; every other error keeps Ark's code (e.g.
 * `InputImageSensitiveContentDetected.PrivacyInformation`, which the spec passes to the client)
 * and message, and Ark's Retry-After when it sent one (429 `RateLimitExceeded…`).
 */
export function arkError(answer: WireAnswer, channel: string): UpstreamError {
  const { status } = answer;
  if (status === 401 || status === 403) {
    return new UpstreamError(status, `channel ${channel}: the provider refused the gateway's credentials (HTTP ${status})`, 'upstream_auth_failed');
  }
  const retryAfter = answer.headers['retry-after'];
  const passedRetryAfter = retryAfter !== undefined && PASSABLE_HEADER.test(retryAfter) ? retryAfter : null;
  const error = errorObjectOf(answer);
  const message = typeof error?.message === 'string' && error.message !== '' ? error.message : `Ark answered HTTP ${status}`;
  const code = typeof error?.code === 'string' && error.code !== '' ? error.code : null;
  return new UpstreamError(status, message, code, 'http', passedRetryAfter);
}

/** The `error` object of an answer's JSON body, or null when the body has none. */
function errorObjectOf(answer: WireAnswer): ArkErrorObject | null {
  let body: unknown;
  try {
    body = JSON.parse(answer.text());
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null) return null;
  const error = (body as { error?: unknown }).error;
  return typeof error === 'object' && error !== null ? (error as ArkErrorObject) : null;
}
