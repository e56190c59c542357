import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { botPricing } from '../../src/agents/model-types';
import { chatRoutes } from '../../simulator/chat';
import { providerRoutes } from '../../simulator/providers';
import { startSimulator, type RunningSimulator, type SimContext } from '../../simulator';
import { DEFAULT_CATALOG_FILE, type ModelEntry } from '../../src/billing/catalog';
import { tokenCharge } from '../../src/billing/money';
import { chatPricing } from '../../src/chat/model-type';
import { channelConfigs } from '../../src/config';
import { EXAMPLE_CHANNELS_FILE, simulatedBaseUrl, type ChannelEntry } from '../../src/upstreams/registry';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { testTempDir } from '../support/temp-dirs';
import { latestSettlement } from '../support/settlements';
import { expectChatChunkFrames } from '../support/sse-frames';
import { consentOnPage } from '../support/verification-page';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

/**
 * Issue 41's proof: every capability of the real providers, run through exactly the channel
 * entries docs/providers.md gives (deploy/channels.example.json), only their base URLs moved onto
 * the simulated providers, so the gateway runs as a deployment configured from the docs would.
 */

/** Each protocol's prefix on the simulator (docs/simulator.md, "Simulated providers and their base URLs"). */
const SIMULATOR_PREFIX: Readonly<Record<string, string>> = { openai: '', ark: '/ark', minimax: '/minimax', volcengine_openapi: '/volcengine', coze: '/coze', tavily: '/tavily', bocha: '/bocha', tingwu: '', volcengine_speech: '/openspeech' };

/**
 * The catalog's web Q&A bots are on Coze; a bot on Ark's bots API (the `ark-bots` entry) is the
 * operator's to add, as this test does: a Pro bot whose provider id is a simulated Ark bot's.
 */
const ARK_BOT: ModelEntry = {
  id: 'webqa-ark',
  type: 'bot',
  channel: 'ark-bots',
  owned_by: 'gateway',
  created: 1767225600,
  description: 'A web Q&A Pro bot on Ark',
  pricing: { input_per_million: 2_000_000, output_per_million: 8_000_000 },
  capabilities: { tier: 'pro', max_output_tokens: 2048, context_window: 32768, models: [], upstream_model: 'bot-20260520000000-wqpro' },
} as unknown as ModelEntry;

const PER_SECOND_720 = 400_000; // video-ref-2.0 at 720p (src/billing/catalog.json)
const PER_SECOND_768P = 350_000; // video-h3 at 768P
const PER_IMAGE_4_0 = 100_000; // image-4.0
const VERIFICATION_FEE = 100_000; // asset-verification
const ERASE_PER_SECOND = 5_000; // subtitle-erase
const PER_SEARCH = 30_000; // web-search, per answered search
const PARTNER_MINUTES_PER_HOUR = 2_400_000; // partner-minutes rate_per_hour
const MINUTES_RATE = 1_200_000; // service-minutes, per hour

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
 * Volcengine OpenAPI the Action, and the authentication scheme (`Bearer`, Volcengine's `HMAC-SHA256`
 * or Alibaba Cloud's `ACS3-HMAC-SHA256` signature; Volcengine speech's key headers, with the
 * resource the call names).
 */
function callOf(method: string, path: string, ctx: SimContext, authorization: string): string {
  const action = ctx.query.get('Action');
  return `${method} ${path}${action ? ` ${action}` : ''} (${authorization.split(' ')[0]})`;
}

