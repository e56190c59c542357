import type { ParameterizedContext } from 'koa';
import type { AuthenticatedKey } from '../accounts/service';
import type { Logger } from '../log';
import type { ErrorShape } from './errors';
import type { MountedCredential } from './routing';

export interface GatewayState {
  requestId: string;
  logger: Logger;
  errorShape?: ErrorShape;
  auth?: AuthenticatedKey;
  rawBody?: string;
  /** Routes reached through the dashboard's mount: its credential replaces the route's own. */
  mountedCredential?: MountedCredential;
  /** The dashboard session a request came with, once its credential admitted it. */
  dashboardSession?: { readonly id: string };
}

export type GatewayContext = ParameterizedContext<GatewayState>;

/** The template of the route a request matched (`/v1/videos/generations/:id`), or null. */
export function matchedRoute(ctx: GatewayContext): string | null {
  const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof route === 'string' ? route : null;
}

/** The endpoint a request called, as the ledger names it: `POST /v1/chat/completions`. */
export function endpointOf(ctx: GatewayContext): string {
  return `${ctx.method} ${matchedRoute(ctx) ?? 'unknown'}`;
}

/** The authenticated key of a /v1 request; the auth middleware guarantees it is set. */
export function authOf(ctx: GatewayContext): AuthenticatedKey {
  if (!ctx.state.auth) throw new Error('route mounted without API key authentication');
  return ctx.state.auth;
}
