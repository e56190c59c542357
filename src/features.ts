import { agentsFeature } from './agents/feature';
import { assetsFeature } from './assets/feature';
import { chatFeature } from './chat/feature';
import type { GatewayFeature, Services } from './gateway';
import { mediaTasksFeature } from './media-tasks/feature';
import { minutesConsumers, minutesFeature } from './minutes/feature';
import { filesFeature } from './uploads/feature';
import { videoFeature } from './video/feature';

/**
 * The named services alone: what a feature is handed. The compiler checks that the names cover the
 * feature's Deps type; a feature cannot reach a service that is not listed here.
 */
function pick<K extends keyof Services>(services: Services, ...names: K[]): Pick<Services, K> {
  return Object.fromEntries(names.map((name) => [name, services[name]])) as Pick<Services, K>;
}

/** The capabilities `npm start` serves, in the order their routes are mounted, each wired to the services it uses. */
export function defaultFeatures(): GatewayFeature[] {
  return [
    { build: (s) => chatFeature(pick(s, 'catalog', 'upstreams', 'router', 'rateLimiter', 'accounts', 'settlements', 'config', 'metrics', 'pool', 'store', 'progress', 'clock')) },
    { build: (s) => videoFeature(pick(s, 'tasks', 'catalog', 'upstreams', 'router', 'accounts', 'rateLimiter', 'signer', 'clock', 'config')) },
    { build: (s) => agentsFeature(pick(s, 'catalog', 'upstreams', 'router', 'rateLimiter', 'accounts', 'settlements', 'signer', 'clock', 'store', 'progress', 'pool', 'config', 'logger')) },
    {
      build: (s) =>
        mediaTasksFeature(pick(s, 'tasks', 'catalog', 'upstreams', 'router', 'rateLimiter', 'limits', 'accounts', 'settlements', 'files', 'signer', 'store', 'progress', 'pool', 'clock', 'config', 'logger')),
    },
    { consumers: minutesConsumers, build: (s) => minutesFeature(pick(s, 'tasks', 'catalog', 'upstreams', 'router', 'rateLimiter', 'logger', 'files', 'signer', 'config')) },
    { build: (s) => filesFeature(pick(s, 'pool', 'store', 'logger', 'progress', 'files', 'signer', 'clock', 'config')) },
    { build: (s) => assetsFeature(pick(s, 'tasks', 'catalog', 'upstreams', 'router', 'pool', 'progress', 'rateLimiter', 'signer', 'clock', 'config')) },
  ];
}
