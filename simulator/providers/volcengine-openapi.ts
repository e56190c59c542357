import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { directivesOfUrl } from '../directives';
import { originOf } from '../files';
import { HttpError, sendJson } from '../http';
import type { ExtraRoute, SimContext } from '../route';
import { volcengineOpenapiProtocol } from '../../src/upstreams/volcengine-openapi/protocol';
import { SimTaskStore, simTaskPhase, type SimTask } from '../task-store';
import { volcengineSignatureCheck } from './credentials';
import type { SimulatedProvider } from './provider';
import { compactTime, OpenApiError, type Action, type ServiceActions } from './volcengine-actions';
import { simulatedVod } from './volcengine-vod';

/**
 * Volcengine's OpenAPI for Ark's asset library and its real-person verification, simulated at
 * `/volcengine/` (the real host: https://ark.cn-beijing.volcengineapi.com/), with VOD's subtitle
 * erase Actions for requests signed for the `vod` service (simulator/providers/volcengine-vod.ts;
 * the real host https://vod.volcengineapi.com/), speaking the
 * provider's protocol: `POST /volcengine/?Action=…&Version=2024-01-01` with a JSON body, signed
 * with Volcengine's HMAC-SHA256 signature for the `ark` service with the access key of the
 * checked-in channels file (simulator/providers/credentials.ts; a missing, unknown or wrong one is
 * refused with the common error codes and statuses of https://www.volcengine.com/docs/6369/68677),
 * answered `{ResponseMetadata: {RequestId, Action, Version, Service, Region, Error?}, Result}`.
 *
 * Actions (src/upstreams/volcengine-openapi/ark-assets.ts cites their references):
 * - `CreateVisualValidateSession` → `{BytedToken, CallbackURL, H5Link}`: the person's page
 *   (`GET /volcengine/sim/verify/:token`), a small HTML form where they tick consent and submit
 *   (`POST /volcengine/sim/verify/:token`, form-encoded `consent=yes&decision=consent`) or decline
 *   (`decision=decline`); the liveness check is simulated and passes unless the form carries
 *   `sim=fail`. A page opened as `…?sim=expire` is expired from then on. Valid 30 minutes.
 * - `GetVisualValidateResult {BytedToken}` → `{GroupId}` once the person is verified; `{}` while
 *   they have not finished (what the provider answers then is not checked against it); the
 *   provider's refusal (400, `Error.Code` `liveness_check_failed`, `consent_declined` or
 *   `session_expired`) once they failed, declined or the link expired.
 * - `CreateAsset {GroupId, URL, AssetType: "Image"}` → `{Id}` for a verified group's image, which
 *   is `Processing` for ~150 ms, then `Active`; `GetAsset {Id}` reads it. Directives ride in the
 *   image URL's `sim` query parameter: `?sim=fail` (`Failed`, `Error.Code` `FaceMismatch`),
 *   `?sim=delay=800`, and `?sim=hold`: processing until `POST /volcengine/sim/assets/:id/release`.
 *
 * `POST /volcengine/sim/refuse-next {Action, Status, Code}` makes the next call of that Action
 * answer that error (a test's way to see a refusal of an Action that takes nothing to carry a
 * directive in).
 */

/** The provider's asset ids start with this (the video simulator refuses other `asset://` ids). */
export const SIM_ASSET_ID_PREFIX = 'asset-sim';

const VERSION = '2024-01-01';
const SERVICE = 'ark';
const REGION = 'cn-beijing';
const VALIDITY_MS = 30 * 60_000;
/** The person's page, relative to the provider's root, and where it is on the simulator. */
const PAGE_ROUTE = '/sim/verify';
const PAGE_PATH = `${volcengineOpenapiProtocol.simulatorPrefix}${PAGE_ROUTE}`;

/** The statuses of the common authentication errors (https://www.volcengine.com/docs/6369/68677). */
const REFUSAL_STATUS: Record<string, number> = {
  MissingAuthenticationToken: 401,
  InvalidAuthorization: 400,
  InvalidAccessKey: 401,
  InvalidTimestamp: 400,
  SignatureDoesNotMatch: 401,
};

interface SimSession {
  readonly token: string;
  readonly groupId: string;
  readonly callbackUrl: string;
  readonly expiresAt: number;
  /** The link was opened with `?sim=expire`. */
  expired: boolean;
  outcome: { status: 'verified' } | { status: 'failed'; code: string; message: string } | null;
}

interface SimAsset extends SimTask {
  readonly groupId: string;
  readonly url: string;
}

export const volcengineOpenapiProvider: SimulatedProvider = {
  protocol: 'volcengine_openapi',
  title: "Volcengine OpenAPI: Ark's asset library and real-person verification (service ark), VOD's subtitle erase (service vod)",
  basePath: '',
  routes: assetLibraryRoutes,
};

