import { expect } from 'chai';
import { CatalogError, defineModelType, validateCatalog } from '../../src/billing/catalog';
import { chatModelType } from '../../src/chat/model-type';
import { ALL_MODEL_TYPES } from '../../src/model-types';

/** The catalog checks each model's pricing and capabilities with the model types it is given, and only those. */
describe('catalog: model types are passed in', () => {
  const chat = (capabilities: Record<string, unknown>) => ({
    models: [{ id: 'c', type: 'chat', channel: 'default', owned_by: 'gateway', created: 0, pricing: { input_per_million: 1, output_per_million: 2 }, capabilities }],
  });

  it('checks a model against the schema of its type when that type is given', () => {
    expect(() => validateCatalog(chat({ max_output_tokens: 10, responses: true }), 't', [chatModelType])).to.throw(CatalogError, /model c capabilities must have required property 'context_window'/);
    expect(validateCatalog(chat({ max_output_tokens: 10, context_window: 100, responses: true }), 't', [chatModelType])).to.have.length(1);
  });

  it('gives a type it was not given only the base checks', () => {
    expect(validateCatalog(chat({ anything: 1 }), 't', [])).to.have.length(1);
    const strict = defineModelType('chat', { pricing: { type: 'object', maxProperties: 0 }, capabilities: { type: 'object' } });
    expect(() => validateCatalog(chat({}), 't', [strict])).to.throw(CatalogError, /model c pricing/);
  });

  it('lists every type of the built-in catalog exactly once', () => {
    const types = ALL_MODEL_TYPES.map((t) => t.type);
    expect(new Set(types).size).to.equal(types.length);
    expect(types).to.include.members(['chat', 'video', 'agent', 'search', 'bot', 'image', 'podcast', 'subtitle_erase', 'minutes', 'asset_verification']);
  });
});
