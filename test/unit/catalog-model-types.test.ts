import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { agentModelType } from '../../src/agents/model-types';
import { DIMENSIONS } from '../../src/agents/risk/dimensions';
import { CatalogError, DEFAULT_CATALOG_FILE, defineModelType, validateCatalog, type ModelEntry } from '../../src/billing/catalog';
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

  it('names channels by the rule of CHANNELS and the admin API, in `channel` and in `channels`', () => {
    const on = (where: Record<string, unknown>) => ({ models: [{ ...chat({}).models[0]!, channel: undefined, ...where }] });
    for (const name of ['a b', 'health-x', '-a', 'a/b', 'x'.repeat(65)]) {
      expect(() => validateCatalog(on({ channel: name }), 't', []), name).to.throw(CatalogError, /channel/);
      expect(() => validateCatalog(on({ channels: [{ name }] }), 't', []), name).to.throw(CatalogError, /channels/);
    }
    expect(validateCatalog(on({ channels: [{ name: 'ark-2.primary_b' }] }), 't', [])).to.have.length(1);
  });

  it('lists every type of the built-in catalog exactly once', () => {
    const types = ALL_MODEL_TYPES.map((t) => t.type);
    expect(new Set(types).size).to.equal(types.length);
    expect(types).to.include.members(['chat', 'video', 'agent', 'search', 'bot', 'image', 'podcast', 'subtitle_erase', 'minutes', 'asset_verification']);
  });
});

/** The risk agent's official sources are checked when the catalog loads (docs/api/agents.md). */
describe("catalog: the risk agent's official sources", () => {
  const builtIn = (JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: ModelEntry[] }).models.find((m) => m.id === 'risk-agent')!;
  const sources = builtIn.capabilities['official_sources'] as Record<string, string[]>;
  const withSources = (official: unknown) => ({ models: [{ ...builtIn, capabilities: { ...builtIn.capabilities, official_sources: official } }] });
  const load = (official: unknown) => () => validateCatalog(withSources(official), 't', [agentModelType]);

  it('names the registry and each of the nine dimensions, as the built-in catalog does', () => {
    expect(Object.keys(sources)).to.have.members(['identity', ...DIMENSIONS.map((d) => d.data_type)]);
    expect(load(sources)()).to.have.length(1);
  });

  it('refuses a missing search, an unknown one, an empty list, more than 20 domains, a repeated one and anything but a lower-case host name', () => {
    const { shixin: _shixin, ...withoutShixin } = sources;
    expect(load(withoutShixin)).to.throw(CatalogError, /official_sources must have required property 'shixin'/);
    expect(load({ ...sources, gongshang: ['gsxt.gov.cn'] })).to.throw(CatalogError, /official_sources must NOT have additional properties/);
    expect(load({ ...sources, cpws: [] })).to.throw(CatalogError, /official_sources\/cpws must NOT have fewer than 1 items/);
    expect(load({ ...sources, cpws: Array.from({ length: 21 }, (_, i) => `court${i}.gov.cn`) })).to.throw(CatalogError, /official_sources\/cpws must NOT have more than 20 items/);
    expect(load({ ...sources, cpws: ['court.gov.cn', 'court.gov.cn'] })).to.throw(CatalogError, /official_sources\/cpws must NOT have duplicate items/);
    for (const bad of ['Court.gov.cn', 'https://court.gov.cn', 'court.gov.cn/wenshu', 'localhost', '*.court.gov.cn', 'court..gov.cn', '-court.gov.cn', 'court.gov.cn.']) {
      expect(load({ ...sources, cpws: [bad] }), bad).to.throw(CatalogError, /official_sources\/cpws\/0 must match pattern/);
    }
    expect(load({ ...sources, cpws: ['xn--fiqs8s.gov.cn', 'a-b.court.gov.cn'] })()).to.have.length(1);
  });
});
