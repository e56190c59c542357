/** The simulated Volcengine Ark (see common.ts): every Ark API the gateway speaks, at Ark's base path `/api/v3`. */
import type { SimulatedProvider } from '../provider';
import { arkBotRoutes } from './bots';
import { arkImageRoutes } from './images';
import { arkVideoTaskRoutes } from './video-tasks';

export const arkProvider: SimulatedProvider = {
  protocol: 'ark',
  title: 'Volcengine Ark: Seedance content-generation tasks, Seedream image generation, bots (方舟应用)',
  basePath: '/api/v3',
  routes: () => [...arkVideoTaskRoutes(), ...arkImageRoutes(), ...arkBotRoutes()],
};
