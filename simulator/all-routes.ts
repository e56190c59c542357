import { asrRoutes } from './asr';
import { imageRoutes } from './images';
import { podcastRoutes } from './podcasts';
import { providerRoutes } from './providers';
import type { ExtraRoute } from './server';

/** Every simulated provider API besides chat (which the server always mounts). */
export function allSimulatorRoutes(): ExtraRoute[] {
  return [...imageRoutes(), ...podcastRoutes(), ...asrRoutes(), ...providerRoutes()];
}
