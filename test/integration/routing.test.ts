import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { Catalog, DEFAULT_CATALOG_FILE, type CatalogFileEntry } from '../../src/billing/catalog';
import { accountStream } from '../../src/domain/account/events';
import type { RecordedEvent } from '../../src/eventstore/port';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { channelHealthStream } from '../../src/upstreams/routing/health-log';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { TestClock } from '../support/clock';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { sample, scrapeMetrics } from '../support/metrics';
import { closedPortUrl, scriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream';
import { testTempDir, removeTestTempDir } from '../support/temp-dirs';
import { waitFor } from '../support/wait';

const FAIL_503 = { status: 503 } as const;

/**
 * Several channels per model (docs/operations.md, Routing), end to end: a real gateway whose
 * channels are scripted fronts of the simulator, each failing as a test tells it.
 */
describe('routing a model over several channels @integration', function () {
  this.timeout(120_000);

  let simulator: RunningSimulator;
  let dir: string;
  let gw: TestGateway;
  const clock = new TestClock();
  let primary: ScriptedUpstream;
  let backup: ScriptedUpstream;
  let second: ScriptedUpstream;
  let cozeA: ScriptedUpstream;
  let cozeB: ScriptedUpstream;
  let sole: ScriptedUpstream;
  let cozeSole: ScriptedUpstream;
  let key: string;
  let accountId: string;
  let client: OpenAI;

  before(async () => {
    simulator = await startSimulator();
    dir = testTempDir('routing-');
    [primary, backup, second] = await Promise.all([scriptedUpstream(simulator.url), scriptedUpstream(simulator.url), scriptedUpstream(simulator.url)]);
    const original = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: CatalogFileEntry[] };
    const fast = original.models.find((m) => m.id === 'chat-fast')!;
    const { channel: _botChannel, ...bot } = original.models.find((m) => m.id === 'webqa-pro')!;
    const routed = (id: string, channels: object[]): CatalogFileEntry => {
      const { channel: _channel, ...rest } = fast;
      return { ...rest, id, channels, capabilities: { ...fast.capabilities, upstream_model: 'chat-fast' } } as CatalogFileEntry;
    };
    const catalogFile = path.join(dir, 'catalog.json');
    fs.writeFileSync(
      catalogFile,
      JSON.stringify({
        models: [
          ...original.models,
          routed('chat-routed', [{ name: 'primary', priority: 10 }, { name: 'backup' }]),
          routed('chat-dead-first', [{ name: 'dead', priority: 10 }, { name: 'backup' }]),
          routed('chat-pair', [{ name: 'primary', priority: 5 }, { name: 'second', priority: 5 }]),
          routed('chat-sole', [{ name: 'sole' }]),
          { ...bot, id: 'webqa-routed', channels: [{ name: 'coze-a', priority: 1 }, { name: 'coze-b' }], capabilities: { ...bot.capabilities, upstream_model: 'webqa-pro' } },
          { ...bot, id: 'webqa-sole', channels: [{ name: 'coze-sole' }], capabilities: { ...bot.capabilities, upstream_model: 'webqa-pro' } },
        ],
      }),
    );
    const served = channelsServedBy(simulator.url, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 16 });
    const openai = served.find((c) => c.name === 'default')!;
    const coze = served.find((c) => c.name === 'coze')!;
    const front = (name: string, url: string) => ({ ...openai, name, base_url: `${url}/v1` });
    const cozeFront = (name: string, url: string) => ({ ...coze, name, base_url: `${url}${new URL(coze.base_url).pathname.replace(/\/$/, '')}` });
    [cozeA, cozeB, sole, cozeSole] = await Promise.all([scriptedUpstream(simulator.url), scriptedUpstream(simulator.url), scriptedUpstream(simulator.url), scriptedUpstream(simulator.url)]);
    const channels = [openai, coze, front('primary', primary.url), front('backup', backup.url), front('second', second.url), front('dead', await closedPortUrl()), cozeFront('coze-a', cozeA.url), cozeFront('coze-b', cozeB.url), front('sole', sole.url), cozeFront('coze-sole', cozeSole.url)];
    gw = await startTestGateway(
      { CHANNELS: JSON.stringify(channels), CATALOG_FILE: catalogFile, CHANNEL_CIRCUIT_FAILURES: '3', CHANNEL_CIRCUIT_OPEN_MS: '10000', CHANNEL_COOLDOWN_MS: '4000' },
      { clock: clock.now },
    );
    ({ key, accountId } = await gw.fundedAccount(1_000_000_000));
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });

  beforeEach(() => {
    clock.release();
    clock.setOffset(0);
    for (const upstream of [primary, backup, second, cozeA, cozeB, sole, cozeSole]) upstream.act = 'forward';
    // Each test starts with every channel healthy (mended, as an operator's enable of a disabled channel does).
    for (const name of ['primary', 'backup', 'second', 'dead', 'coze-a', 'coze-b', 'sole', 'coze-sole']) gw.upstreams.mend(name);
  });

  afterEach(async () => {
    await gw.expectAuditClean();
  });

  after(async () => {
    await gw?.close();
    await Promise.all([primary, backup, second, cozeA, cozeB, sole, cozeSole].map((u) => u?.close()));
    await simulator?.close();
    if (dir) removeTestTempDir(dir);
  });

  const ask = (model = 'chat-routed', content = 'hello') => client.chat.completions.create({ model, messages: [{ role: 'user', content }], max_tokens: 8 });

  /** The account's reservations and settlements since `from` (its stream revision), once every reservation is closed. */
  async function moneySince(from: number): Promise<{ reserved: RecordedEvent[]; settled: RecordedEvent[]; released: RecordedEvent[] }> {
    return waitFor('every reservation closed', async () => {
      const events = (await gw.store.readStream(accountStream(accountId))).filter((e) => e.revision >= from);
      const reserved = events.filter((e) => e.type === 'FundsReserved');
      const settled = events.filter((e) => e.type === 'ReservationSettled');
      const released = events.filter((e) => e.type === 'ReservationReleased');
      return reserved.length === settled.length + released.length ? { reserved, settled, released } : null;
    });
  }

  async function revision(): Promise<number> {
    return ((await gw.store.streamHead(accountStream(accountId)))?.revision ?? -1) + 1;
  }

  async function healthEvents(channel: string): Promise<string[]> {
    return (await gw.store.readStream(channelHealthStream(channel))).map((e) => e.type);
  }

  it('fails a 5xx over to the next channel: one reservation, settled once, naming the channel that served', async () => {
    const from = await revision();
    primary.act = FAIL_503;
    const before = { primary: primary.seen, backup: backup.seen };
    const answer = await ask();
    expect(answer.choices[0]!.message.content).to.be.a('string');
    expect(primary.seen - before.primary).to.equal(1);
    expect(backup.seen - before.backup).to.equal(1);
    const money = await moneySince(from);
    expect(money.reserved).to.have.length(1);
    expect(money.settled).to.have.length(1);
    expect((money.settled[0]!.data as { channel?: string }).channel).to.equal('backup');
    const metrics = await scrapeMetrics(gw.url);
    expect(sample(metrics, 'gateway_channel_failovers_total', { channel: 'primary', reason: 'server_error' })).to.be.greaterThan(0);
  });

  it('serves from the highest priority when it answers, and names it', async () => {
    const from = await revision();
    const before = backup.seen;
    await ask();
    expect(backup.seen).to.equal(before);
    const money = await moneySince(from);
    expect((money.settled[0]!.data as { channel?: string }).channel).to.equal('primary');
  });

  it('cools a channel down for its Retry-After after a 429, and asks it again once the clock has passed it', async () => {
    clock.hold();
    primary.act = { status: 429, headers: { 'retry-after': '17' } };
    await ask();
    const seen = primary.seen;
    // Cooling down: not asked at all.
    await ask();
    expect(primary.seen).to.equal(seen);
    const metrics = await scrapeMetrics(gw.url);
    expect(sample(metrics, 'gateway_channel_state', { channel: 'primary', state: 'cooling_down' })).to.equal(1);
    expect(sample(metrics, 'gateway_channel_failovers_total', { channel: 'primary', reason: 'rate_limited' })).to.be.greaterThan(0);
    await waitFor('the cooldown appended', async () => (await healthEvents('primary')).includes('ChannelCooldownStarted'));
    clock.advance(16_000);
    await ask();
    expect(primary.seen, 'still cooling down a second before the end').to.equal(seen);
    primary.act = 'forward';
    clock.advance(1_000);
    await ask();
    expect(primary.seen).to.equal(seen + 1);
  });

  it('answers 429 with the shortest cooldown left when every channel is cooling down, sending nothing', async () => {
    clock.hold();
    primary.act = { status: 429, headers: { 'retry-after': '30' } };
    second.act = { status: 429, headers: { 'retry-after': new Date(clock.now().getTime() + 9_000).toUTCString() } };
    const first = await ask('chat-pair').then(
      () => null,
      (err: unknown) => err,
    );
    expect(first).to.be.instanceOf(OpenAI.APIError);
    expect((first as InstanceType<typeof OpenAI.APIError>).status).to.equal(429);
    const seen = { primary: primary.seen, second: second.seen };
    clock.advance(2_500);
    const res = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-pair', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
    expect(res.status).to.equal(429);
    expect(res.body.error.type).to.be.a('string');
    // The HTTP date had 9 s (less the sub-second part it cannot carry) when set; 2.5 s have passed.
    expect(Number(res.headers.get('retry-after'))).to.be.within(6, 7);
    expect({ primary: primary.seen, second: second.seen }).to.deep.equal(seen);
  });

  it('answers web Q&A, whose contract has no 429, with 502 gateway_busy and the shortest wait when every channel of the bot is cooling down', async () => {
    clock.hold();
    cozeA.act = { status: 429, headers: { 'retry-after': '20' } };
    cozeB.act = { status: 429, headers: { 'retry-after': '8' } };
    const turn = () => gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-routed', messages: [{ role: 'user', content: 'What is a spring tide?' }] });
    const first = await turn();
    expect(first.status, 'the provider\'s own 429, as web Q&A answers it').to.equal(502);
    const seen = cozeA.seen + cozeB.seen;
    expect(seen).to.equal(2);
    const busy = await turn();
    expect(busy.status).to.equal(502);
    expect(busy.body.error).to.deep.include({ code: 'gateway_busy', type: 'upstream_error' });
    expect(busy.headers.get('retry-after')).to.equal('8');
    expect(cozeA.seen + cozeB.seen, 'nothing sent').to.equal(seen);
    // Once the shorter cooldown is over, the bot answers again from that channel.
    cozeB.act = 'forward';
    clock.advance(8_000);
    const answered = await turn();
    expect(answered.status, JSON.stringify(answered.body)).to.equal(200);
    // The id names its channel by a digest, never by the operator's name.
    expect(answered.body.conversation_id).not.to.include('coze-b');
    // The conversation lives on coze-b: its next turn goes there, though coze-a (first by priority) is well again.
    gw.upstreams.mend('coze-a');
    cozeA.act = 'forward';
    const before = { a: cozeA.seen, b: cozeB.seen };
    const continued = await gw.api(key, 'POST', '/v1/agent/chat/completions', {
      bot_id: 'webqa-routed',
      messages: [{ role: 'user', content: 'And a neap tide?' }],
      extension_options: { conversation_id: answered.body.conversation_id },
    });
    expect(continued.status, JSON.stringify(continued.body)).to.equal(200);
    expect(cozeA.seen).to.equal(before.a);
    expect(cozeB.seen).to.be.greaterThan(before.b);
    // A new conversation goes to coze-a again.
    await turn();
    expect(cozeA.seen).to.be.greaterThan(before.a);
  });

  it('fails a refused connection over (a closed port)', async () => {
    const from = await revision();
    await ask('chat-dead-first');
    const money = await moneySince(from);
    expect((money.settled[0]!.data as { channel?: string }).channel).to.equal('backup');
    expect(sample(await scrapeMetrics(gw.url), 'gateway_channel_failovers_total', { channel: 'dead', reason: 'connect' })).to.be.greaterThan(0);
  });

  it('disables a channel whose provider refuses the gateway\'s credentials, says why, and asks it again once mended', async () => {
    primary.act = { status: 401, body: { error: { message: 'Incorrect API key provided: sk-***123', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } };
    await ask();
    const seen = primary.seen;
    await ask();
    await ask();
    expect(primary.seen).to.equal(seen);
    expect(gw.router.health('primary')).to.deep.include({ state: 'disabled' });
    expect(gw.router.health('primary').reason).to.match(/refused the gateway's credentials/).and.not.match(/sk-/);
    const events = await gw.store.readStream(channelHealthStream('primary'));
    const refused = events.filter((e) => e.type === 'ChannelCredentialsRefused').pop();
    expect(refused?.data).to.deep.include({ channel: 'primary' });
    expect(JSON.stringify(refused?.data)).not.to.match(/sk-/);
    expect(sample(await scrapeMetrics(gw.url), 'gateway_channel_state', { channel: 'primary', state: 'disabled' })).to.equal(1);
    primary.act = 'forward';
    gw.upstreams.mend('primary');
    await ask();
    expect(primary.seen).to.equal(seen + 1);
  });

  it('never fails over a refusal of the request itself (400): the client gets it, the backup is not asked', async () => {
    primary.act = { status: 400, body: { error: { message: 'bad temperature', type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } } };
    const from = await revision();
    const before = backup.seen;
    const res = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-routed', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
    expect(res.status).to.equal(400);
    expect(backup.seen).to.equal(before);
    const money = await moneySince(from);
    expect(money.settled).to.have.length(0);
    expect(money.released).to.have.length(1);
    expect(gw.router.health('primary').state).to.equal('closed');
  });

  it('never fails a stream over once its first bytes reached the client: the break is the client\'s answer, charged for what was delivered', async () => {
    const from = await revision();
    const before = backup.seen;
    const stream = await client.chat.completions.create({ model: 'chat-routed', messages: [{ role: 'user', content: 'count [sim:stream-error=server_error]' }], max_tokens: 8, stream: true });
    const failure = await (async () => {
      for await (const _chunk of stream);
    })().then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure, 'the stream ends with the provider\'s error').to.be.instanceOf(Error);
    expect(backup.seen).to.equal(before);
    const money = await moneySince(from);
    expect(money.settled).to.have.length(1);
    expect(money.settled[0]!.data).to.deep.include({ channel: 'primary' });
  });

  it('fails a stream over while nothing reached the client (a 503 before the first byte)', async () => {
    primary.act = FAIL_503;
    const from = await revision();
    const stream = await client.chat.completions.create({ model: 'chat-routed', messages: [{ role: 'user', content: 'hello' }], max_tokens: 8, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).not.to.equal('');
    const money = await moneySince(from);
    expect(money.reserved).to.have.length(1);
    expect(money.settled.map((e) => (e.data as { channel?: string }).channel)).to.deep.equal(['backup']);
  });

  it('opens the circuit after consecutive failures, lets one probe through after the pause, and closes it when the probe succeeds', async () => {
    clock.hold();
    primary.act = FAIL_503;
    for (let i = 0; i < 3; i++) await ask();
    expect(gw.router.health('primary')).to.deep.include({ state: 'open', consecutive_failures: 3 });
    const seen = primary.seen;
    await ask();
    expect(primary.seen, 'an open circuit takes no traffic').to.equal(seen);
    expect(sample(await scrapeMetrics(gw.url), 'gateway_channel_state', { channel: 'primary', state: 'open' })).to.equal(1);

    // The pause is over: one probe, which fails, opens it again for twice the pause.
    clock.advance(10_000);
    await ask();
    expect(primary.seen).to.equal(seen + 1);
    expect(gw.router.health('primary').state).to.equal('open');
    clock.advance(10_000);
    await ask();
    expect(primary.seen, 'the second pause is twice the first').to.equal(seen + 1);

    primary.act = 'forward';
    clock.advance(10_000);
    await ask();
    expect(primary.seen).to.equal(seen + 2);
    expect(gw.router.health('primary').state).to.equal('closed');
    // Transitions are appended after the answer, one after another: wait for the close.
    const events = await waitFor('the close appended', async () => {
      const types = await healthEvents('primary');
      return types.at(-1) === 'ChannelCircuitClosed' ? types : null;
    });
    const episode = events.slice(events.lastIndexOf('ChannelCircuitOpened') - 2);
    expect(episode).to.deep.equal(['ChannelCircuitOpened', 'ChannelCircuitHalfOpened', 'ChannelCircuitOpened', 'ChannelCircuitHalfOpened', 'ChannelCircuitClosed']);
    const metrics = await scrapeMetrics(gw.url);
    expect(sample(metrics, 'gateway_channel_transitions_total', { channel: 'primary', event: 'ChannelCircuitClosed' })).to.be.greaterThan(0);
    expect(sample(metrics, 'gateway_channel_state', { channel: 'primary', state: 'closed' })).to.equal(1);
  });
  describe('a model of one channel obeys its channel\'s health as a model of several does', () => {
    const askSole = (content = 'hello') => gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-sole', messages: [{ role: 'user', content }], max_tokens: 8 });

    it('answers the provider\'s 429, then refuses locally with 429 and the Retry-After left, sending nothing, until the cooldown has passed', async () => {
      clock.hold();
      sole.act = { status: 429, headers: { 'retry-after': '30' } };
      const limited = await askSole();
      expect(limited.status).to.equal(429);
      expect(limited.body.error.code, 'the provider\'s own rate limit').to.equal('upstream_rate_limited');
      expect(limited.headers.get('retry-after')).to.equal('30');
      const seen = sole.seen;
      const from = await revision();
      clock.advance(12_000);
      const busy = await askSole();
      expect(busy.status).to.equal(429);
      expect(busy.body.error.code, 'the gateway\'s own refusal').to.equal('rate_limit_exceeded');
      expect(busy.headers.get('retry-after'), 'the 18 s left of the cooldown').to.equal('18');
      expect(sole.seen, 'the provider was not asked').to.equal(seen);
      const money = await moneySince(from);
      expect(money.settled, 'a refusal before any call costs nothing').to.have.length(0);
      sole.act = 'forward';
      clock.advance(18_000);
      const answered = await askSole();
      expect(answered.status).to.equal(200);
      expect(sole.seen).to.equal(seen + 1);
    });

    it('answers web Q&A on a one-channel bot with 502 gateway_busy and the wait left while its channel cools down, never 429', async () => {
      clock.hold();
      cozeSole.act = { status: 429, headers: { 'retry-after': '20' } };
      const turn = () => gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'webqa-sole', messages: [{ role: 'user', content: 'What is a spring tide?' }] });
      const first = await turn();
      expect(first.status).to.equal(502);
      const seen = cozeSole.seen;
      clock.advance(5_000);
      const busy = await turn();
      expect(busy.status).to.equal(502);
      expect(busy.body.error).to.deep.include({ code: 'gateway_busy', type: 'upstream_error' });
      expect(busy.headers.get('retry-after')).to.equal('15');
      expect(cozeSole.seen, 'nothing sent').to.equal(seen);
    });

    it('disables its channel when the provider refuses the gateway\'s credentials, shows why in the admin API, and asks it again once an operator disables and enables it', async () => {
      sole.act = { status: 401, body: { error: { message: 'Incorrect API key provided: sk-***123', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } };
      const refused = await askSole();
      expect(refused.status).to.equal(502);
      expect(refused.body.error.code).to.equal('upstream_auth_failed');
      const seen = sole.seen;
      const health = (await gw.admin('GET', '/admin/v1/channels/sole')).body.health;
      expect(health).to.deep.include({ state: 'disabled' });
      expect(health.reason).to.match(/refused the gateway's credentials/).and.not.match(/sk-/);
      const unavailable = await askSole();
      expect(unavailable.status).to.equal(502);
      expect(unavailable.body.error).to.deep.include({ code: 'upstream_unavailable', type: 'upstream_error' });
      expect(unavailable.headers.get('retry-after'), 'only an operator mends it: no wait to promise').to.equal(null);
      expect(sole.seen, 'a disabled channel is not asked').to.equal(seen);

      sole.act = 'forward';
      expect((await gw.admin('PATCH', '/admin/v1/channels/sole', { enabled: false, reason: 'key rotated' })).status).to.equal(200);
      expect((await gw.admin('PATCH', '/admin/v1/channels/sole', { enabled: true })).status).to.equal(200);
      await waitFor('the channel mended', async () => (await gw.admin('GET', '/admin/v1/channels/sole')).body.health.state === 'closed');
      const answered = await askSole();
      expect(answered.status).to.equal(200);
      expect(sole.seen).to.equal(seen + 1);
    });

    it('opens its channel\'s circuit after consecutive failures, refusing with 429 and the pause left, and closes it on a good probe', async () => {
      clock.hold();
      sole.act = FAIL_503;
      for (let i = 0; i < 3; i++) expect((await askSole()).status).to.equal(502);
      expect(gw.router.health('sole')).to.deep.include({ state: 'open', consecutive_failures: 3 });
      const seen = sole.seen;
      clock.advance(4_000);
      const busy = await askSole();
      expect(busy.status).to.equal(429);
      expect(busy.body.error.code).to.equal('rate_limit_exceeded');
      expect(busy.headers.get('retry-after'), 'the 6 s left of the pause').to.equal('6');
      expect(sole.seen, 'an open circuit takes no traffic').to.equal(seen);
      sole.act = 'forward';
      clock.advance(6_000);
      expect((await askSole()).status).to.equal(200);
      expect(sole.seen).to.equal(seen + 1);
      expect(gw.router.health('sole').state).to.equal('closed');
    });
  });
});
