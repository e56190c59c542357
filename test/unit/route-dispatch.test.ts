import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import type { GatewayState } from '../../src/http/context';
import { routeDispatch } from '../../src/http/routing';

/**
 * routeDispatch runs only the routers with a route on the request's path. It must answer every
 * request as the routers mounted one after the other did (routes() then allowedMethods() each):
 * same status, Allow header, body and matched route, for matched routes, other methods on known
 * paths, unknown paths, methods no router implements, and a router whose own middleware covers its
 * prefix.
 */
function routers(): Router<GatewayState>[] {
  const health = new Router<GatewayState>({ sensitive: true });
  health.get('/healthz', (ctx) => void (ctx.body = 'ok'));
  const shaped = new Router<GatewayState>({ prefix: '/v1/agent', sensitive: true });
  shaped.use(async (ctx, next) => {
    ctx.set('x-shape', 'agent');
    await next();
  });
  shaped.post('/chat', (ctx) => void (ctx.body = { agent: true }));
  // A route with a parameter behind the router's middleware: two layers' chains for one request.
  shaped.get('turn', '/chat/:turn', (ctx) => void (ctx.body = { turn: ctx.params.turn }));
  const tasks = new Router<GatewayState>({ sensitive: true });
  tasks.get('task', '/v1/tasks/:id', (ctx) => void (ctx.body = { id: ctx.params.id }));
  tasks.post('/v1/tasks', (ctx) => void (ctx.body = { created: true }));
  tasks.get('/v1/files{/:name}', (ctx) => void (ctx.body = { file: ctx.params.name ?? null }));
  // Under the shaped router's prefix, where only its middleware matches.
  tasks.get('/v1/agent/status', (ctx) => void (ctx.body = { status: 'up' }));
  // Middleware with a parameter of another name ahead of a route: the two layers' parameters merge.
  tasks.use('/v1/tasks/:task', async (ctx, next) => {
    ctx.set('x-use-params', JSON.stringify(ctx.params));
    await next();
  });
  // Two methods on one path.
  tasks.get('/v1/tasks/:id/state', (ctx) => void (ctx.body = { state: ctx.params }));
  tasks.put('/v1/tasks/:id/state', (ctx) => void (ctx.body = { put: ctx.params }));
  // The same path in a later router, with another method.
  const more = new Router<GatewayState>({ sensitive: true });
  more.delete('/v1/tasks/:id', (ctx) => void (ctx.body = { deleted: ctx.params.id }));
  // Chains that misbehave: a synchronous throw caught by the middleware ahead of it, and a next()
  // called twice (koa-compose refuses the second call: 500, the route not run again).
  const odd = new Router<GatewayState>({ sensitive: true });
  odd.use('/v1/odd/throws', (ctx, next) =>
    next().catch(() => {
      ctx.body = 'caught';
    }),
  );
  odd.get('/v1/odd/throws', () => {
    throw new Error('thrown synchronously');
  });
  let runs = 0;
  odd.use('/v1/odd/twice', async (_ctx, next) => {
    await next();
    await next();
  });
  odd.get('/v1/odd/twice', (ctx) => void (ctx.body = { runs: ++runs }));
  // Middleware that rewrites the path: the route's parameters are still those of the path matched.
  odd.use('/v1/odd/rewrites/:id', (ctx, next) => {
    ctx.path = '/elsewhere';
    return next();
  });
  odd.get('/v1/odd/rewrites/:id', (ctx) => void (ctx.body = { params: ctx.params }));
  const routers = [health, shaped, tasks, more, odd];
  for (const [i, name] of ['health', 'shaped', 'tasks', 'more', 'odd'].entries()) (routers[i] as unknown as { label: string }).label = name;
  return routers;
}

/**
 * The matched route, as the metrics and the ledger read it, and what else @koa/router's dispatch
 * leaves on the context for handlers and its allowedMethods(), echoed for the comparison.
 */