/** How a call authenticated, or null for the test's own calls (simulator pages, media files), which carry nothing. */
function authenticationOf(ctx: SimContext): string | null {
  const { authorization } = ctx.req.headers;
  if (authorization) return authorization;
  const speech = ctx.req.headers['x-api-access-key'] ? ctx.req.headers['x-api-resource-id'] : undefined;
  return typeof speech === 'string' ? `X-Api-Access-Key:${speech}` : null;
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
          const authorization = authenticationOf(ctx);
          if (authorization) calls.push(callOf(route.method, route.path, ctx, authorization));
          return route.handler(ctx);
        },
      })),
    );
    sent = fileEntries.map((entry) => servedBySimulator(entry, sim.url));
    // The test gateway's own simulator stays idle: with CHANNELS set, nothing falls back to it.
    // Private targets allowed: the recordings a minutes task names are the simulator's, on loopback.
    const catalog = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: ModelEntry[] };
    const catalogFile = path.join(testTempDir('provider-entries-'), 'catalog.json');
    fs.writeFileSync(catalogFile, JSON.stringify({ ...catalog, models: [...catalog.models, ARK_BOT] }));
    gw = await startTestGateway({ CHANNELS: JSON.stringify(sent), CATALOG_FILE: catalogFile, TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000', POLL_MIN_INTERVAL_MS_IMAGE: '0', POLL_MIN_INTERVAL_MS_ERASE: '0', FILE_URL_ALLOW_PRIVATE_TARGETS: 'true' });
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

  it('erases subtitles on Volcengine VOD over the signed OpenAPI (service vod): pulled, erased, fetched, settled per second output', async () => {
    const { key } = await funded();
    const res = await gw.api(key, 'POST', '/v1/videos/erase-subtitle', { video_url: 'https://cdn.example.com/clips/interview.mp4?sim=duration=7', regions: [{ x: 0, y: 0.8, width: 1, height: 0.2 }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const task = await waitFor('the erase final', async () => {
      const t = (await gw.api(key, 'GET', `/v1/videos/erase-subtitle/${res.body.id}`)).body;
      return t.status !== 'processing' ? t : null;
    });
    expect(task.status, JSON.stringify(task)).to.equal('succeeded');
    expect(task.result.Duration).to.equal(7);
    await expectFile(task.video_url, 'video/mp4');
    await waitFor('the task settled', async () => (await gw.balance(key)).frozen === 0);
    expect(1_000_000_000 - (await gw.balance(key)).available).to.equal(7 * ERASE_PER_SECOND);
    expect(distinctCalls()).to.deep.equal([
      'GET /volcengine/ UploadMediaByUrl (HMAC-SHA256)',
      'GET /volcengine/ QueryUploadTaskInfo (HMAC-SHA256)',
      'POST /volcengine/ StartExecution (HMAC-SHA256)',
      'GET /volcengine/ GetExecution (HMAC-SHA256)',
      'GET /volcengine/ GetPlayInfo (HMAC-SHA256)',
    ]);
  });

  /** A streamed web Q&A turn read as a client would: the answer's text and the last chunk (extras, usage). */
  async function streamedTurn(key: string, body: Record<string, unknown>): Promise<{ content: string; last: any }> {
    const res = await fetch(`${gw.url}/v1/agent/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    expect(res.status).to.equal(200);
    const bot = body['bot_id'] as string;
    return expectChatChunkFrames(await res.text(), { model: bot, bot_id: bot }, ['conversation_id', 'follow_ups', 'cards', 'usage']);
  }

  it('runs web Q&A turns on Coze, polled and streamed, the second continuing the first\'s conversation, each billed by what Coze reports', async () => {
    const { key } = await funded();
    const pricing = botPricing(gw.catalog.get('webqa-pro')!);
    const before = await gw.balance(key);
    const first = await gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'What is a spring tide?' }] });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.choices[0].message.content).to.equal('webqa-pro answers: What is a spring tide?');
    expect([first.body.follow_ups.length, first.body.cards.length]).to.deep.equal([3, 1]);
    expect(distinctCalls()).to.deep.equal(['POST /coze/v1/conversation/create (Bearer)', 'POST /coze/v3/chat (Bearer)', 'GET /coze/v3/chat/retrieve (Bearer)', 'GET /coze/v3/chat/message/list (Bearer)']);
    calls.length = 0;

    const second = await streamedTurn(key, { bot_id: 'webqa-pro', messages: [{ role: 'user', content: 'And a neap tide?' }], extension_options: { conversation_id: first.body.conversation_id } });
    expect(second.content).to.equal('webqa-pro answers: And a neap tide? (earlier in this conversation you asked: "What is a spring tide?")');
    expect(second.last.conversation_id).to.equal(first.body.conversation_id);
    expect(distinctCalls(), 'the conversation is Coze\'s: none is created').to.deep.equal(['POST /coze/v3/chat (Bearer)']);
    const charged = tokenCharge(pricing, first.body.usage.prompt_tokens, first.body.usage.completion_tokens) + tokenCharge(pricing, second.last.usage.prompt_tokens, second.last.usage.completion_tokens);
    expect(before.available - (await gw.balance(key)).available).to.equal(charged);
  });

  it("runs web Q&A turns on Ark's bots, plain and streamed, the gateway sending the conversation's earlier turn; references as cards", async () => {
    const { key } = await funded();
    const pricing = botPricing(gw.catalog.get('webqa-ark')!);
    const before = await gw.balance(key);
    const first = await gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-ark', messages: [{ role: 'user', content: 'What is a spring tide?' }] });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.choices[0].message.content).to.equal('bot-20260520000000-wqpro answers: What is a spring tide?');
    expect(first.body.follow_ups, "Ark's bots give no follow-up suggestions").to.deep.equal([]);
    expect(first.body.cards).to.have.length(1);
    expect(first.body.cards[0]).to.include({ type: 'link', site_name: 'docs.example.com' });

    const second = await streamedTurn(key, { bot_id: 'webqa-ark', messages: [{ role: 'user', content: 'And a neap tide?' }], extension_options: { conversation_id: first.body.conversation_id } });
    expect(second.content).to.equal('bot-20260520000000-wqpro answers: And a neap tide? (earlier in this conversation you asked: "What is a spring tide?")');
    expect(second.last.conversation_id).to.equal(first.body.conversation_id);
    // The earlier turn (question and answer) was sent again: Ark reports more input than the new question alone.
    expect(second.last.usage.prompt_tokens).to.be.greaterThan(first.body.usage.prompt_tokens);
    expect(distinctCalls()).to.deep.equal(['POST /ark/api/v3/bots/chat/completions (Bearer)']);
    const charged = tokenCharge(pricing, first.body.usage.prompt_tokens, first.body.usage.completion_tokens) + tokenCharge(pricing, second.last.usage.prompt_tokens, second.last.usage.completion_tokens);
    expect(before.available - (await gw.balance(key)).available).to.equal(charged);
  });

  /** Screens 青峦 with the risk agent of `gateway` and checks the report: matched, nine dimensions searched, cards, billed as used. Returns the account's key. */
  async function screensQingluan(gateway: TestGateway): Promise<string> {
    const account = await gateway.fundedAccount(1_000_000_000);
    const res = await gateway.api(account.key, 'POST', '/v1/agent/risk/chat/completions', { messages: [{ role: 'user', content: '「青峦数据科技有限公司」' }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.company).to.deep.include({ identity_status: 'matched', credit_code: '91110108MA01QL8R3P' });
    expect(res.body.report.coverage).to.deep.include({ total: 9, queried: 9, failed: 0 });
    expect(res.body.cards.map((c: { data_type: string }) => c.data_type)).to.deep.equal(['cpws', 'ktgg', 'sifacdk', 'satparty_qs']);
    expect(res.body.usage).to.deep.include({ query_calls: 10, query_cached: false });
    const { settled } = await latestSettlement(gateway, account.accountId);
    expect(settled.amount).to.equal(10 * PER_SEARCH + tokenCharge(chatPricing(gateway.catalog.get('chat-fast')!), res.body.usage.prompt_tokens, res.body.usage.completion_tokens));
    return account.key;
  }

  it('screens a company with the risk agent over Tavily, the report written by the chat provider', async () => {
    keys.push(await screensQingluan(gw));
    expect(distinctCalls()).to.deep.equal(['POST /tavily/search (Bearer)', 'POST /v1/chat/completions (Bearer)']);
  });

  it("screens a company with the risk agent over Bocha, once the catalog's search models name the bocha entry", async () => {
    const catalog = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: ModelEntry[] };
    const onBocha = { models: catalog.models.map((m) => (m.channel === 'tavily' ? { ...m, channel: 'bocha' } : m)) };
    const file = path.join(testTempDir('bocha-catalog-'), 'catalog.json');
    fs.writeFileSync(file, JSON.stringify(onBocha));
    const bochaGateway = await startTestGateway({ CHANNELS: JSON.stringify(sent), CATALOG_FILE: file, RATE_LIMIT_PER_MINUTE: '100000' });
    try {
      const key = await screensQingluan(bochaGateway);
      expect(distinctCalls()).to.deep.equal(['POST /bocha/v1/web-search (Bearer)', 'POST /v1/chat/completions (Bearer)']);
      await expectSettledAndAuditClean(bochaGateway, [key]);
    } finally {
      await bochaGateway.close();
    }
  });

  it('runs partner-minutes on Tingwu over the ACS3-signed OpenAPI, its result files read, settled by the length Tingwu reports', async () => {
    const { key, accountId } = await funded();
    const res = await gw.api(key, 'POST', '/v1/audio/minutes', {
      model: 'partner-minutes',
      file_url: 'https://media.example.com/board.mp3?sim_duration_ms=95000',
      number_of_speakers: 2,
      features: { summary: true, todos: true, translate: true },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const task = await waitFor('the minutes settled', async () => {
      const t = (await gw.api(key, 'GET', `/v1/audio/minutes/${res.body.id}`)).body;
      return t.status !== 'processing' && (await gw.balance(key)).frozen === 0 ? t : null;
    });
    expect(task.status, JSON.stringify(task.error)).to.equal('succeeded');
    expect(task.transcription.speakers.map((s: { id: string }) => s.id)).to.deep.equal(['1', '2']);
    expect(task.summary.paragraph).to.include('项目例会');
    expect(task.extraction.todos[0].Text).to.include('预算表');
    expect(task.translation.Paragraphs[0].Sentences[0].Text).to.equal("Good morning everyone, let's start the weekly project sync.");
    const amount = Math.ceil((95_000 * PARTNER_MINUTES_PER_HOUR) / 3_600_000);
    expect(task.usage).to.deep.include({ duration_ms: 95_000, amount });
    const { settled } = await latestSettlement(gw, accountId);
    expect([settled.amount, settled.overrun]).to.deep.equal([amount, 0]);
    expect(distinctCalls()).to.deep.equal(['PUT /openapi/tingwu/v2/tasks (ACS3-HMAC-SHA256)', 'GET /openapi/tingwu/v2/tasks/:id (ACS3-HMAC-SHA256)']);
  });

  it("transcribes service-minutes on Volcengine's recording recognition: flash within 100 MB, submit and query beyond", async () => {
    const { key } = await funded();
    const media = (name: string, params: Record<string, string>) => `${sim.url}/sim/media/${name}?${new URLSearchParams({ sim_duration_ms: '60000', sim_asr_delay_ms: '0', ...params })}`;
    const minutes = async (fileUrl: string) => {
      const res = await gw.api(key, 'POST', '/v1/audio/minutes', { model: 'service-minutes', file_url: fileUrl, source_lang: 'en_us' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return waitFor('the minutes billed', async () => {
        const t = (await gw.api(key, 'GET', `/v1/audio/minutes/${res.body.id}`)).body;
        return t.status !== 'processing' && (await gw.balance(key)).frozen === 0 ? t : null;
      });
    };
    const small = await minutes(media('standup.mp3', {}));
    expect(small.status, JSON.stringify(small.error)).to.equal('succeeded');
    expect(small.transcription.sentences[0].speaker).to.deep.equal({ id: 'spk-1', name: 'Speaker 1' });
    expect(small.usage).to.deep.include({ duration_ms: 60_000, engine: 'auc_flash', asr_amount: MINUTES_RATE / 60 });
    expect(distinctCalls().filter((c) => c.includes('/openspeech/'))).to.deep.equal(['POST /openspeech/api/v3/auc/bigmodel/recognize/flash (X-Api-Access-Key:volc.bigasr.auc_turbo)']);
    calls.length = 0;

    const large = await minutes(media('all-hands.mp3', { sim_bytes: '150000000' }));
    expect(large.status, JSON.stringify(large.error)).to.equal('succeeded');
    expect(large.usage).to.deep.include({ duration_ms: 60_000, engine: 'auc_flash', asr_amount: MINUTES_RATE / 60 });
    expect(distinctCalls().filter((c) => c.includes('/openspeech/'))).to.deep.equal([
      'POST /openspeech/api/v3/auc/bigmodel/submit (X-Api-Access-Key:volc.bigasr.auc)',
      'POST /openspeech/api/v3/auc/bigmodel/query (X-Api-Access-Key:volc.bigasr.auc)',
    ]);
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
