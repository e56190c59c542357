import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Next } from 'koa';
import type { GatewayMetrics } from '../../metrics/gateway-metrics';
import { matchedRoute, type GatewayContext, type GatewayState } from '../context';

/**
 * `GET /metrics` in the Prometheus text format. With METRICS_TOKEN set, only
 * `Authorization: Bearer <METRICS_TOKEN>` is answered (401 otherwise); unset, it is open, for a
 * scraper on a private network.
 */
export function metricsRouter(metrics: GatewayMetrics, token: string | undefined): Router<GatewayState> {
  const router = new Router<GatewayState>({ sensitive: true });
  router.get('/metrics', async (ctx) => {
    if (token !== undefined && !bearerMatches(ctx.get('authorization'), token)) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer');
      ctx.body = { error: { message: 'invalid or missing metrics token', type: 'invalid_request_error', code: 'invalid_metrics_token', param: null } };
      return;
    }
    ctx.type = metrics.contentType;
    ctx.body = await metrics.text();
  });
  return router;
}

function bearerMatches(header: string, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  if (!given) return false;
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** Counts and times every request by its route template (`unmatched` when no route matched). */
export function httpMetrics(metrics: GatewayMetrics) {
  return async (ctx: GatewayContext, next: Next): Promise<void> => {
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.observeHttp(ctx.method, matchedRoute(ctx) ?? 'unmatched', ctx.status, (performance.now() - started) / 1000);
    }
  };
}
