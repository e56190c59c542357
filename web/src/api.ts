/**
 * The dashboard's only way to the gateway: /dashboard/api with the session cookie (the browser
 * sends it; no script can read it) and, on state changes, the session's CSRF token, kept in
 * memory only. Errors keep the API's own body. A successful state change reloads every screen.
 */
import { invalidate } from './fresh';

export type { ListBody } from './paged-list';

export interface Session {
  readonly kind: 'account' | 'operator';
  readonly account_id?: string;
  readonly key_id?: string;
  readonly expires_at: string;
  readonly csrf_token: string;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
let sessionKey: string | null = null;
let onSignedOut: () => void = () => undefined;

export function rememberSession(session: Session | null): void {
  csrfToken = session?.csrf_token ?? null;
  sessionKey = session?.key_id ?? null;
}

/** The key an account session was opened with (null for the operator, or when signed out). */
export function sessionKeyId(): string | null {
  return sessionKey;
}

/**
 * Playground calls answer for the key the owner picked, not for the session: their 401 (that key
 * expired) does not end the session. Whether the session still holds is asked separately.
 */
const PLAYGROUND = '/playground/';

/** Called when the gateway answers 401: the session ended (signed out elsewhere, key revoked, expired). */
export function whenSessionEnds(handler: () => void): void {
  onSignedOut = handler;
}

/** What changes state: after it succeeds, every screen loads again (web/src/fresh.ts). Signing in or out changes no data shown. */
function changesData(method: string, path: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && path !== '/session';
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await requestWithId<T>(method, path, body)).body;
}

/** The same, with the request id the gateway answered (X-Request-Id: the ledger names a request's entries by it). */
export async function requestWithId<T>(method: string, path: string, body?: unknown): Promise<{ body: T; requestId: string | null }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(`/dashboard/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const requestId = res.headers.get('x-request-id');
  const text = res.status === 204 ? '' : await res.text();
  const parsed: unknown = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    if (res.status === 401 && path !== '/session' && !path.startsWith(PLAYGROUND)) onSignedOut();
    throw new ApiFailure(res.status, error?.code ?? 'error', error?.message ?? `HTTP ${res.status}`);
  }
  if (changesData(method, path)) invalidate();
  return { body: (res.status === 204 ? undefined : parsed) as T, requestId };
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body ?? {}),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  delete: (path: string) => request<void>('DELETE', path),
};

/** A CSV the API answers (ledger, statements), handed to the browser as a download. */
export async function downloadCsv(path: string, filename: string): Promise<void> {
  const res = await fetch(`/dashboard/api${path}`, { headers: { accept: 'text/csv' }, credentials: 'same-origin' });
  if (!res.ok) throw new ApiFailure(res.status, 'download_failed', `HTTP ${res.status}`);
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}

