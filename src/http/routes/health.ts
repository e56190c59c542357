import Router from '@koa/router';
import type { GatewayState } from '../context';

export function healthRouter(isReady: () => boolean): Router<GatewayState> {
  const router = new Router<GatewayState>({ sensitive: true });
  router.get('/healthz', (ctx) => {
    const ready = isReady();
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ok' : 'unavailable' };
  });
  return router;
}
