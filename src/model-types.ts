import type { ModelType } from './billing/catalog';
import { agentModelType, botModelType, searchModelType } from './agents/model-types';
import { assetVerificationModelType } from './assets/model-type';
import { chatModelType } from './chat/model-type';
import { imageModelType, podcastModelType, subtitleEraseModelType } from './media-tasks/model-types';
import { minutesModelType } from './minutes/model-type';
import { videoModelType } from './video/model-type';

/**
 * Every model type the catalog knows how to check, handed to the Catalog by the composition root.
 * All of them, whichever features a gateway mounts: a catalog file is checked the same way by every
 * gateway that reads it.
 */
export const ALL_MODEL_TYPES: readonly ModelType[] = [
  chatModelType,
  videoModelType,
  agentModelType,
  searchModelType,
  botModelType,
  imageModelType,
  podcastModelType,
  subtitleEraseModelType,
  minutesModelType,
  assetVerificationModelType,
];
