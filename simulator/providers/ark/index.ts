/** The simulated Volcengine Ark (see common.ts): every Ark API the gateway speaks, at Ark's base path `/api/v3`. */
import type { SimulatedProvider } from '../provider';
import { arkVideoTaskRoutes } from './video-tasks';

export const arkProvider: SimulatedProvider = {
  protocol: 'ark',
  title: 'Volcengine Ark: Seedance content-generation tasks',
  basePath: '/api/v3',
  routes: () => [...arkVideoTaskRoutes()],
};
