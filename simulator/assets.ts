import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { parseDirectives, type SimDirectives } from './directives';
import { directivesOfUrl } from './erase';
import { originOf } from './files';
import { HttpError, sendJson } from './http';
import type { ExtraRoute } from './server';
import { SimTaskStore, simTaskPhase, type SimTask } from './task-store';

/**
 * A real-person verification and asset provider, simulated.
 *
 * `POST /v1/asset-groups/validate-session` opens a session (for a new group, or an existing
 * `group_id` of the provider) with a one-time page at `verification_url`, valid 30 minutes;
 * `GET /v1/asset-groups/validate-session/:id` reads it: `pending`, then `verified` (with the
 * provider's `group_id`), `failed` or `expired`. The page (`GET /sim/verify/:token`) is a small
 * HTML form where the person ticks consent and submits (`POST /sim/verify/:token`, form-encoded
 * `consent=yes&decision=consent`) or declines (`decision=decline`); the liveness check is
 * simulated and passes. Directives travel in the session's `name`: `[sim:fail]` fails the liveness
 * check on consent, `[sim:expire]` makes the link expired when the person opens it (the session
 * reads `pending` until then, so a gateway's answer and its early polls see it open, whatever
 * their timing, and `expired` from the first visit on).
 *
 * A verified group takes images: `POST /v1/asset-groups/:group_id/assets` `{url}` creates an asset
 * (`processing` for ~150 ms, then `active`), read with `GET /v1/assets/:id`. Directives ride in
 * the image URL's `sim` query parameter, as for subtitle erase: `?sim=fail`, `?sim=delay=800`, and
 * `?sim=hold`: processing until `POST /sim/assets/:id/release`.
 */

const VALIDITY_MS = 30 * 60_000;

/** The provider's asset ids start with this (the video simulator refuses other `asset://` ids). */
export const SIM_ASSET_ID_PREFIX = 'asset-sim';

interface SimSession {
  readonly id: string;
  readonly token: string;
  readonly groupId: string;
  readonly name: string;
  readonly expiresAt: number;
  readonly directives: SimDirectives;
  /** The person has loaded the page (what `[sim:expire]` waits for). */
  visited: boolean;
  outcome: { status: 'verified' } | { status: 'failed'; code: string; message: string } | null;
}

interface SimAsset extends SimTask {
  readonly groupId: string;
}

