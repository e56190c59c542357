import type Router from '@koa/router';
import type { Layer } from '@koa/router';
import type { Middleware, Next } from 'koa';
import type { Credential, GatewayContext, GatewayState, RouteAccess } from './context';
import { tooManyFailures, type CredentialLockout } from './credential-lockout';
import { refuseBody } from './body';
import { ApiError } from './errors';
import { assertSafeText, isSafeText } from './safe-text';

// The route access and credential types live with the request state that carries them (context.ts).
export type { Credential, MountedCredential, RouteAccess } from './context';

export interface RouteInfo {
  readonly method: string;
  readonly path: string;
  readonly access: RouteAccess;
}

const STATUSES = Symbol('spec statuses');
type StatusMarker = Middleware<GatewayState> & { [STATUSES]: readonly number[] };

/**
 * Route metadata, given as the route's first middleware: the error statuses the spec lists for
 * it. The route guard keeps within them: a locked-out failure gets 401 where 429 is not listed,
 * and query text is only refused with 400 where 400 is listed (such routes read no query).
 * Routes without it may answer any error status.
 */
export function specStatuses(...statuses: number[]): Middleware<GatewayState> {
  const marker = ((_ctx: GatewayContext, next: Next) => next()) as StatusMarker;
  marker[STATUSES] = statuses;
  return marker;
}

const guarded = new WeakSet<object>();

/** Whether the route of `method` on `path` (its pattern as registered) reads a request body. */
export type TakesBody = (method: string, path: string) => boolean;

/** Methods whose body, if a client sends one, no route reads or refuses. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Puts a guard at the head of every route of `router`, so whether a request needs a credential
 * is decided by the route it matched. The guard checks the credential under the lockout (a
 * refusal counts as a failure, see CredentialLockout), answers 404 for a path parameter that
 * cannot name anything, applies the text rule to the query, and refuses a body on a POST, PATCH,
 * PUT or DELETE route that takes none (refuseBody). Returns the routes, for the operator and for
 * tests that walk them.
 */
export function guardRoutes(router: Router<GatewayState>, access: RouteAccess, credential: Credential | null, lockout: CredentialLockout, takesBody: TakesBody): RouteInfo[] {
  if (guarded.has(router)) throw new Error('router guarded twice');
  guarded.add(router);
  if ((access === 'public') !== (credential === null)) throw new Error(`a ${access} route needs ${credential ? 'no' : 'a'} credential`);
  // @koa/router matches without regard to case by default; the gateway's paths have one spelling.
  if (router.opts.sensitive !== true) throw new Error(`routers are created with { sensitive: true } (${router.opts.prefix ?? 'no prefix'})`);
  const routes: RouteInfo[] = [];
  for (const layer of router.stack) {
    if (layer.methods.length === 0) continue;
    if (typeof layer.path !== 'string') throw new Error('routes are declared by path patterns');
    const marker = layer.stack.find((m): m is StatusMarker => STATUSES in m);
    const bodiless = new Set(layer.methods.filter((method) => !READS.has(method) && !takesBody(method, layer.path as string)));
    layer.stack.unshift(routeGuard(access, credential, lockout, marker?.[STATUSES] ?? null, bodiless) as (typeof layer.stack)[number]);
    for (const method of layer.methods) routes.push({ method, path: layer.path, access });
  }
  return routes;
}

function routeGuard(access: RouteAccess, credential: Credential | null, lockout: CredentialLockout, statuses: readonly number[] | null, bodiless: ReadonlySet<string>) {
  const lockedOutAnswer = !statuses || statuses.includes(429) ? 429 : 401;
  const refusesBadQueries = !statuses || statuses.includes(400);
  return async (ctx: GatewayContext, next: Next): Promise<void> => {
    const mounted = ctx.state.mountedCredential;
    if (mounted) {
      if (mounted.access !== access) throw new ApiError(404, 'not_found', `no route for ${ctx.method} ${ctx.path.replace(/[^\x20-\x7e]/g, '\uFFFD')}`);
      await authenticate(ctx, mounted.credential, lockout, lockedOutAnswer);
    } else if (credential) {
      await authenticate(ctx, credential, lockout, lockedOutAnswer);
    }
    if (Object.values(ctx.params ?? {}).some((value) => !isSafeText(String(value)))) {
      throw new ApiError(404, 'not_found', `no resource at ${ctx.method} ${ctx.path.replace(/[^\x20-\x7e]/g, '\uFFFD')}`);
    }
    if (refusesBadQueries) assertSafeText(ctx.query);
    if (bodiless.has(ctx.method)) await refuseBody(ctx);
    await next();
  };
}

