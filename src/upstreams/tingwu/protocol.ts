/**
 * Alibaba Cloud Tingwu (通义听悟), OpenAPI version 2023-09-30, `https://tingwu.cn-beijing.aliyuncs.com`:
 * CreateTask https://help.aliyun.com/zh/tingwu/api-tingwu-2023-09-30-createtask, GetTaskInfo
 * https://help.aliyun.com/zh/tingwu/api-tingwu-2023-09-30-gettaskinfo, errors
 * https://help.aliyun.com/zh/tingwu/error-information-query. Requests carry Alibaba Cloud's ACS3
 * signature (src/upstreams/auth/acs3-signature.ts). Every answer is `{RequestId, Code, Message, Data}`,
 * `Code` "0" for success; a refusal is an HTTP error status whose body names Alibaba Cloud's or
 * Tingwu's `Code` (e.g. `SignatureDoesNotMatch`, `BRK.InvalidAppKey`) and `Message`.
 */
import { credentialRefusal, forbiddenByProvider, retryAfterOf, unreadableErrorMessage, UpstreamError } from '../errors';
import type { Protocol } from '../protocol';
import type { WireAnswer } from '../wire';

/**
 * Codes that refuse the gateway's own standing with Alibaba Cloud (the operator's to mend, never
 * the client's): the AccessKey or its signature (Alibaba Cloud's common codes, answered with 400,
 * 403 or 404 depending on the service), the RAM permissions, the clock the signature dates, and
 * Tingwu's project AppKey and service activation.
 */
const CREDENTIAL_CODES: ReadonlySet<string> = new Set([
  'InvalidAccessKeyId',
  'InvalidAccessKeyId.NotFound',
  'InvalidAccessKeyId.Inactive',
  'IncompleteSignature',
  'SignatureDoesNotMatch',
  'InvalidTimeStamp.Expired',
  'InvalidTimeStamp.Format',
  'Forbidden',
  'Forbidden.RAM',
  'Forbidden.AccessKeyDisabled',
  'BRK.InvalidAppKey',
  'BRK.InvalidService',
  'BRK.InvalidTenant',
  'BRK.ServiceLinkedRoleNotExist',
]);

/** Tingwu's codes for an account out of money or quota: the operator's, like a refused key. */
const ACCOUNT_CODES: ReadonlySet<string> = new Set(['BRK.OverdueTenant', 'BRK.OverdueService']);

/**
 * A nonce the provider saw before: the gateway draws a new one for every request, so only a resent
 * request meets it, and sent again it goes with a fresh one. Transient, never the client's refusal.
 */
const REPLAYED_NONCE = 'SignatureNonceUsed';

/** Alibaba Cloud answers flow control with 400 or 429 and a `Throttling…` code: retried, as a 429. */
const isThrottling = (code: string) => code === 'Throttling' || code.startsWith('Throttling.');

/** `Code` and `Message` of an answer's body, or null when it names no code. */
export function tingwuErrorIn(body: unknown): { code: string; message: string } | null {
  if (typeof body !== 'object' || body === null) return null;
  const { Code: code, Message: message } = body as { Code?: unknown; Message?: unknown };
  if (typeof code !== 'string' || code === '' || code === '0') return null;
  return { code, message: typeof message === 'string' && message !== '' ? message : code };
}

function bodyOf(answer: WireAnswer): unknown {
  try {
    return JSON.parse(answer.text());
  } catch {
    return undefined;
  }
}

/**
 * The gateway's error for one of Tingwu's error answers (or a 200 naming a code other than "0"):
 * a refusal of the gateway's standing is `upstream_auth_failed` (Alibaba Cloud's words, which may
 * quote the AccessKey id, are not passed on), an overdue account `upstream_account_balance`,
 * flow control a 429, a replayed nonce a 502 (sent again, it has a new one), any other code the
 * provider's refusal with its status (400 for a 200 that carries one), and an answer naming no
 * code its HTTP status and content type alone (its body, a proxy's page, is not passed on).
 */
function tingwuErrorOf(answer: WireAnswer, channel: string): UpstreamError {
  const reported = tingwuErrorIn(bodyOf(answer));
  const status = answer.status;
  if (status === 401 || (reported && CREDENTIAL_CODES.has(reported.code))) return credentialRefusal(status === 403 ? 403 : 401, channel);
  if (reported && ACCOUNT_CODES.has(reported.code)) return new UpstreamError(403, `channel ${channel}: the Tingwu account is overdue or over its quota (${reported.code})`, 'upstream_account_balance');
  if (status === 403) return forbiddenByProvider(channel);
  const retryAfter = retryAfterOf(answer.headers);
  if (reported && isThrottling(reported.code)) return new UpstreamError(429, reported.message, reported.code, 'http', retryAfter);
  if (reported?.code === REPLAYED_NONCE) return new UpstreamError(502, `channel ${channel}: Tingwu refused a signature nonce it had seen`, reported.code, 'http');
  const errorStatus = status >= 400 ? status : 400;
  if (reported) return new UpstreamError(errorStatus, reported.message, reported.code, 'http', retryAfter);
  return new UpstreamError(status >= 400 ? status : 502, unreadableErrorMessage(status, answer.headers, channel), null, 'http', retryAfter);
}

export const tingwuProtocol: Protocol = {
  name: 'tingwu',
  reference: 'https://help.aliyun.com/zh/tingwu/api-tingwu-2023-09-30-createtask',
  serves: ['minutes'],
  auth: ['acs3'],
  // The official SDK can only be pointed at a host (`endpoint`), never under a path: the simulated
  // Tingwu sits at the simulator's root, at its real paths (`/openapi/tingwu/v2/…`).
  simulatorPrefix: '',
  errorOf: tingwuErrorOf,
};
