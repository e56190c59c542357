import { priceLine, pricingOf, type Pricing } from '../billing/money';
import { defineModelType, MONEY_SCHEMA, type ModelEntry } from '../billing/catalog';

/**
 * The catalog type `asset_verification`: the provider service that verifies a real person (consent
 * and liveness) for an asset group and then processes the group's reference images. Priced per
 * verification session; the images of a verified group cost nothing more.
 */
export interface AssetVerificationPricing {
  readonly per_session: number;
}

export const assetVerificationModelType = defineModelType<AssetVerificationPricing, Readonly<{ upstream_model?: string }>>('asset_verification', {
  pricing: { type: 'object', properties: { per_session: MONEY_SCHEMA }, required: ['per_session'], additionalProperties: false },
  capabilities: { type: 'object', properties: { upstream_model: { type: 'string', minLength: 1 } }, additionalProperties: false },
});

export function verificationFee(model: ModelEntry): number {
  return (assetVerificationModelType.readPricing(model)).per_session;
}

/** One verification session at the per-session fee. */
export function verificationPricing(model: ModelEntry): Pricing {
  return pricingOf(priceLine({ sessions: 1 }, { sessions: verificationFee(model) }));
}
