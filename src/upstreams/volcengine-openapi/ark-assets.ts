/**
 * Ark's asset library and its real-person verification, Actions of the `ark` service of the
 * Volcengine OpenAPI at Version 2024-01-01 (signed with the `ark` service name; the host is
 * `https://ark.cn-beijing.volcengineapi.com`).
 *
 * References: Ark's private asset library https://www.volcengine.com/docs/82379/2333601 (CreateAsset
 * `{GroupId, URL, AssetType: "Image"}` → `{Id}`, GetAsset `{Id}` → `{Status: Processing | Active |
 * Failed, Error: {Code, Message}}`), as QuantumNous/new-api calls them
 * (relay/channel/task/doubao/virtual_portrait.go); the real-person verification
 * CreateVisualValidateSession `{CallbackURL}` → `{BytedToken, H5Link}` and GetVisualValidateResult
 * `{BytedToken}` → `{GroupId}`, whose answers resellers publish verbatim
 * (https://docs.easyrouter.io/en/docs/api/management/visual-validate/get-session). What none of
 * these settles is listed in docs/providers.md as not checked against the provider.
 */
import { UpstreamError } from '../errors';
import type { WireAnswer, WireRequest } from '../wire';
import { actionRequest, resultOf, stringField } from './envelope';

export const ARK_OPENAPI_VERSION = '2024-01-01';
/** The service name a request to these Actions is signed for. */
export const ARK_OPENAPI_SERVICE = 'ark';

/** Opens a verification session: the provider's page where the person consents and passes a liveness check. */
export function createValidateSessionRequest(): WireRequest {
  return actionRequest('CreateVisualValidateSession', ARK_OPENAPI_VERSION, {});
}

export interface ValidateSession {
  /** The provider's one-time token of the session, which its result is read by. */
  readonly token: string;
  /** The page the person opens. */
  readonly pageUrl: string;
}

export function readValidateSession(answer: WireAnswer, channel: string): ValidateSession {
  const result = resultOf(answer, channel);
  const token = stringField(result, 'BytedToken');
  const pageUrl = stringField(result, 'H5Link');
  if (!token || !pageUrl) throw new UpstreamError(502, `channel ${channel} opened a verification session without BytedToken and H5Link`, null, 'protocol');
  return { token, pageUrl };
}

export function validateResultRequest(token: string): WireRequest {
  return actionRequest('GetVisualValidateResult', ARK_OPENAPI_VERSION, { BytedToken: token });
}

/**
 * A session's outcome: the asset group the verified person's images go to, or not yet one. A
 * person who failed or declined is the provider's refusal (an UpstreamError with its Code).
 */
export type ValidateResult = { readonly state: 'pending' } | { readonly state: 'verified'; readonly groupId: string };

export function readValidateResult(answer: WireAnswer, channel: string): ValidateResult {
  const groupId = stringField(resultOf(answer, channel), 'GroupId');
  return groupId ? { state: 'verified', groupId } : { state: 'pending' };
}

/** Adds one image, by its public URL, to a verified person's group. */
export function createAssetRequest(input: { readonly groupId: string; readonly url: string }): WireRequest {
  return actionRequest('CreateAsset', ARK_OPENAPI_VERSION, { GroupId: input.groupId, URL: input.url, AssetType: 'Image' });
}

/** The provider's id of the asset it took. */
export function readCreatedAsset(answer: WireAnswer, channel: string): string {
  const id = stringField(resultOf(answer, channel), 'Id');
  if (!id) throw new UpstreamError(502, `channel ${channel} created an asset without an Id`, null, 'protocol');
  return id;
}

export function getAssetRequest(id: string): WireRequest {
  return actionRequest('GetAsset', ARK_OPENAPI_VERSION, { Id: id });
}

export type ProviderAsset =
  | { readonly status: 'processing' | 'active' }
  | { readonly status: 'failed'; readonly error: { readonly code: string; readonly message: string } };

/**
 * An asset's state: `Processing`, `Active` (usable as `asset://<Id>`), or `Failed` with its Error;
 * `Inactive`, which one reseller lists beside `Active`, cannot be used either and reads as failed.
 */
export function readAsset(answer: WireAnswer, channel: string): ProviderAsset {
  const result = resultOf(answer, channel);
  const status = stringField(result, 'Status');
  if (status === 'Processing') return { status: 'processing' };
  if (status === 'Active') return { status: 'active' };
  if (status === 'Failed' || status === 'Inactive') {
    const error = result.Error as { Code?: unknown; Message?: unknown } | undefined;
    return {
      status: 'failed',
      error: {
        code: typeof error?.Code === 'string' ? error.Code : status === 'Inactive' ? 'asset_inactive' : 'asset_processing_failed',
        message: typeof error?.Message === 'string' ? error.Message : 'the provider could not process the image',
      },
    };
  }
  throw new UpstreamError(502, `channel ${channel} answered an asset status it does not document: ${String(status)}`, null, 'protocol');
}