export function assetRoutes(): ExtraRoute[] {
  const sessions = new Map<string, SimSession>();
  const byToken = new Map<string, SimSession>();
  const byClientId = new Map<string, string>();
  const verifiedGroups = new Set<string>();
  const assets = new SimTaskStore<SimAsset>(SIM_ASSET_ID_PREFIX, 'asset');
  let seq = 0;

  function statusOf(session: SimSession): 'pending' | 'verified' | 'failed' | 'expired' {
    if (session.outcome) return session.outcome.status;
    return (session.visited && session.directives.raw['expire'] !== undefined) || Date.now() >= session.expiresAt ? 'expired' : 'pending';
  }

  function findSession(id: string): SimSession {
    const session = sessions.get(id);
    if (!session) throw new HttpError(404, `verification session ${id} not found`, 'ResourceNotFound');
    return session;
  }

  function sessionBody(session: SimSession, origin: string): Record<string, unknown> {
    const status = statusOf(session);
    return {
      id: session.id,
      status,
      verification_url: `${origin}/sim/verify/${session.token}`,
      expires_at: Math.floor(session.expiresAt / 1000),
      ...(status === 'verified' ? { group_id: session.groupId } : {}),
      ...(session.outcome?.status === 'failed' ? { error: { code: session.outcome.code, message: session.outcome.message } } : {}),
    };
  }

  return [
    {
      method: 'POST',
      path: '/v1/asset-groups/validate-session',
      handler: ({ req, res, body }) => {
        const b = (body ?? {}) as { group_id?: unknown; name?: unknown };
        const clientId = req.headers['x-client-request-id'];
        const earlier = typeof clientId === 'string' ? byClientId.get(clientId) : undefined;
        if (earlier) return sendJson(res, 200, sessionBody(findSession(earlier), originOf(req.headers)));
        if (b.group_id !== undefined && (typeof b.group_id !== 'string' || !verifiedGroups.has(b.group_id))) {
          throw new HttpError(404, `asset group ${String(b.group_id)} not found`, 'ResourceNotFound', 'group_id');
        }
        const name = typeof b.name === 'string' ? b.name : '';
        const directives = parseDirectives(name);
        if (directives.status) throw new HttpError(directives.status, `simulated HTTP ${directives.status}`, null);
        const now = Date.now();
        const session: SimSession = {
          id: `avs-sim-${++seq}-${now.toString(36)}`,
          token: randomBytes(16).toString('hex'),
          groupId: typeof b.group_id === 'string' ? b.group_id : `grp-sim-${seq}-${now.toString(36)}`,
          name,
          expiresAt: now + VALIDITY_MS,
          directives,
          visited: false,
          outcome: null,
        };
        sessions.set(session.id, session);
        byToken.set(session.token, session);
        if (typeof clientId === 'string') byClientId.set(clientId, session.id);
        sendJson(res, 200, sessionBody(session, originOf(req.headers)));
      },
    },
    {
      method: 'GET',
      path: '/v1/asset-groups/validate-session/:id',
      handler: ({ req, res, params }) => sendJson(res, 200, sessionBody(findSession(params.id!), originOf(req.headers))),
    },
    {
      method: 'GET',
      path: '/sim/verify/:token',
      handler: ({ res, params }) => {
        const session = byToken.get(params.token!);
        if (!session) return sendPage(res, 404, 'Link not found', '<p>This verification link does not exist.</p>');
        session.visited = true;
        const closed = closedPage(session);
        if (closed) return sendPage(res, 410, closed.title, closed.html);
        sendPage(res, 200, 'Verify your identity', consentForm(session));
      },
    },
    {
      method: 'POST',
      path: '/sim/verify/:token',
      body: 'raw',
      maxBodyBytes: 16 * 1024,
      handler: ({ res, params, rawBody }) => {
        const session = byToken.get(params.token!);
        if (!session) return sendPage(res, 404, 'Link not found', '<p>This verification link does not exist.</p>');
        session.visited = true;
        const closed = closedPage(session);
        if (closed) return sendPage(res, 410, closed.title, closed.html);
        const form = new URLSearchParams(rawBody?.toString('utf8') ?? '');
        const decision = form.get('decision');
        if (decision === 'decline') {
          session.outcome = { status: 'failed', code: 'consent_declined', message: 'the person declined to give consent' };
          return sendPage(res, 200, 'Verification declined', '<p role="status">You declined. No images of you will be used.</p>');
        }
        if (decision !== 'consent' || form.get('consent') !== 'yes') {
          return sendPage(res, 400, 'Consent required', `<p role="alert">Tick the consent box to continue.</p>${consentForm(session)}`);
        }
        if (session.directives.fail) {
          session.outcome = { status: 'failed', code: 'liveness_check_failed', message: 'the liveness check did not pass' };
          return sendPage(res, 200, 'Verification failed', '<p role="status">The liveness check did not pass.</p>');
        }
        session.outcome = { status: 'verified' };
        verifiedGroups.add(session.groupId);
        sendPage(res, 200, 'Verification complete', '<p role="status">Thank you: you are verified. You can close this page.</p>');
      },
    },
    {
      method: 'POST',
      path: '/v1/asset-groups/:group_id/assets',
      handler: ({ req, res, params, body }) => {
        if (!verifiedGroups.has(params.group_id!)) throw new HttpError(404, `asset group ${params.group_id} not found or not verified`, 'ResourceNotFound');
        const url = (body as { url?: unknown } | undefined)?.url;
        if (typeof url !== 'string' || !url.startsWith('https://')) throw new HttpError(400, 'url must be an https URL', 'InvalidParameter', 'url');
        if (assets.replayed(req, res)) return;
        const d = directivesOfUrl(url);
        if (d.status) throw new HttpError(d.status, `simulated HTTP ${d.status}`, null);
        assets.create(req, res, 'asset', d, (task) => ({ ...task, groupId: params.group_id! }));
      },
    },
    assets.releaseRoute('/sim/assets/:id/release'),
    {
      method: 'GET',
      path: '/v1/assets/:id',
      handler: ({ res, params }) => {
        const asset = assets.find(params.id!);
        const phase = simTaskPhase(asset);
        const status = phase === 'succeeded' ? 'active' : phase === 'failed' || phase === 'cancelled' ? 'failed' : 'processing';
        sendJson(res, 200, {
          id: asset.id,
          group_id: asset.groupId,
          status,
          ...(status === 'failed' ? { error: { code: 'InvalidImage', message: 'the simulated image could not be processed' } } : {}),
        });
      },
    },
  ];

  function closedPage(session: SimSession): { title: string; html: string } | null {
    const status = statusOf(session);
    if (status === 'expired') return { title: 'Link expired', html: '<p>This verification link has expired. Ask for a new one.</p>' };
    if (status !== 'pending') return { title: 'Link already used', html: '<p>This verification link has already been used.</p>' };
    return null;
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function consentForm(session: SimSession): string {
  const who = session.name ? ` for <strong>${escapeHtml(session.name)}</strong>` : '';
  return `<p>A video service asks to use reference images of you${who}. Give your consent and complete the liveness check to continue.</p>
<form method="post" action="/sim/verify/${session.token}">
  <p><input type="checkbox" id="consent" name="consent" value="yes" required>
  <label for="consent">I consent to images of me being used as reference images for video generation.</label></p>
  <p id="liveness-note">The liveness check runs when you continue (simulated).</p>
  <button type="submit" name="decision" value="consent" aria-describedby="liveness-note">Verify and consent</button>
  <button type="submit" name="decision" value="decline" formnovalidate>Decline</button>
</form>`;
}

function sendPage(res: ServerResponse, status: number, title: string, body: string): void {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}
</main></body>
</html>
`;
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html), 'cache-control': 'no-store' });
  res.end(html);
}
