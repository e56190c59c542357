import { timingSafeEqual } from 'node:crypto';
import type { AccountService } from '../accounts/service';
import type { GatewayContext } from '../http/context';
import { ApiError } from '../http/errors';
import { admitKey } from '../http/middleware';
import type { Credential } from '../http/routing';
import { adminFingerprint, csrfTokenOf, parseToken, type DashboardSessions, type LiveSession, type SessionToken } from './sessions';
import type { SessionKind } from './session-events';

export const SESSION_COOKIE = 'gw_dashboard';
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface SessionCheckDeps {
  readonly sessions: DashboardSessions;
  readonly accounts: AccountService;
  readonly adminToken: string;
  readonly now: () => number;
}

export const noSession = () => new ApiError(401, 'invalid_session', 'no dashboard session: sign in again');

function equalText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The request's session, if its cookie names an open, unexpired one whose credential still
 * holds: an account session's key is admitted exactly as a Bearer key would be (revoked: 401,
 * expired: 401 key_expired; sets ctx.state.auth), an operator session's admin token must be the
 * one the gateway runs with now. With `kind`, only sessions of that kind. State-changing methods also need the CSRF header (403).
 */
export async function admitSession(ctx: GatewayContext, deps: SessionCheckDeps, kind?: SessionKind): Promise<{ token: SessionToken; session: LiveSession }> {
  const token = parseToken(ctx.cookies.get(SESSION_COOKIE));
  const session = token && (await deps.sessions.find(token));
  // An operator session is never admitted where a key is needed, nor the reverse.
  if (!token || !session || (kind !== undefined && session.kind !== kind)) throw noSession();
  const opened = session.state.opened;
  if (opened.kind === 'account') {
    const auth = await deps.accounts.authenticateHash(opened.keyHash ?? '');
    admitKey(ctx, auth && auth.keyId === opened.keyId ? auth : null, deps.now);
  } else if (!equalText(opened.adminFingerprint ?? '', adminFingerprint(deps.adminToken, session.id))) {
    throw noSession();
  }
  if (!SAFE_METHODS.has(ctx.method) && !equalText(ctx.get(CSRF_HEADER), csrfTokenOf(token))) {
    throw new ApiError(403, 'csrf_token_invalid', `state-changing dashboard requests need the session's ${CSRF_HEADER} header`);
  }
  ctx.state.dashboardSession = { id: session.id };
  return { token, session };
}

/** The session as the credential of the routes the dashboard mounts: only sessions of `kind`. */
export function sessionCredential(kind: SessionKind, deps: SessionCheckDeps): Credential {
  return {
    refusal: noSession,
    // The cookie's secret is random, and no API key: failures count by address only.
    guessable: false,
    presented: () => null,
    async check(ctx) {
      await admitSession(ctx, deps, kind);
    },
  };
}
