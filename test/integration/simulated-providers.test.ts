import { expect } from 'chai';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { hasAcceptedBearer, volcengineSignatureCheck } from '../../simulator/providers/credentials';
import { mounted, type SimulatedProvider } from '../../simulator/providers/provider';
import { sendJson } from '../../simulator/http';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { channelConfigs } from '../../src/config';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { Channel, type ChannelConfig } from '../../src/upstreams/channel';
import { channelsServedBy } from '../../src/upstreams/registry';

/** Two stand-in providers mounted the way every simulated provider is, each checking its credentials. */
const signedProvider: SimulatedProvider = {
  protocol: 'volcengine_openapi',
  title: 'a signed OpenAPI',
  basePath: '',
  routes: () => [
    {
      method: 'POST',
      path: '/',
      body: 'raw',
      handler: (ctx) => {
        const check = volcengineSignatureCheck(ctx);
        if (!check.ok) sendJson(ctx.res, 401, { ResponseMetadata: { RequestId: 'r-1', Action: ctx.query.get('Action'), Error: { Code: check.code, Message: check.message } } });
        else sendJson(ctx.res, 200, { ResponseMetadata: { RequestId: 'r-2', Action: ctx.query.get('Action') }, Result: { Id: 'ag-1' } });
      },
    },
  ],
};
const bearerProvider: SimulatedProvider = {
  protocol: 'ark',
  title: 'a Bearer API',
  basePath: '/api/v3',
  routes: () => [{ method: 'GET', path: '/whoami', handler: (ctx) => sendJson(ctx.res, hasAcceptedBearer(ctx, 'ark') ? 200 : 401, { path: ctx.req.url }) }],
};

describe('simulated providers at their own prefixes, served through the fallback channels @integration', () => {
  let simulator: RunningSimulator;
  let served: ChannelConfig[];
  const channels: Channel[] = [];
  const open = (config: ChannelConfig) => {
    const c = new Channel(config);
    channels.push(c);
    return c;
  };

  before(async () => {
    simulator = await startSimulator({ routes: [...mounted(signedProvider), ...mounted(bearerProvider)] });
    served = channelConfigs(channelsServedBy(simulator.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 10_000, maxConcurrency: 4 }), 'fallback');
  });
  after(async () => {
    await Promise.all(channels.map((c) => c.close()));
    await simulator.close();
  });

  it('lists each simulated provider’s base URL (what `npm run simulator` prints)', () => {
    expect(simulator.providers).to.deep.include({ protocol: 'openai', title: simulator.providers[0]!.title, baseUrl: `${simulator.url}/v1` });
  });

  it('reaches a provider at its protocol prefix plus the real base path, with the channels file’s placeholder key; another key is refused', async () => {
    const ark = served.find((c) => c.name === 'ark')!;
    expect(ark.base_url).to.equal(`${simulator.url}/ark/api/v3`);
    const answer = await open(ark).call({ method: 'GET', path: '/whoami' });
    expect(answer.status).to.equal(200);
    expect(answer.json()).to.deep.equal({ path: '/ark/api/v3/whoami' });
    const wrong = await open({ ...ark, auth: { kind: 'bearer', apiKey: 'not-the-key' } }).call({ method: 'GET', path: '/whoami' });
    expect(wrong.status).to.equal(401);
  });

  it('signs a Volcengine OpenAPI call with the channels file’s placeholder keys, which the simulated provider verifies; a wrong secret is refused', async () => {
    const assets = served.find((c) => c.name === 'ark-assets')!;
    const request = { method: 'POST' as const, path: '/', query: { Action: 'CreateAssetGroup', Version: '2024-01-01' }, body: { Name: 'people' } };
    const answer = await open(assets).call(request);
    expect(answer.status).to.equal(200);
    expect(answer.json()).to.deep.include({ Result: { Id: 'ag-1' } });
    if (assets.auth.kind !== 'volcengine') throw new Error('the ark-assets channel signs');
    const forged = open({ ...assets, auth: { kind: 'volcengine', credentials: { ...assets.auth.credentials, secretAccessKey: 'guessed' } } });
    const refused = await forged.call(request);
    expect(refused.status).to.equal(401);
    expect(refused.json()).to.deep.include({ ResponseMetadata: { RequestId: 'r-1', Action: 'CreateAssetGroup', Error: { Code: 'SignatureDoesNotMatch', Message: 'the request signature does not match' } } });
  });

  it('signs with ACS3 the channels file’s placeholder AccessKey, which the simulated Tingwu at the simulator’s root verifies; a wrong secret is refused', async () => {
    const tingwu = served.find((c) => c.name === 'tingwu')!;
    expect(tingwu.base_url).to.equal(simulator.url);
    const request = { method: 'GET' as const, path: '/openapi/tingwu/v2/tasks/no-such-task', headers: { 'x-acs-action': 'GetTaskInfo', 'x-acs-version': '2023-09-30' } };
    const answer = await open(tingwu).call(request);
    expect(answer.status).to.equal(200);
    expect(answer.json()).to.deep.include({ Code: '0', Data: { TaskId: 'no-such-task', TaskStatus: 'INVALID' } });
    if (tingwu.auth.kind !== 'acs3') throw new Error('the tingwu channel signs');
    const refused = await open({ ...tingwu, auth: { kind: 'acs3', credentials: { ...tingwu.auth.credentials, accessKeySecret: 'guessed' } } }).call(request);
    expect(refused.status).to.equal(400);
    expect(refused.json()).to.deep.include({ Code: 'SignatureDoesNotMatch', Message: 'Specified signature is not matched with our calculation.' });
  });
});
