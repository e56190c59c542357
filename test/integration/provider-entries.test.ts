import fs from 'node:fs';
import { expect } from 'chai';
import { chatRoutes } from '../../simulator/chat';
import { providerRoutes, providerSocketRoutes } from '../../simulator/providers';
import { startSimulator, type RunningSimulator, type SimContext } from '../../simulator';
import { channelConfigs } from '../../src/config';
import { EXAMPLE_CHANNELS_FILE, simulatedBaseUrl, type ChannelEntry } from '../../src/upstreams/registry';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { latestSettlement } from '../support/settlements';
import { consentOnPage } from '../support/verification-page';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

/**
 * Issue 41's proof: every capability of the real providers, run through exactly the channel
 * entries docs/providers.md gives (deploy/channels.example.json), only their base URLs moved onto
 * the simulated providers, so the gateway runs as a deployment configured from the docs would.
 */

/** Each protocol's prefix on the simulator (docs/simulator.md, "Simulated providers and their base URLs"). */
const SIMULATOR_PREFIX: Readonly<Record<string, string>> = { openai: '', ark: '/ark', minimax: '/minimax', volcengine_openapi: '/volcengine', volcengine_podcast: '/volcengine-podcast' };

const PER_SECOND_720 = 400_000; // video-ref-2.0 at 720p (src/billing/catalog.json)
const PER_SECOND_768P = 350_000; // video-h3 at 768P
const PER_IMAGE_4_0 = 100_000; // image-4.0
const VERIFICATION_FEE = 100_000; // asset-verification

/** Fetches a link the gateway answered, as a client would, and expects a file of `type`. */
async function expectFile(url: string, type: string): Promise<void> {
  const res = await fetch(url);
  expect([res.status, res.headers.get('content-type')], url).to.deep.equal([200, type]);
  expect((await res.arrayBuffer()).byteLength, url).to.be.greaterThan(0);
}

/** The file's entry with its base URL alone moved onto the simulator: origin replaced, path kept, under the protocol's prefix. */
function servedBySimulator(entry: ChannelEntry, simulatorUrl: string): ChannelEntry {
  const prefix = SIMULATOR_PREFIX[entry.protocol ?? 'openai'];
  if (prefix === undefined) throw new Error(`no simulated provider speaks ${entry.protocol}`);
  return { ...entry, base_url: `${simulatorUrl}${prefix}${new URL(entry.base_url).pathname.replace(/\/$/, '')}` };
}

/**
 * A provider call as the simulator's route saw it: method, route path (its prefix included), on the
 * Volcengine OpenAPI the Action, and the authentication scheme (`Bearer`, or Volcengine's `HMAC-SHA256` signature).
 */
function callOf(method: string, path: string, ctx: SimContext, authorization: string): string {
  const action = ctx.query.get('Action');
  return `${method} ${path}${action ? ` ${action}` : ''} (${authorization.split(' ')[0]})`;
}

