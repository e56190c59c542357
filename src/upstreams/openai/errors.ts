/**
 * The OpenAI protocol's error answers: https://platform.openai.com/docs/guides/error-codes/api-errors
 * (the body `{"error": {"message", "type", "param", "code"}}`). The OpenAI protocol is a relay
 * (docs/providers.md): its errors are read here, in one place.
 */
import { credentialRefusal, forbiddenByProvider, retryAfterOf, unreadableErrorMessage, UpstreamError } from '../errors';
import type { WireAnswer } from '../wire';

/** The gateway's error for an OpenAI-shaped error answer (status ≥ 400). */
export function openaiErrorOf(answer: WireAnswer, channel: string): UpstreamError {
  const status = answer.status;
  if (status === 401) return credentialRefusal(status, channel);
  // OpenAI refuses a key with 401; its 403s are the account's (a region it does not serve, a model
  // the project may not use). Not checked against the OpenAI-compatible providers this protocol relays.
  if (status === 403) return forbiddenByProvider(channel);
  const retryAfter = retryAfterOf(answer.headers);
  const text = answer.text();
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    const error = parsed.error;
    if (typeof error === 'string') return new UpstreamError(status, error, null, 'http', retryAfter);
    const reported = reportedError(error);
    if (reported) return new UpstreamError(status, reported.message, reported.code, 'http', retryAfter);
  } catch {
    // not JSON: not the provider's error format
  }
  return new UpstreamError(status, unreadableErrorMessage(status, answer.headers, channel), null, 'http', retryAfter);
}

/** The message and code of an OpenAI error object (`{message, code, …}`), or null when it has no message. */
function reportedError(error: unknown): { message: string; code: string | null } | null {
  if (typeof error !== 'object' || error === null) return null;
  const { message, code } = error as { message?: unknown; code?: unknown };
  return typeof message === 'string' ? { message, code: typeof code === 'string' ? code : null } : null;
}

/**
 * An error the provider sent inside a stream it had begun with 200 (chat's `data: {"error": {…}}`
 * item, Responses' `error` event): a failure of the provider, carrying its code and message.
 */
export function streamedError(error: unknown, channel: string): UpstreamError {
  const reported = reportedError(error);
  return new UpstreamError(502, reported?.message ?? `channel ${channel} sent an error in its stream`, reported?.code ?? null);
}
