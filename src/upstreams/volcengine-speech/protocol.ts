/**
 * Volcengine's speech APIs (豆包语音) at `https://openspeech.bytedance.com/api/v3`: the big-model
 * recording file recognition, standard (submit, query) https://www.volcengine.com/docs/6561/1354868
 * and flash (one synchronous call) https://www.volcengine.com/docs/6561/1631584
 * (recording-recognition.ts). Authenticated by headers the channel carries (`X-Api-App-Key` and
 * `X-Api-Access-Key`, or the new console's `X-Api-Key`); the adapter adds the endpoint's
 * `X-Api-Resource-Id`.
 *
 * An answer's outcome is in its headers, not in its HTTP status: `X-Api-Status-Code` (20000000
 * done, 20000001 processing, 20000002 queued, 20000003 silent audio, 45xxxxxx the request's fault,
 * 55xxxxxx the service's) and `X-Api-Message`, with `X-Tt-Logid` for the provider's support.
 * errorOf reads the code first and the HTTP status only when the code tells nothing.
 */
import { credentialRefusal, forbiddenByProvider, retryAfterOf, UpstreamError } from '../errors';
import type { Protocol } from '../protocol';
import type { WireAnswer } from '../wire';

/** The reference's status codes the gateway tells apart. */
export const SPEECH_STATUS = {
  done: '20000000',
  processing: '20000001',
  queued: '20000002',
  silent: '20000003',
  invalidRequest: '45000001',
  busy: '55000031',
} as const;

/**
 * Codes that refuse the gateway's credentials or grants: 45000010 (a missing or invalid key) and
 * 45000030 (the resource, e.g. `volc.bigasr.auc_turbo`, not granted to the app). Neither is in the
 * recognition reference: open-source clients of these APIs report them (docs/providers.md).
 */
const CREDENTIAL_CODES: ReadonlySet<string> = new Set(['45000010', '45000030']);

/** The provider's outcome of one answer: its status code (null when it sent none) and message. */
export interface SpeechStatus {
  readonly code: string | null;
  readonly message: string;
  readonly logId: string | null;
}

function bodyMember(answer: WireAnswer, name: 'code' | 'message'): string | null {
  try {
    const body = JSON.parse(answer.text()) as unknown;
    const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
    return typeof value === 'string' || typeof value === 'number' ? String(value) : null;
  } catch {
    return null;
  }
}

/** The status of an answer: the headers' (the reference's place), else an error body's `code` and `message`. */
export function speechStatusOf(answer: WireAnswer): SpeechStatus {
  const header = answer.headers['x-api-status-code']?.trim();
  const code = header && /^\d+$/.test(header) ? header : (bodyMember(answer, 'code') ?? null);
  const message = answer.headers['x-api-message']?.trim() || bodyMember(answer, 'message') || (code ? `status code ${code}` : `HTTP ${answer.status}`);
  return { code, message, logId: answer.headers['x-tt-logid'] ?? null };
}

/**
 * The gateway's error for an answer that is not a success: a refused credential or grant is
 * `upstream_auth_failed` (the provider's words are not passed on), a 45xxxxxx code a refusal of the
 * request (400, the provider's code and message kept in the message), 55000031 (busy) and other
 * 55xxxxxx codes the provider's failure, retried; without a code, the HTTP status decides.
 */
export function volcengineSpeechErrorOf(answer: WireAnswer, channel: string): UpstreamError {
  const { code, message, logId } = speechStatusOf(answer);
  const status = answer.status;
  const retryAfter = retryAfterOf(answer.headers);
  const told = `${message} (${code ?? `HTTP ${status}`}${logId ? `, logid ${logId}` : ''})`;
  if ((code !== null && CREDENTIAL_CODES.has(code)) || status === 401) return credentialRefusal(status === 403 || code === '45000030' ? 403 : 401, channel);
  if (status === 403) return forbiddenByProvider(channel);
  if (status === 429) return new UpstreamError(429, told, 'upstream_rate_limited', 'http', retryAfter);
  if (code?.startsWith('45')) return new UpstreamError(400, told, 'upstream_rejected');
  if (code === SPEECH_STATUS.busy) return new UpstreamError(503, told, null, 'http', retryAfter);
  if (code?.startsWith('55') || status >= 500) return new UpstreamError(status >= 500 ? status : 502, told, null, 'http', retryAfter);
  if (status >= 400) return new UpstreamError(400, told, 'upstream_rejected');
  return new UpstreamError(502, `channel ${channel} answered with an unknown status: ${told}`, null, 'protocol');
}

export const volcengineSpeechProtocol: Protocol = {
  name: 'volcengine_speech',
  reference: 'https://www.volcengine.com/docs/6561/1354868',
  serves: ['minutes'],
  auth: ['headers'],
  simulatorPrefix: '/openspeech',
  errorOf: volcengineSpeechErrorOf,
};