/** The routes, relative to the provider's root (mounted at `/volcengine`); the page and test controls under `/sim/`. */
function assetLibraryRoutes(): ExtraRoute[] {
  const sessions = new Map<string, SimSession>();
  const verifiedGroups = new Set<string>();
  const assets = new SimTaskStore<SimAsset>(SIM_ASSET_ID_PREFIX, 'asset');
  const refusals = new Map<string, { status: number; code: string }>();
  let seq = 0;

  function statusOf(session: SimSession): 'pending' | 'verified' | 'failed' | 'expired' {
    if (session.outcome) return session.outcome.status;
    return session.expired || Date.now() >= session.expiresAt ? 'expired' : 'pending';
  }

  const arkActions: Record<string, Action> = {
    CreateVisualValidateSession(p, req) {
      const now = Date.now();
      const token = `${new Date(now).toISOString().replace(/\D/g, '').slice(0, 14)}${randomBytes(10).toString('hex').toUpperCase()}`;
      const callbackUrl = typeof p.CallbackURL === 'string' ? p.CallbackURL : '';
      sessions.set(token, { token, groupId: `group-${compactTime(now)}-${++seq}sim`, callbackUrl, expiresAt: now + VALIDITY_MS, expired: false, outcome: null });
      return { BytedToken: token, CallbackURL: callbackUrl, H5Link: `${originOf(req.headers)}${PAGE_PATH}/${token}` };
    },
    GetVisualValidateResult(p) {
      const session = typeof p.BytedToken === 'string' ? sessions.get(p.BytedToken) : undefined;
      if (!session) throw new OpenApiError(400, 'InvalidParameter.BytedToken', 'BytedToken is missing or unknown');
      const status = statusOf(session);
      if (status === 'verified') return { GroupId: session.groupId };
      if (status === 'expired') throw new OpenApiError(400, 'session_expired', 'the verification link expired before the person completed it');
      if (session.outcome?.status === 'failed') throw new OpenApiError(400, session.outcome.code, session.outcome.message);
      return {};
    },
    CreateAsset(p, req) {
      if (typeof p.GroupId !== 'string' || !verifiedGroups.has(p.GroupId)) throw new OpenApiError(404, 'NotFound.AssetGroup', `asset group ${String(p.GroupId)} not found or not verified`);
      if (p.AssetType !== 'Image') throw new OpenApiError(400, 'InvalidParameter.AssetType', 'AssetType must be Image');
      const url = p.URL;
      if (typeof url !== 'string' || !url.startsWith('https://')) throw new OpenApiError(400, 'InvalidParameter.URL', 'URL must be a public https URL');
      const d = directivesOfUrl(url);
      if (d.status) throw new OpenApiError(d.status, 'SimulatedError', `simulated HTTP ${d.status}`);
      const asset = assets.add(req, 'asset', d, (task) => ({ ...task, groupId: p.GroupId as string, url }));
      return { Id: asset.id };
    },
    GetAsset(p) {
      const asset = typeof p.Id === 'string' ? assets.get(p.Id) : undefined;
      if (!asset) throw new OpenApiError(404, 'NotFound.Asset', `asset ${String(p.Id)} not found`);
      const phase = simTaskPhase(asset);
      const status = phase === 'succeeded' ? 'Active' : phase === 'failed' || phase === 'cancelled' ? 'Failed' : 'Processing';
      const at = (ms: number) => new Date(Math.min(ms, Date.now())).toISOString().replace(/\.\d{3}Z$/, 'Z');
      return {
        Id: asset.id,
        Name: '',
        URL: asset.url,
        AssetType: 'Image',
        GroupId: asset.groupId,
        Status: status,
        ProjectName: 'default',
        CreateTime: at(asset.createdAt),
        UpdateTime: at(asset.finishAt),
        ...(status === 'Failed' ? { Error: { Code: 'FaceMismatch', Message: 'Face consistency verification failed.' } } : {}),
      };
    },
  };

  const vod = simulatedVod();
  /** Each service's Actions: a request reaches those of the service it is signed for. */
  const services: Readonly<Record<string, ServiceActions>> = {
    [SERVICE]: Object.fromEntries(Object.entries(arkActions).map(([name, run]) => [name, { version: VERSION, run }])),
    vod: vod.actions,
  };

  function answer(ctx: SimContext): void {
    const { req, res, query } = ctx;
    const rawBody = ctx.rawBody ?? Buffer.alloc(0);
    const action = query.get('Action') ?? '';
    const version = query.get('Version') ?? '';
    const metadata = { RequestId: `${compactTime(Date.now())}${randomBytes(8).toString('hex').toUpperCase()}`, Action: action, Version: version, Service: SERVICE, Region: REGION };
    try {
      const signature = volcengineSignatureCheck(ctx);
      if (!signature.ok) throw new OpenApiError(REFUSAL_STATUS[signature.code] ?? 401, signature.code, signature.message);
      Object.assign(metadata, { Service: signature.service, Region: signature.region });
      if (!action || !version) throw new OpenApiError(400, 'MissingParameter', 'The request is missing Action or Version parameter.');
      const known = services[signature.service]?.[action];
      if (!known || version !== known.version) throw new OpenApiError(404, 'InvalidActionOrVersion', `Could not find operation ${action} for version ${version}.`);
      const refusal = refusals.get(action);
      if (refusal) {
        refusals.delete(action);
        throw new OpenApiError(refusal.status, refusal.code, `simulated refusal of ${action}`);
      }
      sendJson(res, 200, { ResponseMetadata: metadata, Result: known.run(parametersOf(query, rawBody), req) });
    } catch (err) {
      if (!(err instanceof OpenApiError)) throw err;
      sendJson(res, err.status, { ResponseMetadata: { ...metadata, Error: { Code: err.code, Message: err.message } } });
    }
  }

  return [
    { method: 'POST', path: '/', body: 'raw', handler: answer },
    { method: 'GET', path: '/', body: 'raw', handler: answer },
    {
      method: 'POST',
      path: '/sim/refuse-next',
      handler: ({ res, body }) => {
        const b = (body ?? {}) as { Action?: unknown; Status?: unknown; Code?: unknown };
        if (typeof b.Action !== 'string' || typeof b.Status !== 'number' || typeof b.Code !== 'string') throw new HttpError(400, 'Action, Status and Code are required', 'InvalidParameter');
        refusals.set(b.Action, { status: b.Status, code: b.Code });
        sendJson(res, 200, { Action: b.Action, Status: b.Status, Code: b.Code });
      },
    },
    {
      method: 'GET',
      path: `${PAGE_ROUTE}/:token`,
      handler: ({ res, params, query }) => {
        const session = sessions.get(params.token!);
        if (!session) return sendPage(res, 404, 'Link not found', '<p>This verification link does not exist.</p>');
        if (query.getAll('sim').includes('expire')) session.expired = true;
        const closed = closedPage(session);
        if (closed) return sendPage(res, 410, closed.title, closed.html);
        sendPage(res, 200, 'Verify your identity', consentForm(session));
      },
    },
    {
      method: 'POST',
      path: `${PAGE_ROUTE}/:token`,
      body: 'raw',
      maxBodyBytes: 16 * 1024,
      handler: ({ res, params, rawBody }) => {
        const session = sessions.get(params.token!);
        if (!session) return sendPage(res, 404, 'Link not found', '<p>This verification link does not exist.</p>');
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
        if (form.getAll('sim').includes('fail')) {
          session.outcome = { status: 'failed', code: 'liveness_check_failed', message: 'the liveness check did not pass' };
          return sendPage(res, 200, 'Verification failed', '<p role="status">The liveness check did not pass.</p>');
        }
        session.outcome = { status: 'verified' };
        verifiedGroups.add(session.groupId);
        sendPage(res, 200, 'Verification complete', '<p role="status">Thank you: you are verified. You can close this page.</p>');
      },
    },
    assets.releaseRoute('/sim/assets/:id/release'),
    ...vod.routes,
  ];

  function closedPage(session: SimSession): { title: string; html: string } | null {
    const status = statusOf(session);
    if (status === 'expired') return { title: 'Link expired', html: '<p>This verification link has expired. Ask for a new one.</p>' };
    if (status !== 'pending') return { title: 'Link already used', html: '<p>This verification link has already been used.</p>' };
    return null;
  }
}

/** An Action's parameters: the query's besides Action and Version, then a JSON body's members. */
function parametersOf(query: URLSearchParams, rawBody: Buffer): Record<string, unknown> {
  const fromQuery = Object.fromEntries([...query].filter(([name]) => name !== 'Action' && name !== 'Version'));
  if (rawBody.length === 0) return fromQuery;
  let value: unknown;
  try {
    value = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new OpenApiError(400, 'InvalidParameter', 'the body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new OpenApiError(400, 'InvalidParameter', 'the body is not a JSON object');
  return { ...fromQuery, ...(value as Record<string, unknown>) };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function consentForm(session: SimSession): string {
  return `<p>A video service asks to use reference images of you. Give your consent and complete the liveness check to continue.</p>
<form method="post" action="${PAGE_PATH}/${escapeHtml(session.token)}">
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
