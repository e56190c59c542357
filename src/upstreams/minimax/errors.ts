/**
 * MiniMax's errors as the gateway's: one place for the provider's refusal bodies and codes.
 *
 * References:
 * - Video generation v2 (MiniMax-H3): https://platform.minimax.cn/docs/api-reference/video-generation
 *   (create `POST /v2/video_generation`): an HTTP error answers
 *   `{"type":"error","error":{"type","message","http_code"},"request_id"}` with the types
 *   bad_request_error 400, authorized_error 401, insufficient_balance_error 402,
 *   unprocessable_entity_error 422 (sensitive input), rate_limit_error 429, server_error 500.
 * - The platform's error codes (`base_resp.status_code`, the v1 APIs and the file API):
 *   https://platform.minimax.cn/docs/api-reference/errorcode (1002 rate limit, 1004 authentication,
 *   1008 insufficient balance, 1026 sensitive input, 1027 sensitive output, 2013 invalid parameters,
 *   2049 invalid API key). Some v2 answers carry a `base_resp` as well; both are read.
 */
import { credentialRefusal, forbiddenByProvider, retryAfterOf, UpstreamError } from '../errors';
import type { WireAnswer } from '../wire';

/** A MiniMax refusal as the gateway knows it: the HTTP status it stands for and the gateway's code. */
interface Kind {
  readonly status: number;
  readonly code: string;
}

const CREDENTIALS: Kind = { status: 401, code: 'upstream_auth_failed' };
/** The operator's account at MiniMax is out of money: the operator's to mend, like a refused key. */
const ACCOUNT_BALANCE: Kind = { status: 403, code: 'upstream_account_balance' };
const RATE_LIMITED: Kind = { status: 429, code: 'upstream_rate_limited' };
const REJECTED: Kind = { status: 400, code: 'upstream_rejected' };
const SENSITIVE_INPUT: Kind = { status: 422, code: 'input_sensitive_content' };
const SENSITIVE_OUTPUT: Kind = { status: 422, code: 'output_sensitive_content' };
const PROVIDER_FAILURE: Kind = { status: 502, code: 'upstream_error' };

/** v2's `error.type`. */
const BY_TYPE: Readonly<Record<string, Kind>> = {
  bad_request_error: REJECTED,
  authorized_error: CREDENTIALS,
  insufficient_balance_error: ACCOUNT_BALANCE,
  unprocessable_entity_error: SENSITIVE_INPUT,
  rate_limit_error: RATE_LIMITED,
  server_error: PROVIDER_FAILURE,
};

/** The platform's `base_resp.status_code` (and a failed task's `error.code`). */
const BY_CODE: Readonly<Record<number, Kind>> = {
  1002: RATE_LIMITED,
  1004: CREDENTIALS,
  1008: ACCOUNT_BALANCE,
  1026: SENSITIVE_INPUT,
  1027: SENSITIVE_OUTPUT,
  2013: REJECTED,
  2049: CREDENTIALS,
};

/** The gateway's code for a failed task's `error.code`: the sensitive-content codes by name, else `task_failed`. */
export function taskErrorCode(code: unknown): string {
  const kind = typeof code === 'number' || (typeof code === 'string' && /^\d+$/.test(code)) ? BY_CODE[Number(code)] : undefined;
  return kind === SENSITIVE_INPUT || kind === SENSITIVE_OUTPUT ? kind.code : 'task_failed';
}

/** A JSON object's members, or undefined for anything else: MiniMax's answers are read member by member. */
export function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The kind and message MiniMax reported in a body, or null when it reported none. */
function reported(body: unknown): { kind: Kind; message: string } | null {
  const error = record(record(body)?.['error']);
  if (error) {
    const type = typeof error['type'] === 'string' ? error['type'] : '';
    const message = typeof error['message'] === 'string' ? error['message'] : type;
    return { kind: BY_TYPE[type] ?? PROVIDER_FAILURE, message };
  }
  const base = record(record(body)?.['base_resp']);
  const code = base?.['status_code'];
  if (typeof code === 'number' && code !== 0) {
    const message = typeof base?.['status_msg'] === 'string' ? base['status_msg'] : `MiniMax status code ${code}`;
    return { kind: BY_CODE[code] ?? PROVIDER_FAILURE, message: `${message} (${code})` };
  }
  return null;
}

/** A refusal of the gateway's credentials never carries MiniMax's message, which may quote the key. */
function upstreamError(channel: string, kind: Kind, message: string, retryAfter: string | null, status = 0): UpstreamError {
  if (kind === CREDENTIALS) return credentialRefusal(status === 403 ? 403 : 401, channel);
  if (kind === ACCOUNT_BALANCE) return new UpstreamError(403, `channel ${channel}: the MiniMax account has no balance left`, kind.code);
  return new UpstreamError(kind.status, message, kind.code, 'http', retryAfter);
}

/** The body as JSON, or undefined when it is empty or not JSON (an error answer may be either). */
function jsonOf(answer: WireAnswer): unknown {
  try {
    return JSON.parse(answer.text());
  } catch {
    return undefined;
  }
}

/**
 * MiniMax's refusal in an answer, or null when the answer is a success: an HTTP error status, or
 * a 200 whose `base_resp.status_code` is not 0 (MiniMax's way to refuse on 200).
 */
export function minimaxRefusal(answer: WireAnswer, channel: string): UpstreamError | null {
  const found = reported(jsonOf(answer));
  const retryAfter = retryAfterOf(answer.headers);
  const status = answer.status;
  if (status >= 400) {
    if (!found && status === 403) return forbiddenByProvider(channel);
    const kind = found?.kind ?? (status === 401 ? CREDENTIALS : status === 429 ? RATE_LIMITED : status >= 500 ? PROVIDER_FAILURE : REJECTED);
    return upstreamError(channel, kind, found?.message ?? `MiniMax answered HTTP ${status}`, retryAfter, status);
  }
  return found ? upstreamError(channel, found.kind, found.message, retryAfter) : null;
}

/** The gateway's error for one of MiniMax's error answers (the protocol's one error mapping). */
export function minimaxErrorOf(answer: WireAnswer, channel: string): UpstreamError {
  return minimaxRefusal(answer, channel) ?? new UpstreamError(502, `channel ${channel}: MiniMax answered HTTP ${answer.status} without an error`, null, 'protocol');
}
