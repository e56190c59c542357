import { asrRoutes } from './asr';
import { botRoutes } from './bots';
import { eraseRoutes } from './erase';
import { imageRoutes } from './images';
import { providerRoutes } from './providers';
import { searchRoutes } from './search';
import type { ExtraRoute } from './server';

/** Every simulated provider API besides chat (which the server always mounts). */
export function allSimulatorRoutes(): ExtraRoute[] {
  return [...imageRoutes(), ...eraseRoutes(), ...asrRoutes(), ...searchRoutes(), ...botRoutes(), ...providerRoutes()];
}
