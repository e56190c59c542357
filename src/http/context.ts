import type { ParameterizedContext } from 'koa';
import type { AuthenticatedKey } from '../accounts/service';
import type { Logger } from '../log';
import type { ApiError, ErrorShape } from './errors';

/** Who may call a route: anyone, an API key holder, or the operator with the admin token. */
export type RouteAccess = 'public' | 'api_key' | 'admin';

/**
 * How a route's caller proves who they are: `check` throws the 401 `refusal` or sets ctx.state.
 * For the lockout (src/http/credential-lockout.ts): whether the credential is the admin token
 * (`guessable`), and the secret a request presented, read when it fails.
 */
export interface Credential {
  check(ctx: GatewayContext): Promise<void>;
  refusal(): ApiError;
  readonly guessable: boolean;
  presented(ctx: GatewayContext): string | null;
}

/**
 * Set on ctx.state by a middleware that serves routes under a second prefix with another
 * credential (the dashboard serves /v1 and /admin/v1 under /dashboard/api with its session): the
 * route guard then asks this credential instead of the route's own, and only routes of `access`
 * are reachable that way. The routes and their handlers stay the same.
 */
export interface MountedCredential {
  readonly access: Exclude<RouteAccess, 'public'>;
  readonly credential: Credential;
}

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

/** `T` with every optional key required (its value may still be undefined): a key added to `T` must be declared. */
type EveryKeyOf<T> = { [K in keyof Required<T>]: T[K] | undefined };

/**
 * ctx.state, made by requestContext with every key it may get, so that each request's state has
 * one hidden class and the request's code reads it by inline caches. The logger is made when first
 * used (what holds on to it for later, such as a paid call's RequestCharge, holds the state
 * instead): a request that logs nothing, as a chat call that succeeds does when the level is above
 * info, does not pay for a child logger. Before, the lazy logger was an accessor defined on Koa's
 * plain state object per request, which turned every request's state into a dictionary.
 */
export class RequestState implements EveryKeyOf<GatewayState> {
  errorShape: ErrorShape | undefined = undefined;
  auth: AuthenticatedKey | undefined = undefined;
  rawBody: string | undefined = undefined;
  mountedCredential: MountedCredential | undefined = undefined;
  dashboardSession: { readonly id: string } | undefined = undefined;
  private child: Logger | undefined = undefined;

  constructor(
    readonly requestId: string,
    private readonly base: Logger,
  ) {}

  get logger(): Logger {
    return (this.child ??= this.base.child({ requestId: this.requestId }));
  }

  /** A handler may put a logger of its own in the request's state. */
  set logger(replaced: Logger) {
    this.child = replaced;
  }
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
