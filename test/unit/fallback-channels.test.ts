import fs from 'node:fs';
import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { channelConfigs } from '../../src/config';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { PROTOCOLS } from '../../src/upstreams/protocols';
import { channelsServedBy, EXAMPLE_CHANNELS_FILE, type ChannelEntry } from '../../src/upstreams/registry';
import { testTempDir } from '../support/temp-dirs';

/** The fallback (no CHANNELS): the checked-in channels file, its base URLs moved onto the simulator. */
describe('the fallback channels (deploy/channels.example.json served by the simulator)', () => {
  const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
  const example = JSON.parse(fs.readFileSync(EXAMPLE_CHANNELS_FILE, 'utf8')) as ChannelEntry[];
  const options = { timeoutMs: 1234, maxConcurrency: 7 };

  it('is a valid CHANNELS value with an entry for every channel the built-in catalog names, each model on a protocol that serves its type', () => {
    const configs = channelConfigs(example, 'example');
    const names = new Set(configs.map((c) => c.name));
    for (const channel of catalog.channels()) expect(names, `channel ${channel}`).to.include(channel);
    for (const model of catalog.all()) {
      const protocol = configs.find((c) => c.name === model.channel)!.protocol;
      expect(PROTOCOLS.get(protocol)!.serves, `${model.id} (${model.type}) on ${model.channel}`).to.include(model.type);
    }
  });

  it("rewrites each real base URL's origin onto the simulator under its protocol's prefix, keeping path, protocol and credentials", () => {
    const served = channelsServedBy('http://127.0.0.1:4000', catalog, options);
    const byName = new Map(served.map((e) => [e.name, e]));
    expect(byName.get('default')?.base_url).to.equal('http://127.0.0.1:4000/v1');
    expect(byName.get('ark')?.base_url).to.equal('http://127.0.0.1:4000/ark/api/v3');
    expect(byName.get('minimax')?.base_url).to.equal('http://127.0.0.1:4000/minimax');
    expect(byName.get('ark-assets')?.base_url).to.equal('http://127.0.0.1:4000/volcengine');
    expect(byName.get('tingwu')?.base_url, 'at the root: the official SDK reaches a host, never a path').to.equal('http://127.0.0.1:4000');
    for (const entry of example) {
      const rewritten = byName.get(entry.name)!;
      expect(rewritten).to.deep.equal({ ...entry, base_url: rewritten.base_url, timeout_ms: 1234, max_concurrency: 7 });
    }
  });

  it('serves a channel the catalog names that the file lacks as an OpenAI channel at the simulator’s /v1', () => {
    const file = `${testTempDir('fallback-channels-')}/channels.json`;
    fs.writeFileSync(file, JSON.stringify([{ name: 'ark', protocol: 'ark', base_url: 'https://ark.cn-beijing.volces.com/api/v3', api_key: 'k' }]));
    const served = channelsServedBy('http://sim:1', catalog, options, file);
    expect(served.find((e) => e.name === 'ark')?.base_url).to.equal('http://sim:1/ark/api/v3');
    expect(served.find((e) => e.name === 'default')).to.deep.equal({ name: 'default', protocol: 'openai', base_url: 'http://sim:1/v1', timeout_ms: 1234, max_concurrency: 7 });
  });
});
