import { SESSION_REQUEST_SCHEMA } from '../../dashboard/session-routes';
import type { OperationDocs } from '../types';

const SESSION_SCHEMA = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['account', 'operator'] },
    account_id: { type: 'string', description: 'Account sessions only.' },
    key_id: { type: 'string', description: 'The key the session was opened with; account sessions only.' },
    expires_at: { type: 'string', format: 'date-time' },
    csrf_token: { type: 'string', description: 'Send it as `X-CSRF-Token` on every state-changing dashboard request.' },
  },
  required: ['kind', 'expires_at', 'csrf_token'],
} as const;

const SESSION_EXAMPLE = { kind: 'account', account_id: 'acct_0190a1b2c3d4e5f6a7b8c9d0', key_id: 'key_0190a1b2c3d4e5f6a7b8c9d0', expires_at: '2026-11-02T00:00:00.000Z', csrf_token: 'kX1…' };

/**
 * The dashboard's session (src/dashboard/session-routes.ts). With a session cookie, every /v1
 * route is also served as /dashboard/api/v1/… (account sessions) and every /admin/v1 route as
 * /dashboard/api/admin/v1/… (operator sessions): the same operations, documented once, under
 * their API paths (docs/dashboard.md).
 */
export const DASHBOARD_DOCS: OperationDocs = {
  'POST /dashboard/api/session': {
    tag: 'dashboard',
    summary: 'Sign in to the dashboard',
    description:
      'Exchanges an API key (an account session) or the admin token (an operator session) for the `gw_dashboard` cookie: HttpOnly, SameSite=Strict, Path=/dashboard, Secure over https, 12 hours. Failed sign-ins count towards the address lockout (429).',
    body: { name: 'DashboardSessionRequest', schema: SESSION_REQUEST_SCHEMA, example: { secret: 'tr-…' } },
    responses: [{ status: 201, description: 'Signed in; the cookie is set.', schema: SESSION_SCHEMA, example: SESSION_EXAMPLE }],
    errors: [400, 401, 429],
  },
  'GET /dashboard/api/session': {
    tag: 'dashboard',
    summary: 'The current dashboard session',
    description:
      'With the session cookie: 200. Without any cookie: 204 (not signed in). 401 (and the cookie cleared) once the session was signed out, expired, its key revoked or expired, or (operator) the admin token changed.',
    responses: [
      { status: 200, description: 'The session.', schema: SESSION_SCHEMA, example: SESSION_EXAMPLE },
      { status: 204, description: 'No session cookie was sent.' },
    ],
    errors: [400, 401],
  },
  'GET /dashboard/api/playground/keys': {
    tag: 'dashboard',
    summary: 'The keys the playground may use for this session',
    description:
      'With an account session’s cookie: the live keys of its account that the playground (`POST /dashboard/api/playground/{key_id}/v1/…`) may act through for it, oldest first: the session’s own key, and, unless it has a budget, every key no wider than it (allowed models, budget, expiry, rate, tokens per minute), as for issuing a key. Any other is refused there with 403 `key_scope_exceeded`. An operator session, or none: 401 `invalid_session`.',
    responses: [{ status: 200, description: 'The keys (never their secrets), as `GET /v1/account/keys` shows them.', schema: 'List' }],
    errors: [400, 401],
  },
  'DELETE /dashboard/api/session': {
    tag: 'dashboard',
    summary: 'Sign out of the dashboard',
    description: 'With the session cookie and its `X-CSRF-Token` header (403 without). Ends the session everywhere and clears the cookie.',
    responses: [{ status: 204, description: 'Signed out.' }],
    errors: [400, 401, 403],
  },
};