function authenticate(ctx: GatewayContext, credential: Credential, lockout: CredentialLockout, lockedOutAnswer: 401 | 429): Promise<void> {
  const lockedOut = lockedOutAnswer === 401 ? () => credential.refusal() : tooManyFailures;
  return lockout.admit(ctx.ip, { guessable: credential.guessable, presented: () => credential.presented(ctx) }, lockedOut, () => credential.check(ctx));
}

/**
 * The routers as one middleware: of each request, only the routers with a route on its path run
 * (each as its routes() then its allowedMethods(), in mounting order). Mounted one after the
 * other, every router added two middleware to every request's chain and tested the path against
 * each of its layers' regular expressions (with twenty routers, 0.03 ms of every paid call).
 * Here a router is only asked to match paths that begin with the literal start of one of its
 * routes' patterns (no route of it can match another). A router with no route on the path only
 * records what it matched (at most middleware of its own, given by `use`, which has no methods
 * and so adds nothing to the Allow header), and runs none of it: skipping it changes no answer.
 * Its middleware is not a route for this purpose: the shaped routers' `use` covers their whole
 * prefix as a regular expression, which has no literal start, and counted as a layer it sent
 * every request through three routers' matching. A path no router knows goes through the last
 * router alone, which answers it as they all did (an empty 404, or 501 for a method no router
 * implements: errorMiddleware shapes both). The routers are complete when mounted (guardRoutes
 * has walked their layers).
 */
export function routeDispatch(routers: readonly Router<GatewayState>[]): Middleware<GatewayState> {
  if (routers.length === 0) throw new Error('routeDispatch needs a router');
  // The literal starts are compared case-sensitively with the request's own path, and a router
  // that matches by host or chooses among its matching layers is not one this skipping was shown
  // equivalent for; nor one with methods of its own (the router that runs decides 501 for a
  // method none implements), or with a handler for its not-found event (none is ever added here).
  for (const { opts } of routers) {
    if (opts.sensitive !== true || opts.host !== undefined || opts.routerPath !== undefined || opts.exclusive || opts.methods !== undefined) {
      throw new Error(`routeDispatch takes case-sensitive routers without host, routerPath, exclusive or methods (${opts.prefix ?? 'no prefix'})`);
    }
  }
  const mounted = routers.map((router) => {
    const routes = precomposedRoutes(router);
    const allowedMethods = router.allowedMethods() as Middleware<GatewayState>;
    const routeLayers = router.stack.filter(isRoute);
    return {
      starts: [...new Set(routeLayers.map(literalStart))],
      routeLayers,
      steps: [routes, allowedMethods],
      // The two steps as one, for a request only this router has a route for (nearly all).
      run: (ctx: GatewayContext, next: Next) => routes(ctx, () => allowedMethods(ctx, next)),
    };
  });
  type Mounted = (typeof mounted)[number];
  const last = mounted[mounted.length - 1]!;
  return (ctx, next) => {
    const path = routerPathOf(ctx);
    // What Router#match(path, method).path.some(isRoute) says, without building its lists.
    let only: Mounted | undefined;
    let more: Mounted[] | undefined;
    for (const m of mounted) {
      if (!m.starts.some((start) => path.startsWith(start)) || !m.routeLayers.some((layer) => layer.match(path))) continue;
      if (only === undefined) only = m;
      else (more ??= [only]).push(m);
    }
    if (more) return inSequence(more.flatMap((m) => m.steps), ctx, next);
    return Promise.resolve((only ?? last).run(ctx, next));
  };
}

/** The path a router's dispatch matched, for its layers' parameters (set by precomposedRoutes). */
const DISPATCHED_PATH = Symbol('dispatched path');

/** The properties @koa/router's dispatch sets on a request's context, which its allowedMethods(), Koa and handlers read. */
interface RouterContext {
  matched?: Layer[];
  router?: Router<GatewayState>;
  routeMatched?: boolean;
  captures?: string[];
  params: Record<string, string>;
  request: { params?: Record<string, string> };
  routerPath?: string;
  routerName?: string;
  _matchedRoute?: string;
  _matchedRouteName?: string;
  [DISPATCHED_PATH]?: string;
}

