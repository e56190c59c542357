import { expect } from 'chai';
import { CatalogError, validateCatalog } from '../../src/billing/catalog';
import { chatModelType, chatTokenLine, toolCallLines } from '../../src/chat/model-type';
import { recomputePricing, pricingOf, tokenLine } from '../../src/billing/money';

const BASE = { max_output_tokens: 10, context_window: 100, responses: true };
const catalogWith = (capabilities: Record<string, unknown>, pricing: Record<string, unknown> = {}) => ({
  models: [{ id: 'c', type: 'chat', channel: 'default', owned_by: 'gateway', created: 0, pricing: { input_per_million: 1_000_000, output_per_million: 4_000_000, ...pricing }, capabilities }],
});

describe('chat model type: what a model takes and how its tokens are priced', () => {
  it('requires the allowance of each part kind a model takes', () => {
    expect(() => validateCatalog(catalogWith({ ...BASE, vision: true }), 't', [chatModelType])).to.throw(CatalogError, /part_allowances/);
    expect(() => validateCatalog(catalogWith({ ...BASE, audio_input: true, part_allowances: { image: 5 } }), 't', [chatModelType])).to.throw(CatalogError, /audio/);
    expect(validateCatalog(catalogWith({ ...BASE, vision: true, file_input: true, part_allowances: { image: 5, file: 9 } }), 't', [chatModelType])).to.have.length(1);
    expect(validateCatalog(catalogWith({ ...BASE, vision: false }), 't', [chatModelType])).to.have.length(1);
  });

  it('refuses unknown capabilities and prices that are not money', () => {
    expect(() => validateCatalog(catalogWith({ ...BASE, teleport: true }), 't', [chatModelType])).to.throw(CatalogError);
    expect(() => validateCatalog(catalogWith(BASE, { cached_input_per_million: 0.5 }), 't', [chatModelType])).to.throw(CatalogError);
    expect(() => validateCatalog(catalogWith(BASE, { tool_call_prices: { web_search: -1 } }), 't', [chatModelType])).to.throw(CatalogError);
  });

  it('prices a call without cached input exactly as the plain token line', () => {
    const pricing = { input_per_million: 1_000_000, output_per_million: 4_000_000, cached_input_per_million: 250_000 };
    expect(chatTokenLine(pricing, { input: 1234, cachedInput: 0, output: 56 })).to.deep.equal(tokenLine(pricing, 1234, 56));
  });

  it('prices cached input at its own price, or as input when the model has none', () => {
    const line = chatTokenLine({ input_per_million: 1_000_000, output_per_million: 4_000_000, cached_input_per_million: 250_000 }, { input: 1000, cachedInput: 400, output: 10 });
    expect(line.units).to.deep.equal({ input_tokens: 600, cached_input_tokens: 400, output_tokens: 10 });
    // ceil((600 × 1e6 + 400 × 250e3 + 10 × 4e6) / 1e6) = 740
    expect(line.amount).to.equal(740);
    const unpriced = chatTokenLine({ input_per_million: 1_000_000, output_per_million: 4_000_000 }, { input: 1000, cachedInput: 400, output: 10 });
    expect(unpriced.amount).to.equal(tokenLine({ input_per_million: 1_000_000, output_per_million: 4_000_000 }, 1000, 10).amount);
    expect(recomputePricing(pricingOf(line, unpriced))).to.equal(line.amount + unpriced.amount);
  });

  it('never counts more cached tokens than input tokens', () => {
    const line = chatTokenLine({ input_per_million: 1_000_000, output_per_million: 0, cached_input_per_million: 0 }, { input: 10, cachedInput: 99, output: 0 });
    expect(line.units).to.deep.equal({ input_tokens: 0, cached_input_tokens: 10, output_tokens: 0 });
  });

  it('prices each built-in tool call at its price, in a stable order', () => {
    const lines = toolCallLines({ input_per_million: 1, output_per_million: 1, tool_call_prices: { web_search: 25_000, image_generation: 300_000 } }, { web_search: 2, image_generation: 1, file_search: 3 });
    expect(lines.map((l) => [l.units, l.amount])).to.deep.equal([
      [{ image_generation_calls: 1 }, 300_000],
      [{ web_search_calls: 2 }, 50_000],
    ]);
  });
});
