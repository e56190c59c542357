/**
 * Volcengine's OpenAPI (`?Action=…&Version=…`, signed requests): https://www.volcengine.com/docs/6369/67268
 * (common parameters and answers), https://www.volcengine.com/docs/6369/67269 (signature), common
 * errors https://www.volcengine.com/docs/6369/68677. Ark's asset library (service `ark`) and
 * VOD's subtitle erase (service `vod`) are served this way. Every answer carries
 * `ResponseMetadata`; a refusal its `Error: {Code, Message}`.
 */
import { credentialRefusal, forbiddenByProvider, retryAfterOf, unreadableErrorMessage, UpstreamError } from '../errors';
import type { Protocol } from '../protocol';
import type { WireAnswer } from '../wire';

/** Error codes that refuse the gateway's own credentials or signature (the operator's to mend). */
const CREDENTIAL_CODES = new Set(['MissingAuthenticationToken', 'InvalidAuthorization', 'InvalidAccessKey', 'InvalidCredential', 'SignatureDoesNotMatch', 'InvalidTimestamp', 'AccessDenied']);

/** `ResponseMetadata.Error` of an answer, or null when it reports none. */
export function openapiErrorIn(body: unknown): { code: string; message: string } | null {
  const metadata = body && typeof body === 'object' ? (body as { ResponseMetadata?: unknown }).ResponseMetadata : undefined;
  const error = metadata && typeof metadata === 'object' ? (metadata as { Error?: unknown }).Error : undefined;
  if (!error || typeof error !== 'object') return null;
  const { Code: code, Message: message } = error as { Code?: unknown; Message?: unknown };
  if (typeof code !== 'string' || code === '') return null;
  return { code, message: typeof message === 'string' ? message : code };
}

function volcengineErrorOf(answer: WireAnswer, channel: string): UpstreamError {
  let body: unknown;
  try {
    body = JSON.parse(answer.text());
  } catch {
    body = undefined;
  }
  const reported = openapiErrorIn(body);
  if (answer.status === 401 || (reported && CREDENTIAL_CODES.has(reported.code))) {
    return credentialRefusal(answer.status === 403 ? 403 : 401, channel);
  }
  if (answer.status === 403) return forbiddenByProvider(channel);
  const status = answer.status >= 400 ? answer.status : 502;
  if (reported) return new UpstreamError(status, reported.message, reported.code, 'http', retryAfterOf(answer.headers));
  return new UpstreamError(status, unreadableErrorMessage(answer.status, answer.headers, channel), null, 'http', retryAfterOf(answer.headers));
}

export const volcengineOpenapiProtocol: Protocol = {
  name: 'volcengine_openapi',
  reference: 'https://www.volcengine.com/docs/6369/67268',
  serves: ['asset_verification', 'subtitle_erase'],
  auth: ['volcengine'],
  simulatorPrefix: '/volcengine',
  errorOf: volcengineErrorOf,
};
