import { ApiError } from '../http/errors';
import { validator } from '../http/validation';
import { clientUrlProblem } from '../http/urls';

/** How long a verification session (and its one-time verification_url) stays open. */
export const SESSION_VALIDITY_MS = 30 * 60_000;

/** The body of POST /v1/asset-groups/validate-session: a new group (optionally named) or one of the account's groups. */
export interface SessionRequestBody {
  group_id?: string;
  name?: string;
}

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const SESSION_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    group_id: { type: 'string', minLength: 1, maxLength: 64 },
    name: { type: 'string', minLength: 1, maxLength: 200 },
  },
  additionalProperties: false,
};
export const parseSessionRequest = validator<SessionRequestBody>(SESSION_REQUEST_SCHEMA);

/** The body of POST /v1/asset-groups/{group_id}/assets: one image. */
export interface AssetRequestBody {
  url: string;
}

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const ASSET_REQUEST_SCHEMA = {
  type: 'object',
  properties: { url: { type: 'string', minLength: 1, maxLength: 4096 } },
  required: ['url'],
  additionalProperties: false,
};
export const parseAssetRequest = validator<AssetRequestBody>(ASSET_REQUEST_SCHEMA);

/** What a verification session task keeps in its request. */
export interface SessionRequest {
  readonly group_id: string;
  readonly name: string | null;
  /** The provider's id of the group when it was verified before (a re-verification); null for a new one. */
  readonly upstream_group_id: string | null;
  /** The channel holding the group when it was verified before: a re-verification opens its session there only. */
  readonly upstream_channel?: string;
}

/** When a session (created at `createdAt`) expires. */
export function sessionExpiry(createdAt: string | Date): Date {
  return new Date(new Date(createdAt).getTime() + SESSION_VALIDITY_MS);
}

/** What an asset task keeps in its request. */
export interface AssetRequest {
  readonly group_id: string;
  readonly upstream_group_id: string;
  readonly url: string;
  /** The channel holding the group, the only one that can add an image to it; absent for a group verified before channels were recorded. */
  readonly upstream_channel?: string;
}

/**
 * An image the provider fetches: a publicly reachable https URL, by the address rule of every
 * client URL (src/http/public-address.ts) unless FILE_URL_ALLOW_PRIVATE_TARGETS. Inline data is
 * refused by name.
 */
export function checkImageUrl(value: string, options: { allowPrivateTargets: boolean }): string {
  const bad = (message: string) => new ApiError(400, 'invalid_image_url', message, { param: 'url' });
  if (/^\s*data:/i.test(value)) throw bad('url: inline base64 data URIs are not accepted; give a public https URL');
  const problem = clientUrlProblem(value, 'url', { httpsOnly: true, allowPrivateTargets: options.allowPrivateTargets });
  if (problem) throw bad(problem);
  return value;
}
