import type Router from '@koa/router';
import type { GatewayState } from './http/context';
import type { JobHandler } from './jobs/queue';

/**
 * A capability of the gateway: its HTTP routes and its background workers. Its process managers
 * are declared apart from it (they need settings only), so the composition root can start every
 * consumer before any service that waits on one exists.
 */
export interface Feature {
  readonly routers?: readonly Router<GatewayState>[];
  /** Job kinds the feature's consumers schedule (durable timers, side effects), by kind. */
  readonly jobHandlers?: Readonly<Record<string, JobHandler>>;
  start?(): void;
  stop?(): Promise<void>;
}

/**
 * Builds a feature from the few services it uses. Each feature names its own `Deps`; only the
 * composition root (src/gateway.ts, src/features.ts) knows every service and wires them in.
 */
export type FeatureFactory<Deps> = (deps: Deps) => Feature;

/** The gateway's clock: tests inject their own. */
export type Clock = () => Date;
