import type { AuthenticatedKey } from '../accounts/service';
import type { Catalog, ModelEntry } from '../billing/catalog';
import { ApiError } from './errors';

/** May this key use this model? A key without a list may use every model. */
export function keyAllows(auth: AuthenticatedKey, modelId: string): boolean {
  return auth.allowedModels === null || auth.allowedModels.includes(modelId);
}

/**
 * The catalog entry a request names: 400 `model_not_found` when the catalog has no such model of
 * this type, 400 `model_not_allowed` when the key is restricted to other models (the spec's status
 * lists of these endpoints have neither 403 nor 404).
 */
export function resolveModel(catalog: Catalog, auth: AuthenticatedKey, modelId: string, types: readonly string[]): ModelEntry {
  const model = catalog.get(modelId);
  if (!model || !types.includes(model.type)) {
    throw new ApiError(400, 'model_not_found', `The model '${modelId}' does not exist or is not a ${types.join(' or ')} model`, { param: 'model' });
  }
  if (!keyAllows(auth, model.id)) throw new ApiError(400, 'model_not_allowed', `this API key may not use the model '${modelId}'`, { param: 'model' });
  return model;
}
