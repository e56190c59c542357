/**
 * Coze's errors, read in one place. Every Coze answer is an envelope `{code, msg, data, detail:
 * {logid}}` whose `code` is 0 on success and Coze's error code otherwise
 * (https://www.coze.cn/open/docs/developer_guides/coze_error_codes), whatever the HTTP status (the
 * official SDK, `@coze/api`, reads the code from a 200 as from any other status); a stream reports
 * a failure as `{code, msg}` in its `error` event, or as the chat's `last_error` when the chat fails.
 */
import { credentialRefusal, forbiddenByProvider, retryAfterOf, unreadableErrorMessage, UpstreamError } from '../errors';
import type { WireAnswer } from '../wire';

/** Coze's codes by what they mean for the gateway (the error code page; 5000 is Coze's internal error). */
const CREDENTIALS: Readonly<Record<number, 401 | 403>> = { 4100: 401, 4101: 403 };
/** The daily limit of a bot (4008), the system's load (4009), the account's RPM (4020): try later. */
const RATE_LIMITS = new Set([4008, 4009, 4020]);
/**
 * The operator's bot, model or account, not the client's request: an invalid or unpublished bot
 * (4006, 4015), an invalid model (4012), no balance or arrears (4011, 4019, 4022), a workflow not
 * configured (4021), a model error (4013, which the SDK reads as a rate limit and the error page as
 * the model service failing) and Coze's internal error (5000).
 */
const PROVIDER_SIDE = new Set([4006, 4011, 4012, 4013, 4015, 4019, 4021, 4022, 5000]);

/** The gateway's error for a Coze failure: its code (null when none was readable) and message, as the HTTP status came. */
export function cozeFailure(code: number | null, message: string | null, channel: string, httpStatus = 200, retryAfter: string | null = null): UpstreamError {
  const credentials = code === null ? undefined : CREDENTIALS[code];
  if (credentials || httpStatus === 401) return credentialRefusal(credentials ?? 401, channel);
  if (httpStatus === 403) return forbiddenByProvider(channel);
  const text = message ?? `channel ${channel}: Coze answered code ${code ?? 'none'} (HTTP ${httpStatus})`;
  const providerCode = code === null ? null : String(code);
  if (code !== null && RATE_LIMITS.has(code)) return new UpstreamError(429, text, providerCode, 'http', retryAfter);
  if (code !== null && PROVIDER_SIDE.has(code)) return new UpstreamError(502, text, providerCode);
  if (code !== null && code >= 4000 && code < 5000) return new UpstreamError(400, text, providerCode);
  if (httpStatus === 429) return new UpstreamError(429, text, providerCode, 'http', retryAfter);
  if (httpStatus >= 400 && httpStatus < 500) return new UpstreamError(400, text, providerCode);
  return new UpstreamError(502, text, providerCode);
}

/** The gateway's error for an answer that is not Coze's success (an error status, or a non-zero `code`). */
export function cozeErrorOf(answer: WireAnswer, channel: string): UpstreamError {
  let body: unknown;
  try {
    body = JSON.parse(answer.text());
  } catch {
    // Not Coze's envelope: its status and content type tell what little there is.
    return cozeFailure(null, unreadableErrorMessage(answer.status, answer.headers, channel), channel, answer.status, retryAfterOf(answer.headers));
  }
  const { code, msg } = errorFields(body);
  return cozeFailure(code, msg, channel, answer.status, retryAfterOf(answer.headers));
}

export function errorFields(value: unknown): { code: number | null; msg: string | null } {
  const { code, msg } = (typeof value === 'object' && value !== null ? value : {}) as { code?: unknown; msg?: unknown };
  return { code: typeof code === 'number' && Number.isInteger(code) ? code : null, msg: typeof msg === 'string' && msg !== '' ? msg : null };
}
