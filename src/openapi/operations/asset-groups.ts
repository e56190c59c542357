import { ASSET_REQUEST_SCHEMA, SESSION_REQUEST_SCHEMA } from '../../assets/request';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS, PAGE_QUERY } from './common';

const GROUP_ID = 'The asset group id.';

/** Verified real-person asset groups (src/assets/routes.ts). */
export const ASSET_GROUP_DOCS: OperationDocs = {
  'POST /v1/asset-groups/validate-session': {
    tag: 'asset groups',
    summary: 'Open a verification session (for a new or existing group)',
    body: { name: 'VerificationSessionRequest', schema: SESSION_REQUEST_SCHEMA, example: { name: 'Presenter' } },
    responses: [{ status: 200, description: 'The session, with the link the person completes.', schema: 'VerificationSession' }],
    errors: [...GUARD_ERRORS, 402, 404, 502],
  },
  'GET /v1/asset-groups/validate-session/:sessionId': {
    tag: 'asset groups',
    summary: 'A verification session',
    pathParams: { sessionId: 'The session id.' },
    responses: [{ status: 200, description: 'The session.', schema: 'VerificationSession' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'GET /v1/asset-groups/:groupId': {
    tag: 'asset groups',
    summary: 'An asset group',
    pathParams: { groupId: GROUP_ID },
    responses: [{ status: 200, description: 'The group.', schema: 'AssetGroup' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'POST /v1/asset-groups/:groupId/assets': {
    tag: 'asset groups',
    summary: 'Add an image to a verified group',
    description: 'Use the asset as `asset://<asset_id>` in video requests.',
    pathParams: { groupId: GROUP_ID },
    body: { name: 'AssetRequest', schema: ASSET_REQUEST_SCHEMA, example: { url: 'https://example.com/portrait.png' } },
    responses: [{ status: 200, description: 'The asset.', schema: 'Asset' }],
    errors: [...GUARD_ERRORS, 404, 409, 502],
  },
  'GET /v1/asset-groups/:groupId/assets': {
    tag: 'asset groups',
    summary: 'The assets of a group',
    pathParams: { groupId: GROUP_ID },
    query: PAGE_QUERY,
    responses: [{ status: 200, description: 'A page of assets.', schema: 'AssetList' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'GET /v1/asset-groups/:groupId/assets/:assetId': {
    tag: 'asset groups',
    summary: 'An asset',
    pathParams: { groupId: GROUP_ID, assetId: 'The asset id.' },
    responses: [{ status: 200, description: 'The asset.', schema: 'Asset' }],
    errors: [...GUARD_ERRORS, 404],
  },
};
