import type { AuthenticatedKey } from '../accounts/service';
import type { Catalog, ModelEntry } from '../billing/catalog';
import { ApiError } from '../http/errors';
import { keyAllows } from '../http/models-access';

/** A model an agent depends on by configuration; its absence is the operator's error, not the client's. */
export function configuredModel(catalog: Catalog, id: string, type: string, role: string): ModelEntry {
  const model = catalog.get(id);
  if (!model || model.type !== type) throw new ApiError(503, 'model_unavailable', `the ${role} model '${id}' is not in the catalog as a ${type} model`);
  return model;
}

/**
 * `model_not_allowed` naming every model of `needed` that a restricted key may not use: 403 on the
 * risk endpoint, 400 where the spec's status list has no 403 (web Q&A). Keys restrict models only:
 * a channel is allowed through the models that use it.
 */
export function requireAllowed(auth: AuthenticatedKey, needed: readonly { readonly id: string }[], what: string, status: 400 | 403 = 403): void {
  const missing = needed.filter((m) => !keyAllows(auth, m.id)).map((m) => `'${m.id}'`);
  if (missing.length === 0) return;
  throw new ApiError(status, 'model_not_allowed', `this API key may not use ${missing.join(', ')}; ${what} needs ${needed.map((m) => `'${m.id}'`).join(', ')}`, { param: 'model' });
}
