/**
 * MiniMax's API, `https://api.minimaxi.com/v1` (mainland) or `https://api.minimax.io/v1`:
 * https://platform.minimaxi.com/document/video_generation (video generation), errors
 * https://platform.minimaxi.com/document/error_code. Bearer authentication. MiniMax reports most
 * errors with HTTP 200 and `base_resp: {status_code, status_msg}`: baseRespError reads those.
 */
import { credentialRefusal, retryAfterOf, UpstreamError } from '../errors';
import type { Protocol } from '../protocol';
import type { WireAnswer } from '../wire';

/** The gateway's error for a MiniMax `base_resp` whose status_code is not 0, or null for success. */
export function baseRespError(body: unknown, channel: string, status = 200): UpstreamError | null {
  const baseResp = body && typeof body === 'object' ? (body as { base_resp?: unknown }).base_resp : undefined;
  if (!baseResp || typeof baseResp !== 'object') return null;
  const { status_code: code, status_msg: message } = baseResp as { status_code?: unknown; status_msg?: unknown };
  if (code === 0 || typeof code !== 'number') return null;
  const text = typeof message === 'string' && message !== '' ? message : `MiniMax status ${code}`;
  // 1004: authentication failed; 2049: invalid API key (error-code page).
  if (code === 1004 || code === 2049) return credentialRefusal(401, channel);
  // 1002: rate limited; 1039: token limit.
  if (code === 1002 || code === 1039) return new UpstreamError(429, text, `minimax_${code}`);
  // 1026/1027: sensitive input/output; 2013: invalid parameters.
  if (code === 1026 || code === 1027 || code === 2013) return new UpstreamError(400, text, `minimax_${code}`);
  return new UpstreamError(status >= 400 ? status : 502, text, `minimax_${code}`);
}

function minimaxErrorOf(answer: WireAnswer, channel: string): UpstreamError {
  if (answer.status === 401 || answer.status === 403) return credentialRefusal(answer.status, channel);
  let body: unknown;
  try {
    body = JSON.parse(answer.text());
  } catch {
    body = undefined;
  }
  const reported = baseRespError(body, channel, answer.status);
  if (reported) return reported;
  return new UpstreamError(answer.status, answer.text().slice(0, 500) || `upstream answered HTTP ${answer.status}`, null, 'http', retryAfterOf(answer.headers));
}

export const minimaxProtocol: Protocol = {
  name: 'minimax',
  reference: 'https://platform.minimaxi.com/document/video_generation',
  serves: ['video'],
  auth: ['bearer'],
  simulatorPrefix: '/minimax',
  errorOf: minimaxErrorOf,
};
