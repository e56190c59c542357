/**
 * A dashboard session, as its own stream: opened by exchanging an API key or the admin token
 * (POST /dashboard/api/session), closed by signing out. Neither the key nor the token is kept:
 * an account session holds the key's hash (already in the log, on ApiKeyIssued), so every request
 * re-checks the key exactly as a Bearer request would; an operator session holds a fingerprint of
 * the admin token that only the same token reproduces. The cookie's secret is kept as a hash.
 */
export type SessionKind = 'account' | 'operator';

export type DashboardSessionEvent =
  | {
      type: 'DashboardSessionOpened';
      data: {
        sessionId: string;
        kind: SessionKind;
        accountId: string | null;
        keyId: string | null;
        keyHash: string | null;
        adminFingerprint: string | null;
        secretHash: string;
        expiresAt: string;
        at: string;
      };
    }
  | { type: 'DashboardSessionClosed'; data: { sessionId: string; reason: 'signed_out'; at: string } };

export const SESSION_STREAM_PREFIX = 'dashboard_session-';

export function sessionStream(sessionId: string): string {
  return SESSION_STREAM_PREFIX + sessionId;
}

export interface SessionState {
  readonly opened: Extract<DashboardSessionEvent, { type: 'DashboardSessionOpened' }>['data'];
  readonly closedAt: string | null;
}

/** The session a stream's events describe; null before it was opened. */
export function foldSession(events: readonly { readonly type: string; readonly data: unknown }[]): SessionState | null {
  let state: SessionState | null = null;
  for (const event of events) {
    if (event.type === 'DashboardSessionOpened') state = { opened: event.data as SessionState['opened'], closedAt: null };
    else if (state && event.type === 'DashboardSessionClosed') state = { opened: state.opened, closedAt: (event.data as { at: string }).at };
  }
  return state;
}