/**
 * What `router.routes()` of @koa/router 15.7 (pinned) does for the routers routeDispatch takes
 * (case-sensitive; no host, router path, exclusive matching or own methods), with each layer's
 * chain (the layer's parameters set on the context, then its middleware) composed once here,
 * where routes() composes it for every request and reads the request's host to match a host no
 * router of the gateway has: together a few microseconds a request. A handler of the router's
 * not-found event would not run (none is ever added). A layer added to the router after it was
 * mounted gets its chain made when it matches; a layer's middleware is read at mount (guardRoutes
 * has put its guard first by then).
 */
function precomposedRoutes(router: Router<GatewayState>): Middleware<GatewayState> {
  const chains = new Map(router.stack.map((layer) => [layer, layerChain(layer)]));
  const chainOf = (layer: Layer) => chains.get(layer) ?? layerChain(layer);
  return (ctx, next) => {
    const context = ctx as GatewayContext & RouterContext;
    const path = routerPathOf(ctx);
    const matched = router.match(path, ctx.method);
    if (context.matched) context.matched.push(...matched.path);
    else context.matched = matched.path;
    context.router = router;
    context.routeMatched = matched.route;
    if (!matched.route) return next();
    context[DISPATCHED_PATH] = path;
    const layers = matched.pathAndMethod;
    let route: Layer | undefined;
    for (let i = layers.length - 1; i >= 0 && !route; i--) if (layers[i]!.methods.length > 0) route = layers[i];
    if (route) {
      context._matchedRoute = route.path as string;
      if (route.name) context._matchedRouteName = route.name;
    }
    if (layers.length === 1) return chainOf(layers[0]!)(ctx, next);
    return inSequence(layers.map(chainOf), ctx, next);
  };
}

/** A layer's chain as @koa/router's dispatch makes it: the layer's parameters set on the context, then its middleware. */
function layerChain(layer: Layer): Middleware<GatewayState> {
  const withParameters: Middleware<GatewayState> = (ctx, next) => {
    const context = ctx as GatewayContext & RouterContext;
    const path = context[DISPATCHED_PATH] ?? routerPathOf(ctx);
    context.captures = layer.captures(path);
    context.request.params = layer.params(path, context.captures || [], context.params);
    context.params = context.request.params;
    context.routerPath = layer.path as string;
    context.routerName = layer.name || undefined;
    context._matchedRoute = layer.path as string;
    if (layer.name) context._matchedRouteName = layer.name;
    return next();
  };
  const middleware = [withParameters, ...(layer.stack as Middleware<GatewayState>[])];
  return (ctx, next) => inSequence(middleware, ctx, next);
}

/** The path @koa/router itself matches on (Router#_getRequestPath, no router path given): a mount's rewritten path first. */
function routerPathOf(ctx: GatewayContext): string {
  return (ctx as { newRouterPath?: string }).newRouterPath || ctx.path;
}

/** A route (a layer with methods), not middleware given by `use`. */
function isRoute(layer: Layer): boolean {
  return layer.methods.length > 0;
}

/**
 * The text every path a layer matches begins with: its pattern up to the first parameter,
 * wildcard, optional group or escape; nothing for a pattern given as a regular expression.
 */
function literalStart(layer: Layer): string {
  if (typeof layer.path !== 'string' || layer.opts.pathAsRegExp) return '';
  const special = layer.path.search(/[:*{}()\\?]/);
  return special === -1 ? layer.path : layer.path.slice(0, special);
}

/**
 * `middleware` run as one chain ahead of `next`, as koa-compose runs Koa's and @koa/router's: a
 * middleware's synchronous throw is the chain's rejection, and a `next` called a second time is
 * refused rather than running the rest of the chain again.
 */
function inSequence(middleware: readonly Middleware<GatewayState>[], ctx: GatewayContext, next: Next): Promise<void> {
  let reached = -1;
  const step = (i: number): Promise<void> => {
    if (i <= reached) return Promise.reject(new Error('next() called multiple times'));
    reached = i;
    try {
      return Promise.resolve(i === middleware.length ? next() : middleware[i]!(ctx, () => step(i + 1)));
    } catch (err) {
      return Promise.reject(err);
    }
  };
  return step(0);
}