describe("every capability through the channels file's entries, base URLs moved onto the simulated providers @integration", () => {
  const fileText = fs.readFileSync(EXAMPLE_CHANNELS_FILE, 'utf8');
  const fileEntries = JSON.parse(fileText) as ChannelEntry[];
  let sim: RunningSimulator;
  let sent: ChannelEntry[];
  let gw: TestGateway;
  /** The provider calls the gateway made (signed or with a key: the test's own calls to simulator pages carry none). */
  const calls: string[] = [];
  const keys: string[] = [];

  before(async () => {
    sim = await startSimulator();
    // Every provider route (and chat), one coherent set of simulated providers, behind a recorder.
    sim.addRoutes(
      [...chatRoutes(), ...providerRoutes()].map((route) => ({
        ...route,
        handler: (ctx: SimContext) => {
          const { authorization } = ctx.req.headers;
          if (authorization) calls.push(callOf(route.method, route.path, ctx, authorization));
          return route.handler(ctx);
        },
      })),
    );
    // The WebSocket endpoints too, recording the handshake: its path and the credential headers it carried.
    sim.addSocketRoutes(
      providerSocketRoutes().map((route) => ({
        ...route,
        session: (ws, req) => {
          const carried = ['x-api-app-id', 'x-api-access-key', 'x-api-app-key'].filter((h) => req.headers[h] !== undefined);
          calls.push(`WS ${route.path} (${carried.join(', ')}; resource ${String(req.headers['x-api-resource-id'])})`);
          route.session(ws, req);
        },
      })),
    );
    sent = fileEntries.map((entry) => servedBySimulator(entry, sim.url));
    // The test gateway's own simulator stays idle: with CHANNELS set, nothing falls back to it.
    gw = await startTestGateway({ CHANNELS: JSON.stringify(sent), TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000', POLL_MIN_INTERVAL_MS_IMAGE: '0', POLL_MIN_INTERVAL_MS_PODCAST: '0' });
  });
  beforeEach(() => {
    calls.length = 0;
  });
  afterEach(async () => expectSettledAndAuditClean(gw, keys));
  after(async () => {
    await gw?.close();
    await sim?.close();
  });

  async function funded(): Promise<{ key: string; accountId: string }> {
    const account = await gw.fundedAccount(1_000_000_000);
    keys.push(account.key);
    return account;
  }

  /** The provider calls since the test began, each once, in order of first call. */
  const distinctCalls = () => [...new Set(calls)];

  it('runs the gateway on the file\'s entries with only base_url changed, each onto its simulated provider', () => {
    expect(sent.map((e) => e.name)).to.deep.equal(fileEntries.map((e) => e.name));
    sent.forEach((entry, i) => {
      const file = fileEntries[i]!;
      const { base_url: moved, ...rest } = entry;
      const { base_url: real, ...fileRest } = file;
      expect(Object.keys(rest), entry.name).to.deep.equal(Object.keys(fileRest));
      // Byte for byte, credentials included.
      for (const member of Object.keys(fileRest) as (keyof typeof fileRest)[]) expect(JSON.stringify(rest[member]), `${entry.name}.${member}`).to.equal(JSON.stringify(fileRest[member]));
      expect(new URL(moved).origin).to.equal(sim.url);
      expect(moved.endsWith(new URL(real).pathname.replace(/\/$/, '')), `${entry.name} keeps its path`).to.equal(true);
      // The simulator serves a provider at that base URL, and the fallback moves the entry to the same place.
      expect(sim.providers.map((p) => p.baseUrl), entry.name).to.include(moved);
      expect(simulatedBaseUrl(sim.url, file), entry.name).to.equal(moved);
    });
    expect(gw.upstreams.fallbackUrl, 'nothing falls back to a simulator').to.equal(null);
    const loaded = channelConfigs(sent, 'the entries sent');
    for (const config of loaded) expect(gw.upstreams.channel(config.name).config, config.name).to.deep.equal(config);
    // Every channel the catalog names is one of the file's entries.
    for (const name of gw.catalog.channels()) expect(fileEntries.map((e) => e.name), name).to.include(name);
  });

  it('runs a Seedance-class video on Ark to succeeded, settled by what Ark reports', async () => {
    const { key, accountId } = await funded();
    const res = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a lighthouse at dusk' }], duration: 4 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.upstream_id, "Ark's task id").to.match(/^cgt-/);
    const task = await waitFor('the video billed', async () => {
      const t = (await gw.api(key, 'GET', `/v1/videos/generations/${res.body.id}`)).body;
      return t.billing.status !== 'reserved' ? t : null;
    });
    expect(task.status).to.equal('succeeded');
    await expectFile(task.video_url, 'video/mp4');
    expect(task.usage).to.deep.include({ duration_seconds: 4, resolution: '720p' });
    expect(task.billing).to.deep.include({ status: 'settled', reserved: 4 * PER_SECOND_720, amount: 4 * PER_SECOND_720 });
    const { reserved, settled } = await latestSettlement(gw, accountId);
    expect([reserved, settled.amount, settled.overrun]).to.deep.equal([4 * PER_SECOND_720, 4 * PER_SECOND_720, 0]);
    expect(distinctCalls()).to.deep.equal(['POST /ark/api/v3/contents/generations/tasks (Bearer)', 'GET /ark/api/v3/contents/generations/tasks/:id (Bearer)']);
  });

  it('runs an H3 video on MiniMax to succeeded', async () => {
    const { key } = await funded();
    const res = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-h3', content: [{ type: 'text', text: 'a sail at sea' }], ratio: '16:9', duration: 6 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.upstream_id, "MiniMax's id, a string of digits").to.match(/^\d{10,}$/);
    const task = await waitFor('the video billed', async () => {
      const t = (await gw.api(key, 'GET', `/v1/videos/generations/${res.body.id}`)).body;
      return t.billing.status !== 'reserved' ? t : null;
    });
    expect(task.status).to.equal('succeeded');
    await expectFile(task.video_url, 'video/mp4');
    expect(task.billing).to.deep.include({ status: 'settled', amount: 6 * PER_SECOND_768P });
    expect(distinctCalls()).to.deep.equal(['POST /minimax/v2/video_generation (Bearer)', 'GET /minimax/v2/query/video_generation/:id (Bearer)']);
  });

  it('generates a sync image and runs an async image task to succeeded on Ark Seedream', async () => {
    const { key } = await funded();
    const image = await gw.api(key, 'POST', '/v1/images/generations', { model: 'image-4.0', prompt: 'a lighthouse', size: '1280x720' });
    expect(image.status, JSON.stringify(image.body)).to.equal(200);
    expect(image.body.data).to.have.length(1);
    await expectFile(image.body.data[0].url, 'image/jpeg');
    expect(distinctCalls()).to.deep.equal(['POST /ark/api/v3/images/generations (Bearer)']);
    calls.length = 0;

    const before = await gw.balance(key);
    const created = await gw.api(key, 'POST', '/v1/images/async', { model: 'image-4.0', prompt: 'a harbour', n: 2, size: '1280x720' });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const task = await waitFor('the async image final', async () => {
      const t = (await gw.api(key, 'GET', `/v1/images/async/${created.body.id}`)).body;
      return t.status === 'succeeded' || t.status === 'failed' ? t : null;
    });
    expect(task.status, JSON.stringify(task)).to.equal('succeeded');
    expect(task.result.data).to.have.length(2);
    for (const { url } of task.result.data) await expectFile(url, 'image/jpeg');
    await waitFor('the task settled', async () => (await gw.balance(key)).frozen === 0);
    expect(before.available - (await gw.balance(key)).available).to.equal(2 * PER_IMAGE_4_0);
    expect(distinctCalls()).to.deep.equal(['POST /ark/api/v3/images/generations (Bearer)']);
  });

  it("verifies a real person and adds an asset on Ark's asset library over the signed Volcengine OpenAPI", async () => {
    const { key } = await funded();
    const opened = await gw.api(key, 'POST', '/v1/asset-groups/validate-session', { name: 'Alice Example' });
    expect(opened.status, JSON.stringify(opened.body)).to.equal(200);
    expect(opened.body.verification_url.startsWith(`${sim.url}/volcengine/`), 'the simulated provider\'s page').to.equal(true);
    await consentOnPage(opened.body.verification_url);
    const session = await waitFor('the session verified', async () => {
      const s = (await gw.api(key, 'GET', `/v1/asset-groups/validate-session/${opened.body.id}`)).body;
      return s.status === 'verified' && s.billing.status === 'settled' ? s : null;
    });
    expect(session.billing).to.deep.include({ amount: VERIFICATION_FEE });

    const added = await gw.api(key, 'POST', `/v1/asset-groups/${opened.body.group_id}/assets`, { url: 'https://images.example.com/people/alice.png' });
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    await waitFor('the asset active', async () => (await gw.api(key, 'GET', `/v1/asset-groups/${opened.body.group_id}/assets/${added.body.id}`)).body.status === 'active');
    expect(distinctCalls()).to.deep.equal([
      'POST /volcengine/ CreateVisualValidateSession (HMAC-SHA256)',
      'POST /volcengine/ GetVisualValidateResult (HMAC-SHA256)',
      'POST /volcengine/ CreateAsset (HMAC-SHA256)',
      'POST /volcengine/ GetAsset (HMAC-SHA256)',
    ]);
  });

  it("makes a podcast on Volcengine's podcast synthesis over its WebSocket, with the entry's handshake headers", async () => {
    const { key } = await funded();
    const before = await gw.balance(key);
    const res = await gw.api(key, 'POST', '/v1/audio/podcasts', { model: 'podcast-standard', text: '两位主持人聊聊灯塔的历史 [sim:duration=2]' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const task = await waitFor('the podcast final', async () => {
      const t = (await gw.api(key, 'GET', `/v1/audio/podcasts/${res.body.id}`)).body;
      return t.status === 'processing' ? null : t;
    });
    expect(task.status, JSON.stringify(task)).to.equal('succeeded');
    expect(task.audio_duration).to.equal(2);
    expect(task.usage.output_audio_tokens).to.equal(2 * 25);
    await expectFile(task.audio_url, 'audio/wav');
    await waitFor('the podcast settled', async () => (await gw.balance(key)).frozen === 0);
    expect(before.available - (await gw.balance(key)).available).to.be.greaterThan(0);
    expect(distinctCalls()).to.deep.equal(['WS /volcengine-podcast/api/v3/sami/podcasttts (x-api-app-id, x-api-access-key, x-api-app-key; resource volc.service_type.10050)']);
  });

  it('relays a chat completion to the OpenAI-compatible provider', async () => {
    const { key, accountId } = await funded();
    const res = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hello' }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.choices[0].message.content).to.be.a('string');
    const { settled } = await latestSettlement(gw, accountId);
    expect(settled.amount).to.be.greaterThan(0);
    expect(distinctCalls()).to.deep.equal(['POST /v1/chat/completions (Bearer)']);
  });
});