function app(mount: (app: Koa<GatewayState>, routers: Router<GatewayState>[]) => void): Koa<GatewayState> {
  const koa = new Koa<GatewayState>();
  // The misbehaving chains' 500s are expected: not printed.
  koa.silent = true;
  koa.use(async (ctx, next) => {
    await next();
    const c = ctx as unknown as Record<string, unknown> & { matched?: { path: unknown; methods: string[] }[]; router?: { label?: string } };
    ctx.set('x-matched-route', String(c._matchedRoute ?? '-'));
    ctx.set(
      'x-routing',
      encodeURIComponent(
        JSON.stringify({
          params: c.params ?? null,
          requestParams: (c.request as { params?: unknown }).params ?? null,
          captures: c.captures ?? null,
          routerPath: c.routerPath ?? null,
          routerName: c.routerName ?? null,
          matchedRouteName: c._matchedRouteName ?? null,
          routeMatched: c.routeMatched ?? null,
          router: c.router?.label ?? null,
          matched: c.matched?.map((layer) => [String(layer.path), layer.methods]) ?? null,
        }),
      ),
    );
  });
  mount(koa, routers());
  return koa;
}

async function listen(koa: Koa<GatewayState>): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const REQUESTS: readonly [string, string][] = [
  ['GET', '/healthz'],
  ['POST', '/healthz'],
  ['POST', '/v1/agent/chat'],
  ['GET', '/v1/agent/chat'],
  ['GET', '/v1/agent/chat/t%20one'],
  ['POST', '/v1/agent/chat/t2'],
  ['GET', '/v1/agent/unknown'],
  ['GET', '/v1/tasks/t_1'],
  ['DELETE', '/v1/tasks/t_1'],
  ['PUT', '/v1/tasks/t_1'],
  ['POST', '/v1/tasks'],
  ['OPTIONS', '/v1/tasks/t_1'],
  ['GET', '/nowhere'],
  ['PROPFIND', '/nowhere'],
  ['PROPFIND', '/v1/tasks/t_1'],
  ['GET', '/V1/TASKS/t_1'],
  ['GET', '/healthz/'],
  ['GET', '/v1/tasks/t_1/'],
  ['GET', '/v1/tasks'],
  ['GET', '/v1/task'],
  ['POST', '/v1/agent'],
  ['POST', '/v1/agentx/chat'],
  ['GET', '/v1/agent/status'],
  ['POST', '/v1/agent/status'],
  ['POST', '/v1/agent/chat/x'],
  ['POST', '/v1/agent/chat/x/y'],
  ['GET', '/v1/files'],
  ['GET', '/v1/files/a'],
  ['POST', '/v1/files/a'],
  ['HEAD', '/healthz'],
  ['HEAD', '/v1/tasks/t_1'],
  ['GET', '/v1/tasks/t_1/state'],
  ['PUT', '/v1/tasks/t_1/state'],
  ['HEAD', '/v1/tasks/t_1/state'],
  ['DELETE', '/v1/tasks/t_1/state'],
  ['GET', '/v1/odd/throws'],
  ['GET', '/v1/odd/twice'],
  ['GET', '/v1/odd/rewrites/7'],
];

/**
 * What routeDispatch leaves aside on purpose when several routers are mounted: a router with no
 * route on the path does not run, so it neither records the middleware layers of its own that
 * match (ctx.matched) nor becomes ctx.router; the routes matched, which allowedMethods() reads,
 * are the same.
 */
function skippedRoutersAside(routing: { router: string | null; matched: [string, string[]][] | null } | null) {
  return routing && { ...routing, router: null, matched: routing.matched?.filter(([, methods]) => methods.length > 0) ?? null };
}

async function answer(url: string, method: string, path: string) {
  const res = await fetch(url + path, { method });
  const routing = JSON.parse(decodeURIComponent(res.headers.get('x-routing') ?? 'null')) as { router: string | null; matched: [string, string[]][] | null } | null;
  return { status: res.status, allow: res.headers.get('allow'), shape: res.headers.get('x-shape'), use: res.headers.get('x-use-params'), route: res.headers.get('x-matched-route'), routing, body: await res.text() };
}

