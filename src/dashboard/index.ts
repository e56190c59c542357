import type { Next } from 'koa';
import type { AccountService } from '../accounts/service';
import { withAmbientMetadata } from '../eventstore/ambient-metadata';
import type { EventStore } from '../eventstore/port';
import type { GatewayContext } from '../http/context';
import type { Dashboard } from '../http/app';
import type { MountedCredential } from '../http/routing';
import { dashboardPages, DEFAULT_WEB_ROOT } from './pages';
import { playgroundCredential, playgroundPath } from './playground';
import { sessionCredential } from './session-credential';
import { sessionRouter } from './session-routes';
import { DashboardSessions } from './sessions';

// The HTTP app defines what it mounts; the dashboard provides it.
export type { Dashboard };

export interface DashboardDeps {
  readonly store: EventStore;
  readonly accounts: AccountService;
  readonly adminToken: string;
  readonly clock: () => Date;
  readonly webRoot?: string;
}

const MOUNTED = /^\/dashboard\/api(\/admin)?(\/v1(?:\/.*)?)$/;

export function createDashboard(deps: DashboardDeps): Dashboard {
  const sessions = new DashboardSessions(deps.store, deps.clock);
  const checks = { sessions, accounts: deps.accounts, adminToken: deps.adminToken, now: () => deps.clock().getTime() };
  const account = { access: 'api_key', credential: sessionCredential('account', checks) } as const;
  const operator = { access: 'admin', credential: sessionCredential('operator', checks) } as const;
  /** The API route a dashboard path maps onto, with the credential that replaces the route's own; null for other paths. */
  const apiTarget = (path: string): { path: string; credential: MountedCredential } | null => {
    const match = MOUNTED.exec(path);
    if (match) return { path: `${match[1] ?? ''}${match[2]}`, credential: match[1] ? operator : account };
    // The playground (src/dashboard/playground.ts): a /v1 route on behalf of a key the owner picked.
    const playground = playgroundPath(path);
    return playground && { path: playground.apiPath, credential: playgroundCredential(playground.keyId, checks) };
  };
  return {
    /**
     * The same routers and handlers as /v1 and /admin/v1, with the session as the credential
     * (the route guard asks ctx.state.mountedCredential), so the dashboard can do exactly what
     * the API lets its credential do. Every event appended while serving such a request says it
     * came from the dashboard, and from which session.
     */
    mount: (ctx: GatewayContext, next: Next) => {
      const target = apiTarget(ctx.path);
      if (!target) return next();
      // What the dashboard reads (balances, keys, the webhook secret) must not stay in a shared
      // computer's browser cache after sign-out.
      ctx.set('cache-control', 'no-store');
      ctx.path = target.path;
      ctx.state.mountedCredential = target.credential;
      return withAmbientMetadata(() => (ctx.state.dashboardSession ? { via: 'dashboard', session_id: ctx.state.dashboardSession.id } : {}), next);
    },
    pages: dashboardPages(deps.webRoot ?? DEFAULT_WEB_ROOT),
    sessionRouter: (lockout) => sessionRouter({ ...checks, lockout }),
  };
}
