import Router from '@koa/router';
import { hashApiKey, looksLikeApiKey } from '../accounts/api-keys';
import { readJson } from '../http/body';
import type { GatewayContext, GatewayState } from '../http/context';
import type { CredentialLockout } from '../http/credential-lockout';
import { ApiError } from '../http/errors';
import { admitKey, adminTokenMatcher } from '../http/middleware';
import { validator } from '../http/validation';
import { admitSession, SESSION_COOKIE, type SessionCheckDeps } from './session-credential';
import { csrfTokenOf, formatToken, SESSION_TTL_MS, type LiveSession, type SessionToken } from './sessions';

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const SESSION_REQUEST_SCHEMA = {
  type: 'object',
  properties: { secret: { type: 'string', minLength: 1, maxLength: 512, description: 'An API key of the account, or the admin token.' } },
  required: ['secret'],
  additionalProperties: false,
} as const;
const parseSessionRequest = validator<{ secret: string }>(SESSION_REQUEST_SCHEMA);

function sessionBody(session: LiveSession, token: SessionToken) {
  const opened = session.state.opened;
  return {
    kind: opened.kind,
    ...(opened.kind === 'account' ? { account_id: opened.accountId, key_id: opened.keyId } : {}),
    expires_at: opened.expiresAt,
    csrf_token: csrfTokenOf(token),
  };
}

/**
 * The cookie: HttpOnly (no script reads it), SameSite=Strict (no other site sends it), only under
 * /dashboard, Secure when the request came over https (directly or, with TRUST_PROXY_HOPS, as
 * the proxy's X-Forwarded-Proto says).
 */
function setCookie(ctx: GatewayContext, value: string, maxAgeSeconds: number): void {
  const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/dashboard', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict'];
  if (ctx.protocol === 'https') parts.push('Secure');
  ctx.set('set-cookie', parts.join('; '));
}

/**
 * POST/GET/DELETE /dashboard/api/session: exchanging an API key or the admin token for a session
 * cookie, reading the session (with its CSRF token), signing out. A failed sign-in counts against
 * the client address like any failed credential; a locked-out address is refused unchecked.
 */
export function sessionRouter(deps: SessionCheckDeps & { readonly lockout: CredentialLockout }): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/dashboard/api', sensitive: true });
  const isAdminToken = adminTokenMatcher(deps.adminToken);

  router.post('/session', async (ctx) => {
    const retryAfter = deps.lockout.retryAfterSeconds(ctx.ip);
    if (retryAfter !== null) {
      throw new ApiError(429, 'too_many_failed_credentials', `too many failed credentials from this address; retry after ${retryAfter} s`, {
        headers: { 'retry-after': String(retryAfter) },
      });
    }
    const { secret } = parseSessionRequest(await readJson(ctx));
    const metadata = { requestId: ctx.state.requestId, via: 'dashboard' };
    let opened;
    try {
      if (looksLikeApiKey(secret)) {
        admitKey(ctx, await deps.accounts.authenticate(secret), deps.now);
        const auth = ctx.state.auth!;
        opened = await deps.sessions.open({ kind: 'account', accountId: auth.accountId, keyId: auth.keyId, keyHash: hashApiKey(secret) }, metadata);
      } else if (isAdminToken(secret)) {
        opened = await deps.sessions.open({ kind: 'operator', adminToken: deps.adminToken }, metadata);
      } else {
        throw new ApiError(401, 'invalid_credentials', 'not an API key of an account, nor the admin token');
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) deps.lockout.recordFailure(ctx.ip);
      throw err;
    }
    setCookie(ctx, formatToken(opened.token), SESSION_TTL_MS / 1000);
    const auth = ctx.state.auth;
    ctx.status = 201;
    ctx.body = {
      kind: auth ? 'account' : 'operator',
      ...(auth ? { account_id: auth.accountId, key_id: auth.keyId } : {}),
      expires_at: opened.expiresAt,
      csrf_token: csrfTokenOf(opened.token),
    };
  });

  router.get('/session', async (ctx) => {
    ctx.set('cache-control', 'no-store');
    // No cookie at all is not a failure (the page asks on every load): 204, nothing to show.
    if (ctx.cookies.get(SESSION_COOKIE) === undefined) {
      ctx.status = 204;
      return;
    }
    const { token, session } = await admitSession(ctx, deps).catch((err: unknown) => {
      // A cookie whose session ended is dropped, so the next load asks without it.
      if (err instanceof ApiError && err.status === 401) setCookie(ctx, '', 0);
      throw err;
    });
    ctx.body = sessionBody(session, token);
  });

  router.delete('/session', async (ctx) => {
    const { session } = await admitSession(ctx, deps).catch((err: unknown) => {
      // Signing out of a session that already ended still clears the cookie.
      if (err instanceof ApiError && err.status === 401) setCookie(ctx, '', 0);
      throw err;
    });
    await deps.sessions.close(session.id, { requestId: ctx.state.requestId, via: 'dashboard', session_id: session.id });
    setCookie(ctx, '', 0);
    ctx.status = 204;
  });

  return router;
}
