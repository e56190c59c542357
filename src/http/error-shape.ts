import Router from '@koa/router';
import type { GatewayState } from './context';
import type { ErrorShape } from './errors';

interface ShapedGroup {
  readonly shape: ErrorShape;
  readonly prefixes: readonly string[];
}

const groups = new WeakMap<Router<GatewayState>, ShapedGroup>();

/**
 * A router of an endpoint group whose errors use another documented shape than the default
 * (`openai`). Every error of its routes is rendered in `shape`, the route guard's refusals
 * included (its middleware runs before any route's). A request matching none of its routes (404,
 * 405) gets the shape too when its path lies under one of `prefixes`: a prefix ending in `/`
 * covers the paths below it, any other the path itself and the paths below it.
 */
export function shapedRouter(shape: ErrorShape, options: { prefix?: string; prefixes: readonly string[] }): Router<GatewayState> {
  // Created here, so this middleware is the router's first: it wraps every route.
  const router = new Router<GatewayState>({ ...(options.prefix ? { prefix: options.prefix } : {}), sensitive: true });
  router.use((ctx, next) => {
    ctx.state.errorShape = shape;
    return next();
  });
  groups.set(router, { shape, prefixes: options.prefixes });
  return router;
}

function isUnder(path: string, prefix: string): boolean {
  return prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix || path.startsWith(`${prefix}/`);
}

/** The shape of an unmatched path: that of the shaped router whose prefixes cover it, else `openai`. */
export function unmatchedShape(routers: readonly Router<GatewayState>[]): (path: string) => ErrorShape {
  const declared = routers.flatMap((router) => {
    const group = groups.get(router);
    return group ? [group] : [];
  });
  return (path) => declared.find((group) => group.prefixes.some((prefix) => isUnder(path, prefix)))?.shape ?? 'openai';
}
