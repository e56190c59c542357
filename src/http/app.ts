import Koa from 'koa';
import type { Pool } from 'pg';
import type Router from '@koa/router';
import type { AccountService } from '../accounts/service';
import type { Catalog } from '../billing/catalog';
import type { Logger } from '../log';
import type { GatewayState } from './context';
import { errorMiddleware, type ErrorShape } from './errors';
import { apiKeyAuth, requestContext } from './middleware';
import { accountRouter, adminRouter } from './routes/accounts';
import { healthRouter } from './routes/health';
import { operationsRouter } from './routes/operations';

export interface AppDeps {
  readonly logger: Logger;
  readonly accounts: AccountService;
  readonly catalog: Catalog;
  readonly adminToken: string;
  readonly isReady: () => boolean;
  readonly pool: Pool;
  /** The lag of every consumer, for the operator. */
  readonly consumerStatus: () => Promise<unknown>;
  /** Routers of the /v1 API, mounted behind API key authentication. */
  readonly apiRouters: readonly Router<GatewayState>[];
  /** Unauthenticated middleware that answers before the API (signed file links). */
  readonly publicMiddleware?: readonly Koa.Middleware<GatewayState>[];
  /** Endpoints whose errors (authentication included) use another documented shape. */
  readonly errorShapes?: readonly (readonly [RegExp, ErrorShape])[];
}

export function createApp(deps: AppDeps): Koa<GatewayState> {
  const app = new Koa<GatewayState>();
  app.proxy = true;
  app.use(requestContext(deps.logger));
  app.use(async (ctx, next) => {
    ctx.state.errorShape = deps.errorShapes?.find(([pattern]) => pattern.test(ctx.path))?.[1] ?? 'openai';
    await next();
  });
  app.use(errorMiddleware);
  for (const middleware of deps.publicMiddleware ?? []) app.use(middleware);
  for (const router of [healthRouter(deps.isReady), adminRouter(deps.accounts, deps.adminToken), operationsRouter(deps.catalog, deps.consumerStatus, deps.pool, deps.adminToken)]) {
    app.use(router.routes()).use(router.allowedMethods());
  }
  const auth = apiKeyAuth(deps.accounts);
  const v1Routers = [accountRouter(deps.accounts), ...deps.apiRouters];
  app.use(async (ctx, next) => {
    if (!ctx.path.startsWith('/v1/')) return next();
    if (!v1Routers.some((r) => r.match(ctx.path, ctx.method).route)) return next();
    return auth(ctx, next);
  });
  for (const router of v1Routers) app.use(router.routes()).use(router.allowedMethods());
  return app;
}

/** A route as its router registered it: the method and the path pattern, prefix included. */
export interface RegisteredRoute {
  readonly method: string;
  readonly path: string;
}

/**
 * Every route of every router mounted on the app, read from the routers themselves, so that a
 * test walking them cannot forget a new one. HEAD (added for each GET) and router-wide
 * middleware (no methods) are left out.
 */
export function registeredRoutes(app: Koa<GatewayState>): RegisteredRoute[] {
  const routers = app.middleware.flatMap((mw) => {
    const router = (mw as { router?: Router<GatewayState> }).router;
    return router ? [router] : [];
  });
  return routers.flatMap((router) =>
    router.stack.flatMap((layer) =>
      typeof layer.path !== 'string' ? [] : layer.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: layer.path as string })),
    ),
  );
}