describe('routeDispatch: the routers as one middleware', () => {
  let sequential: Awaited<ReturnType<typeof listen>>;
  let dispatched: Awaited<ReturnType<typeof listen>>;

  before(async () => {
    sequential = await listen(app((koa, all) => all.forEach((router) => koa.use(router.routes()).use(router.allowedMethods()))));
    dispatched = await listen(app((koa, all) => koa.use(routeDispatch(all))));
  });

  after(async () => {
    await sequential.close();
    await dispatched.close();
  });

  it('answers every request as the routers mounted one after the other', async () => {
    const statuses = new Set<number>();
    for (const [method, path] of REQUESTS) {
      const expected = await answer(sequential.url, method, path);
      const actual = await answer(dispatched.url, method, path);
      expect({ ...actual, routing: skippedRoutersAside(actual.routing) }, `${method} ${path}`).to.deep.equal({ ...expected, routing: skippedRoutersAside(expected.routing) });
      statuses.add(expected.status);
    }
    // The table reaches every kind of answer it is meant to compare.
    expect([...statuses].sort()).to.deep.equal([200, 404, 405, 500, 501]);
  });

  it('answers as one router mounted alone does, leaving the same router, matched layers and parameters on the context', async () => {
    for (const index of [2, 4]) {
      const alone = await listen(app((koa, all) => koa.use(all[index]!.routes()).use(all[index]!.allowedMethods())));
      const dispatchedAlone = await listen(app((koa, all) => koa.use(routeDispatch([all[index]!]))));
      try {
        for (const [method, path] of REQUESTS) {
          const expected = await answer(alone.url, method, path);
          expect(await answer(dispatchedAlone.url, method, path), `${method} ${path}`).to.deep.equal(expected);
        }
      } finally {
        await alone.close();
        await dispatchedAlone.close();
      }
    }
  });

  it('asks a router to match only paths one of its routes may be on, whatever its middleware covers', async () => {
    const all = routers();
    const shaped = all[1]!;
    // Every test of a path against one of the router's layers, its middleware's included.
    let asked = 0;
    for (const layer of shaped.stack) {
      const match = layer.match.bind(layer);
      layer.match = (path) => {
        asked++;
        return match(path);
      };
    }
    const server = await listen(new Koa<GatewayState>().use(routeDispatch(all)));
    try {
      for (const path of ['/healthz', '/v1/tasks/t_1', '/v1/agent/status', '/nowhere']) expect((await fetch(server.url + path)).status, path).to.be.oneOf([200, 404]);
      expect(asked, 'paths outside /v1/agent/chat').to.equal(0);
      // Under its routes' literal start but on no route of it (its middleware alone matches): each
      // of its routes asked once by the dispatch, and the router not run (it would ask every layer).
      const routes = shaped.stack.filter((layer) => layer.methods.length > 0).length;
      expect((await fetch(`${server.url}/v1/agent/chat/x/y`, { method: 'POST' })).status).to.equal(404);
      expect(asked, 'a path only its middleware covers').to.equal(routes);
      expect((await fetch(`${server.url}/v1/agent/chat`, { method: 'POST' })).status).to.equal(200);
      expect(asked).to.be.greaterThan(routes * 2);
    } finally {
      await server.close();
    }
  });

  it('refuses a router it was not shown equivalent for: case-insensitive, by host, with its own path, exclusive, or with its own methods', () => {
    for (const options of [{}, { sensitive: false }, { sensitive: true, host: 'example.com' }, { sensitive: true, routerPath: '/x' }, { sensitive: true, exclusive: true }, { sensitive: true, methods: ['GET'] }]) {
      expect(() => routeDispatch([new Router<GatewayState>(options)]), JSON.stringify(options)).to.throw(/routeDispatch takes case-sensitive routers/);
    }
    expect(() => routeDispatch([new Router<GatewayState>({ sensitive: true })])).not.to.throw();
  });
});
