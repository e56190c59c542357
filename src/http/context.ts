import type { ParameterizedContext } from 'koa';
import type { AuthenticatedKey } from '../accounts/service';
import type { Logger } from '../log';
import type { ErrorShape } from './errors';

export interface GatewayState {
  requestId: string;
  logger: Logger;
  errorShape?: ErrorShape;
  auth?: AuthenticatedKey;
  rawBody?: string;
}

export type GatewayContext = ParameterizedContext<GatewayState>;

/** The authenticated key of a /v1 request; the auth middleware guarantees it is set. */
export function authOf(ctx: GatewayContext): AuthenticatedKey {
  if (!ctx.state.auth) throw new Error('route mounted without API key authentication');
  return ctx.state.auth;
}
