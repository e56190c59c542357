import Router from '@koa/router';
import { hashApiKey, looksLikeApiKey } from '../accounts/api-keys';
import { readJson } from '../http/body';
import { authOf, type GatewayContext, type GatewayState } from '../http/context';
import { tooManyFailures, type CredentialLockout } from '../http/credential-lockout';
import { ApiError } from '../http/errors';
import { admitKey, adminTokenMatcher } from '../http/middleware';
import { listBody } from '../http/pagination';
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
 * cookie, reading the session (with its CSRF token), signing out; and GET /dashboard/api/playground/keys.
 * A sign-in's secret is checked under the lockout like any credential (a failure counts; a valid
 * secret is always admitted).
 */
export function sessionRouter(deps: SessionCheckDeps & { readonly lockout: CredentialLockout }): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/dashboard/api', sensitive: true });
  const isAdminToken = adminTokenMatcher(deps.adminToken);

  router.post('/session', async (ctx) => {
    const { secret } = parseSessionRequest(await readJson(ctx));
    const metadata = { requestId: ctx.state.requestId, via: 'dashboard' };
    const isKey = looksLikeApiKey(secret);
    // Checked under the lockout like a Bearer credential: a key-shaped secret as a key, anything else as the admin token.
    await deps.lockout.admit(ctx.ip, { guessable: !isKey, presented: () => secret }, tooManyFailures, async () => {
      if (isKey) admitKey(ctx, await deps.accounts.authenticate(secret), deps.now);
      else if (!isAdminToken(secret)) throw new ApiError(401, 'invalid_credentials', 'not an API key of an account, nor the admin token');
    });
    const auth = ctx.state.auth;
    const opened = auth
      ? await deps.sessions.open({ kind: 'account', accountId: auth.accountId, keyId: auth.keyId, keyHash: hashApiKey(secret) }, metadata)
      : await deps.sessions.open({ kind: 'operator', adminToken: deps.adminToken }, metadata);
    setCookie(ctx, formatToken(opened.token), SESSION_TTL_MS / 1000);
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

  // The keys the playground may act through for this session (src/dashboard/playground.ts): what its page offers.
  router.get('/playground/keys', async (ctx) => {
    ctx.set('cache-control', 'no-store');
    await admitSession(ctx, deps, 'account');
    const auth = authOf(ctx);
    ctx.body = listBody(await deps.accounts.reachableKeys(auth.accountId, { keyId: auth.keyId }), false, (key) => key.id);
  });

  return router;
}
