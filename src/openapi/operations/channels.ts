import { CREATE_CHANNEL_SCHEMA, PATCH_CHANNEL_SCHEMA } from '../../channels/routes';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS, PAGE_QUERY } from './common';

const CHANNEL_NAME = 'The channel’s name (its id: the catalog names channels by it).';
const CHANNEL = { type: 'object', description: 'A channel: settings, `auth_kind`, `credentials_key_id`, `credentials_rotated_at`, `enabled`, `health` (this process’s router: state, until, reason, consecutive failures, last latency), `recent_calls` (this process’s calls to it over the last 15 minutes: `window_seconds`, `calls`, `errors`, `client_errors`, `error_rate`, `latency_ms` `{mean, max}`); never any part of a credential.' } as const;

/** Channels managed at run time, behind ADMIN_TOKEN (src/channels/routes.ts; docs/operations.md). */
export const CHANNEL_DOCS: OperationDocs = {
  'POST /admin/v1/channels': {
    tag: 'admin',
    summary: 'Create a channel (an entry in CHANNELS’ format, checked as CHANNELS is)',
    body: {
      name: 'CreateChannelRequest',
      schema: CREATE_CHANNEL_SCHEMA,
      example: { name: 'openai-backup', protocol: 'openai', base_url: 'https://api.openai.com/v1', api_key: 'sk-…', timeout_ms: 60000, max_concurrency: 64 },
    },
    responses: [{ status: 201, description: 'The channel, without its credentials.', schema: CHANNEL }],
    errors: [...GUARD_ERRORS, 409],
  },
  'GET /admin/v1/channels': {
    tag: 'admin',
    summary: 'Channels, in name order',
    query: [...PAGE_QUERY],
    responses: [{ status: 200, description: 'A page of channels.', schema: 'List' }],
    errors: [...GUARD_ERRORS],
  },
  'POST /admin/v1/channels/re-encrypt': {
    tag: 'admin',
    summary: 'Seal every channel’s current credentials again under CHANNEL_SECRETS_KEY (a step of its rotation)',
    responses: [{ status: 200, description: 'The channels sealed again, and those whose credentials no key of this process opens.', schema: { type: 'object' } }],
    errors: [...GUARD_ERRORS],
  },
  'GET /admin/v1/channels/:id': {
    tag: 'admin',
    summary: 'A channel',
    pathParams: { id: CHANNEL_NAME },
    responses: [{ status: 200, description: 'The channel, without its credentials.', schema: CHANNEL }],
    errors: [...GUARD_ERRORS, 404],
  },
  'PATCH /admin/v1/channels/:id': {
    tag: 'admin',
    summary: 'Change a channel’s settings, rotate its credentials, enable or disable it',
    pathParams: { id: CHANNEL_NAME },
    body: { name: 'PatchChannelRequest', schema: PATCH_CHANNEL_SCHEMA, example: { api_key: 'sk-new-…' } },
    responses: [{ status: 200, description: 'The channel as changed.', schema: CHANNEL }],
    errors: [...GUARD_ERRORS, 404, 409],
  },
  'DELETE /admin/v1/channels/:id': {
    tag: 'admin',
    summary: 'Delete a channel no catalog model names (its history stays in the log)',
    pathParams: { id: CHANNEL_NAME },
    responses: [{ status: 200, description: 'The deletion.', schema: { type: 'object' } }],
    errors: [...GUARD_ERRORS, 404, 409],
  },
  'POST /admin/v1/channels/:id/test': {
    tag: 'admin',
    summary: 'One small call through the channel: outcome, status, latency',
    pathParams: { id: CHANNEL_NAME },
    responses: [{ status: 200, description: '`outcome`, `status`, `latency_ms`, `error` (the gateway’s words, never the provider’s).', schema: { type: 'object' } }],
    errors: [...GUARD_ERRORS, 404],
  },
  'GET /admin/v1/channels/:id/events': {
    tag: 'admin',
    summary: 'A channel’s history from the log: actor, time, type, fields changed; never a credential',
    pathParams: { id: CHANNEL_NAME },
    query: [...PAGE_QUERY],
    responses: [{ status: 200, description: 'A page of the channel’s events, oldest first (`after` is a revision).', schema: 'List' }],
    errors: [...GUARD_ERRORS, 404],
  },
};
