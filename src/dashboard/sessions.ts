import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { recordFact } from '../domain/facts';
import type { EventMetadata, EventStore } from '../eventstore/port';
import { newId } from '../ids';
import { foldSession, sessionStream, type DashboardSessionEvent, type SessionKind, type SessionState } from './session-events';

/** How long a session lasts from sign-in (documented in docs/dashboard.md). */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

const SESSION_ID = /^dsess_[0-9a-f]{28}$/;
const SECRET = /^[A-Za-z0-9_-]{43}$/;

/** What the browser holds (the cookie's value): the session id and a secret only it knows. */
export interface SessionToken {
  readonly sessionId: string;
  readonly secret: string;
}

export function formatToken(token: SessionToken): string {
  return `${token.sessionId}.${token.secret}`;
}

export function parseToken(value: string | undefined): SessionToken | null {
  if (!value) return null;
  const [sessionId, secret, ...rest] = value.split('.');
  if (rest.length > 0 || !sessionId || !secret || !SESSION_ID.test(sessionId) || !SECRET.test(secret)) return null;
  return { sessionId, secret };
}

function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * The CSRF token of a session, derived from the cookie's secret: the page gets it from the
 * session endpoints and sends it back in a header, which a cross-site form or script cannot.
 * Derived, so it is never stored, and it differs from the secret, so showing it reveals nothing.
 */
export function csrfTokenOf(token: SessionToken): string {
  return createHmac('sha256', token.secret).update('dashboard csrf').digest('base64url');
}

/** Reproduced only by the same admin token: restarting with another token ends operator sessions. */
export function adminFingerprint(adminToken: string, sessionId: string): string {
  return createHmac('sha256', adminToken).update(`dashboard session ${sessionId}`).digest('hex');
}

export type OpenSession =
  | { readonly kind: 'account'; readonly accountId: string; readonly keyId: string; readonly keyHash: string }
  | { readonly kind: 'operator'; readonly adminToken: string };

export interface LiveSession {
  readonly id: string;
  readonly kind: SessionKind;
  readonly state: SessionState;
}

/**
 * Sessions in the event log: each is read from its own stream on every request, so any gateway
 * process answers for a session another one opened, and a sign-out anywhere counts everywhere.
 */
export class DashboardSessions {
  constructor(
    private readonly store: EventStore,
    private readonly clock: () => Date,
  ) {}

  async open(who: OpenSession, metadata: EventMetadata): Promise<{ token: SessionToken; expiresAt: string }> {
    const sessionId = newId('dsess');
    const token = { sessionId, secret: randomBytes(32).toString('base64url') };
    const now = this.clock();
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS).toISOString();
    const event: DashboardSessionEvent = {
      type: 'DashboardSessionOpened',
      data: {
        sessionId,
        kind: who.kind,
        accountId: who.kind === 'account' ? who.accountId : null,
        keyId: who.kind === 'account' ? who.keyId : null,
        keyHash: who.kind === 'account' ? who.keyHash : null,
        adminFingerprint: who.kind === 'operator' ? adminFingerprint(who.adminToken, sessionId) : null,
        secretHash: sha256(token.secret),
        expiresAt,
        at: now.toISOString(),
      },
    };
    await recordFact(this.store, sessionStream(sessionId), event, { expected: 'no_stream', metadata: { ...metadata, session_id: sessionId } });
    return { token, expiresAt };
  }

  /** The open, unexpired session the token belongs to, or null. Whether its key or token still holds is the caller's check. */
  async find(token: SessionToken): Promise<LiveSession | null> {
    const events = await this.store.readStream(sessionStream(token.sessionId));
    const state = foldSession(events);
    if (!state || state.closedAt !== null) return null;
    if (!timingSafeEqual(Buffer.from(sha256(token.secret), 'hex'), Buffer.from(state.opened.secretHash, 'hex'))) return null;
    if (Date.parse(state.opened.expiresAt) <= this.clock().getTime()) return null;
    return { id: token.sessionId, kind: state.opened.kind, state };
  }

  async close(sessionId: string, metadata: EventMetadata): Promise<void> {
    const event: DashboardSessionEvent = { type: 'DashboardSessionClosed', data: { sessionId, reason: 'signed_out', at: this.clock().toISOString() } };
    await recordFact(this.store, sessionStream(sessionId), event, { expected: 'stream_exists', metadata });
  }
}
