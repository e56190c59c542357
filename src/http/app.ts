import Koa from 'koa';
import type { Pool } from 'pg';
import type Router from '@koa/router';
import type { AccountService } from '../accounts/service';
import type { Catalog } from '../billing/catalog';
import type { Readiness } from '../lifecycle/readiness';
import type { Logger } from '../log';
import { documentedWithBody } from '../openapi/registry';
import type { GatewayContext, GatewayState } from './context';
import { CredentialLockout, type LockoutSettings } from './credential-lockout';
import { unmatchedShape } from './error-shape';
import { errorMiddleware } from './errors';
import { adminAuth, apiKeyAuth, requestContext } from './middleware';
import { guardRoutes, routeDispatch, type RouteAccess, type RouteInfo } from './routing';
import { accountRouter, adminRouter } from './routes/accounts';
import { docsRouter } from './routes/docs';
import { healthRouter } from './routes/health';
import { httpMetrics, metricsRouter } from './routes/metrics';
import { operationsRouter } from './routes/operations';
import type { GatewayMetrics } from '../metrics/gateway-metrics';

/** What the HTTP app mounts for the dashboard (see docs/dashboard.md). */
export interface Dashboard {
  /** First in the chain: maps /dashboard/api/v1/… and /dashboard/api/admin/v1/… onto the API's own routes. */
  readonly mount: Koa.Middleware<GatewayState>;
  /** The single-page app's files. */
  readonly pages: Koa.Middleware<GatewayState>;
  /** POST/GET/DELETE /dashboard/api/session (failed sign-ins count in the app's lockout) and GET /dashboard/api/playground/keys. */
  sessionRouter(lockout: CredentialLockout): Router<GatewayState>;
}

export interface AppDeps {
  readonly logger: Logger;
  readonly accounts: AccountService;
  readonly catalog: Catalog;
  readonly adminToken: string;
  /** GET /readyz: whether this gateway can serve now, and why not. */
  readonly readiness: () => Promise<Readiness>;
  readonly pool: Pool;
  /** The lag of every consumer, for the operator. */
  readonly consumerStatus: () => Promise<unknown>;
  /** Further routers of the admin API; each of their routes needs the admin token. */
  readonly adminRouters?: readonly Router<GatewayState>[];
  /** Routers of the /v1 API; each of their routes needs an API key. */
  readonly apiRouters: readonly Router<GatewayState>[];
  /** Unauthenticated middleware that answers before the API (signed file links). */
  readonly publicMiddleware?: readonly Koa.Middleware<GatewayState>[];
  readonly metrics: GatewayMetrics;
  /** When set, `GET /metrics` needs it as a Bearer token. */
  readonly metricsToken: string | undefined;
  /** When a client address is locked out after failed credentials. */
  readonly lockout: LockoutSettings;
  /**
   * Proxies in front that append the address they saw to X-Forwarded-For. The client address is
   * the one the outermost trusted proxy appended; anything a client wrote there itself is ignored.
   */
  readonly trustProxyHops: number;
  /** The dashboard: its session endpoints, the API mounted under /dashboard/api, its pages. */
  readonly dashboard?: Dashboard;
  /** Milliseconds since the epoch (tests pass their own clock). */
  readonly now?: () => number;
}

export interface GatewayApp {
  readonly app: Koa<GatewayState>;
  /** Every route the gateway answers, as its routers registered them. */
  readonly routes: readonly RouteInfo[];
}

export function createApp(deps: AppDeps): GatewayApp {
  const app = new Koa<GatewayState>();
  app.proxy = deps.trustProxyHops > 0;
  app.maxIpsCount = deps.trustProxyHops;
  // Koa's own error event, logged as JSON like everything else rather than printed by Koa's default
  // handler: mostly a connection that failed under a request (a client that left mid-body, a
  // malformed message); anything else got past errorMiddleware, which answers every error a
  // handler throws, and is a fault of the gateway.
  app.on('error', (err: unknown, ctx?: GatewayContext) => {
    const logger = ctx?.state.logger ?? deps.logger;
    if (isClientConnectionError(err)) logger.info({ err }, 'client connection failed');
    else logger.error({ err }, 'unhandled error outside the error middleware');
  });
  app.use(requestContext(deps.logger));
  // Before anything reads the path: the dashboard's mount maps its paths onto the API's.
  if (deps.dashboard) app.use(deps.dashboard.mount);
  app.use(httpMetrics(deps.metrics));
  const lockout = new CredentialLockout(deps.lockout, deps.now);
  const credentials = { public: null, admin: adminAuth(deps.adminToken), api_key: apiKeyAuth(deps.accounts, deps.now) } as const;
  const mounted: [Router<GatewayState>, RouteAccess][] = [
    [healthRouter(deps.readiness), 'public'],
    [metricsRouter(deps.metrics, deps.metricsToken), 'public'],
    [docsRouter(), 'public'],
    ...(deps.dashboard ? [[deps.dashboard.sessionRouter(lockout), 'public'] as [Router<GatewayState>, RouteAccess]] : []),
    [adminRouter(deps.accounts), 'admin'],
    [operationsRouter(deps.catalog, deps.consumerStatus, deps.pool), 'admin'],
    ...(deps.adminRouters ?? []).map((router): [Router<GatewayState>, RouteAccess] => [router, 'admin']),
    [accountRouter(deps.accounts), 'api_key'],
    ...deps.apiRouters.map((router): [Router<GatewayState>, RouteAccess] => [router, 'api_key']),
  ];
  // Each router sets the error shape of its endpoint group (shapedRouter); a path no route
  // matches gets the shape of the group whose prefix it lies under.
  const shapeOfUnmatched = unmatchedShape(mounted.map(([router]) => router));
  // Middleware that every request passes through returns next()'s promise rather than awaiting it
  // in an async function of its own: one promise and its ticks fewer a request for each.
  app.use((ctx, next) => {
    ctx.state.errorShape = shapeOfUnmatched(ctx.path);
    return next();
  });
  app.use(errorMiddleware);
  for (const middleware of deps.publicMiddleware ?? []) app.use(middleware);
  if (deps.dashboard) app.use(deps.dashboard.pages);

  const routes = mounted.flatMap(([router, access]) => guardRoutes(router, access, credentials[access], lockout, documentedWithBody));
  app.use(routeDispatch(mounted.map(([router]) => router)));
  return { app, routes };
}

/** A failure of the client's connection or of its message (Node's HTTP parser), not of the gateway. */
export function isClientConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('HPE_') || ['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE'].includes(code));
}
