import { agentsFeature } from './agents/feature';
import { assetsFeature } from './assets/feature';
import { chatFeature } from './chat/feature';
import { mediaTasksFeature } from './media-tasks/feature';
import { minutesFeature } from './minutes/feature';
import { filesFeature } from './uploads/feature';
import { videoFeature } from './video/feature';
import type { FeatureFactory } from './gateway';

/** The capabilities `npm start` serves, in the order their routes are mounted. */
export function defaultFeatures(): FeatureFactory[] {
  return [chatFeature, videoFeature, agentsFeature, mediaTasksFeature, minutesFeature, filesFeature, assetsFeature];
}
