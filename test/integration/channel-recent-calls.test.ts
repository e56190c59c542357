import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { scriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream';

/**
 * The channels admin API's `recent_calls`: this process's calls to each channel over the last
 * minutes (docs/operations.md, The channels API), counted from real calls through a scripted front.
 */
describe('the channels admin API: recent calls, errors and latency per channel @integration', function () {
  this.timeout(120_000);

  let simulator: RunningSimulator;
  let front: ScriptedUpstream;
  let gw: TestGateway;
  let key: string;

  before(async () => {
    simulator = await startSimulator();
    front = await scriptedUpstream(simulator.url);
    const served = channelsServedBy(simulator.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 16 });
    // chat-fast's only channel, `default`, behind the scripted front.
    const channels = served.map((c) => (c.name === 'default' ? { ...c, base_url: `${front.url}/v1` } : c));
    // A high threshold: the failures below must not open the circuit, which would send the next call nowhere.
    gw = await startTestGateway({ CHANNELS: JSON.stringify(channels), CHANNEL_CIRCUIT_FAILURES: '100' });
    ({ key } = await gw.fundedAccount(100_000_000));
  });

  after(async () => {
    await gw?.close();
    await front?.close();
    await simulator?.close();
  });

  const chat = () => gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hello' }], max_tokens: 5 });

  it('starts with no calls: zero counts, no rate, no latency', async () => {
    const answer = await gw.admin('GET', '/admin/v1/channels/default');
    expect(answer.status).to.equal(200);
    expect(answer.body.recent_calls).to.deep.equal({ window_seconds: 900, calls: 0, errors: 0, client_errors: 0, error_rate: null, latency_ms: null });
  });

  it('counts an answered call, a 5xx and a provider refusal, with the latency of the answers', async () => {
    expect((await chat()).status).to.equal(200);
    front.act = { status: 503 };
    expect((await chat()).status).to.be.within(500, 599);
    front.act = { status: 400, body: { error: { message: 'scripted refusal', type: 'invalid_request_error', param: null, code: null } } };
    expect((await chat()).status).to.equal(400);
    front.act = 'forward';

    const one = await gw.admin('GET', '/admin/v1/channels/default');
    const recent = one.body.recent_calls as { calls: number; errors: number; client_errors: number; error_rate: number; latency_ms: { mean: number; max: number } };
    expect(recent).to.deep.include({ window_seconds: 900, calls: 3, errors: 1, client_errors: 1, error_rate: 0.3333 });
    expect(recent.latency_ms.mean).to.be.at.least(0);
    expect(recent.latency_ms.max).to.be.at.least(recent.latency_ms.mean);

    // The list shows the same; a channel nobody called shows none.
    const list = await gw.admin('GET', '/admin/v1/channels?limit=100');
    const byName = new Map((list.body.data as { id: string; recent_calls: unknown }[]).map((c) => [c.id, c.recent_calls]));
    expect(byName.get('default')).to.deep.equal(recent);
    expect(byName.get('coze')).to.deep.include({ calls: 0, error_rate: null });
  });

  it('answers an unknown channel and a bad page in the admin error shape, changing nothing', async () => {
    const unknown = await gw.admin('GET', '/admin/v1/channels/no-such-channel');
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.include({ code: 'channel_not_found' });
    const badLimit = await gw.admin('GET', '/admin/v1/channels?limit=abc');
    expect(badLimit.status).to.equal(400);
    expect(badLimit.body.error).to.include({ param: 'limit' });
    expect((await gw.admin('GET', '/admin/v1/channels/default')).body.recent_calls).to.include({ calls: 3 });
  });
});
