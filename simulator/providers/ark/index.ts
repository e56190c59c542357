/** The simulated Volcengine Ark (see common.ts): every Ark API the gateway speaks, under `/ark/api/v3`. */
import type { ExtraRoute } from '../../route';
import { arkVideoTaskRoutes } from './video-tasks';

export { ARK_BASE_PATH, SIM_ARK_API_KEY } from './common';

export function arkRoutes(): ExtraRoute[] {
  return [...arkVideoTaskRoutes()];
}
