import type { Catalog, ModelEntry } from '../billing/catalog';
import { authOf, type GatewayContext } from '../http/context';
import { keyAllows } from '../http/models-access';

/** GET /v1/models[?type=…]: the OpenAI list shape with type, pricing and capabilities; a restricted key sees its models only. */
export function listModels(catalog: Catalog, ctx: GatewayContext): void {
  const type = typeof ctx.query.type === 'string' && ctx.query.type !== '' ? ctx.query.type : undefined;
  const auth = authOf(ctx);
  ctx.body = {
    object: 'list',
    data: catalog
      .list(type)
      .filter((m) => keyAllows(auth, m.id))
      .map(modelObject),
  };
}

function modelObject(m: ModelEntry): Record<string, unknown> {
  const { upstream_model: _internal, ...capabilities } = m.capabilities;
  return {
    id: m.id,
    object: 'model',
    created: m.created,
    owned_by: m.owned_by,
    type: m.type,
    description: m.description ?? null,
    pricing: { currency: 'CNY', unit: 'minor (0.000001 CNY)', ...m.pricing },
    capabilities,
  };
}

export function getModel(catalog: Catalog, ctx: GatewayContext, id: string): boolean {
  const model = catalog.get(id);
  if (!model || !keyAllows(authOf(ctx), model.id)) return false;
  ctx.body = modelObject(model);
  return true;
}
