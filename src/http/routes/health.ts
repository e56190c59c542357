import Router from '@koa/router';
import type { Readiness } from '../../lifecycle/readiness';
import type { GatewayState } from '../context';

/**
 * `/healthz` is liveness: the process answers HTTP (a restart is the remedy when it does not).
 * `/readyz` is readiness: 200 only while this gateway can serve requests, 503 with the reason
 * otherwise (route traffic elsewhere; the gateway recovers on its own when its database returns).
 */
export function healthRouter(readiness: () => Promise<Readiness>): Router<GatewayState> {
  const router = new Router<GatewayState>({ sensitive: true });
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const state = await readiness();
    ctx.set('cache-control', 'no-store');
    ctx.status = state.ready ? 200 : 503;
    ctx.body = state.ready ? { status: 'ready' } : { status: 'unavailable', reason: state.reason };
  });
  return router;
}
