import Router from '@koa/router';
import { expect } from 'chai';
import type { GatewayState } from '../../src/http/context';
import { CredentialLockout } from '../../src/http/credential-lockout';
import { guardRoutes, specStatuses } from '../../src/http/routing';

describe('guardRoutes', () => {
  const lockout = () => new CredentialLockout({ maxFailures: 1, windowMs: 1000, lockoutMs: 1000, maxAddresses: 10 });
  const noop = () => undefined;
  const takesBody = () => true;

  it('refuses a router that matches paths without regard to case, so none can be forgotten', () => {
    const router = new Router<GatewayState>();
    router.get('/v1/x', noop);
    expect(() => guardRoutes(router, 'public', null, lockout(), takesBody)).to.throw(/sensitive: true/);
  });

  it('lists every route with its methods and access, and guards a router once only', () => {
    const router = new Router<GatewayState>({ prefix: '/v1/things', sensitive: true });
    router.get('/:id', specStatuses(401, 404), noop);
    router.post('/', noop);
    router.use(noop);
    const routes = guardRoutes(router, 'public', null, lockout(), takesBody);
    expect(routes).to.deep.equal([
      { method: 'HEAD', path: '/v1/things/:id', access: 'public' },
      { method: 'GET', path: '/v1/things/:id', access: 'public' },
      { method: 'POST', path: '/v1/things', access: 'public' },
    ]);
    expect(() => guardRoutes(router, 'public', null, lockout(), takesBody)).to.throw(/twice/);
  });
});
