import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { tokenCharge } from '../../src/billing/money';
import { countTokens } from '../../src/billing/tokens';
import { loadConfig } from '../../src/config';
import { TestClock } from '../support/clock';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { taskSettlement } from '../support/settlements';
import { ERROR_MESSAGE, expectValidForStatus, statusSchemas } from '../support/schemas';
import { DAYI, expectedTextSession, LIUFEI, MIZAI, podcastSessions, XIAOLEI } from '../support/simulated-podcasts';
import { expectSettledAndAuditClean, pollUntilFinal as pollTask, waitFor } from '../support/wait';

const PRICES = { input_per_million: 2_000_000, output_per_million: 60_000_000 };
const AUDIO_TOKENS_PER_SECOND = 25;
const charge = (input: number, output: number) => tokenCharge(PRICES, input, output);
/** A text without its simulator directives: what the provider counts the tokens of. */
const plainOf = (text: string) => text.replace(/\[sim:[^\]]*\]/g, ' ');

/** The spec's podcast task, one schema per status: audio_url, audio_duration and usage only when succeeded, error only when failed. */
const podcastSchemas = statusSchemas(
  {
    properties: {
      id: { type: 'string', pattern: '^pod_' },
      model: { type: 'string' },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
    },
    required: ['id', 'model', 'status', 'created_at', 'updated_at'],
  },
  {
    processing: {},
    cancelled: {},
    failed: { error: ERROR_MESSAGE },
    succeeded: {
      audio_url: { type: 'string', pattern: '^http://127\\.0\\.0\\.1:\\d+/files/tasks/podcast/pod_[0-9a-f]+/audio-[0-9a-f-]{36}\\.wav\\?expires=\\d+&sig=[0-9a-f]{64}$' },
      audio_duration: { type: 'number', exclusiveMinimum: 0 },
      usage: {
        type: 'object',
        properties: { input_text_tokens: { type: 'integer', minimum: 0 }, output_audio_tokens: { type: 'integer', minimum: 1 } },
        required: ['input_text_tokens', 'output_audio_tokens'],
        additionalProperties: false,
      },
    },
  },
);

const expectValid = (body: any, what: string) => expectValidForStatus(podcastSchemas, body, what);

/** A WAV file's duration from its header. */
function wavSeconds(bytes: Buffer): number {
  expect(bytes.subarray(0, 4).toString('ascii')).to.equal('RIFF');
  expect(bytes.subarray(8, 12).toString('ascii')).to.equal('WAVE');
  return bytes.readUInt32LE(40) / bytes.readUInt32LE(28);
}

const POLL_MS = 50;

describe('podcast tasks @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  let offsetMs = 0;

  before(async () => {
    gw = await startTestGateway(
      { TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000', POLL_MIN_INTERVAL_MS_PODCAST: String(POLL_MS) },
      { clock: () => new Date(Date.now() + offsetMs) },
    );
    ({ key, accountId } = await gw.fundedAccount(1_000_000_000));
  });
  afterEach(async () => expectSettledAndAuditClean(gw, [key]));
  after(async () => gw.close());

  const balance = (k = key) => gw.balance(k);
  const create = (body: Record<string, unknown>, headers?: Record<string, string>, k = key) => gw.api(k, 'POST', '/v1/audio/podcasts', body, headers);
  const get = (id: string, k = key) => gw.api(k, 'GET', `/v1/audio/podcasts/${id}`);
  const cancel = (id: string, k = key) => gw.api(k, 'POST', `/v1/audio/podcasts/${id}/cancel`);

  async function ledgerOf(k: string): Promise<{ type: string; amount: number; reservation_id: string | null }[]> {
    return (await gw.api(k, 'GET', '/v1/account/ledger?limit=100')).body.data;
  }

  /** Polls within the limit, validating every answer against its status schema, until the task is final. */
  const pollUntilFinal = (id: string, k = key) =>
    pollTask(`podcast ${id}`, () => get(id, k), { check: (body) => expectValid(body, 'podcast'), isFinal: (status) => status !== 'processing', everyMs: POLL_MS + 15 });

  it('turns a text into a podcast: processing at once, then a stored WAV behind a signed link, settled by tokens', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const text = 'Two hosts discuss why the sea is salty and where rivers carry minerals [sim:duration=3] [sim:delay=600]';
    const res = await create({ model: 'podcast-standard', text }, undefined, fresh.key);
    expect(res.status).to.equal(200);
    expectValid(res.body, 'creation answer');
    expect(res.body).to.deep.include({ model: 'podcast-standard', status: 'processing' });
    const estimate = charge(countTokens(text), 300 * AUDIO_TOKENS_PER_SECOND);
    expect((await balance(fresh.key)).frozen).to.equal(estimate);

    const { final, seen } = await pollUntilFinal(res.body.id, fresh.key);
    expect(seen).to.deep.equal(['processing', 'succeeded']);
    expect(final.audio_duration).to.equal(3);
    const plain = plainOf(text);
    expect(final.usage).to.deep.equal({ input_text_tokens: countTokens(plain), output_audio_tokens: 3 * AUDIO_TOKENS_PER_SECOND });
    // One session at the provider, asked for the text's podcast by the default hosts, in PCM the gateway made a WAV of.
    const [session, ...more] = await podcastSessions(gw.simulator.url, text);
    expect(more).to.deep.equal([]);
    expect(session!.outcome).to.equal('finished');
    expect(session!.request).to.deep.equal(expectedTextSession(text));
    const audio = await fetch(final.audio_url);
    expect(audio.status).to.equal(200);
    expect(audio.headers.get('content-type')).to.equal('audio/wav');
    expect(wavSeconds(Buffer.from(await audio.arrayBuffer()))).to.equal(3);

    await waitFor('billed', async () => (await balance(fresh.key)).frozen === 0);
    const ledger = await ledgerOf(fresh.key);
    expect(ledger.map((e) => e.type)).to.deep.equal(['credit', 'reservation', 'settlement']);
    expect(ledger[1]!.amount).to.equal(estimate);
    expect(ledger[2]!.amount).to.equal(charge(final.usage.input_text_tokens, final.usage.output_audio_tokens));
    expect((await balance(fresh.key)).available).to.equal(100_000_000 - ledger[2]!.amount);
    // The settlement names the channel that made the audio; the customer's ledger never shows it.
    const settlement = await taskSettlement(gw, `podcast-${res.body.id}`);
    expect([settlement.channel, settlement.channels]).to.deep.equal([gw.catalog.get('podcast-standard')!.channel, undefined]);
    expect(JSON.stringify(ledger)).to.not.include(settlement.channel!);
  });

  it('takes a topic with chosen speakers, language and a shorter cap, which sets the freeze', async () => {
    const topic = 'the history of tea [sim:duration=2.5]';
    const before = await balance();
    const res = await create({
      model: 'podcast-standard',
      topic,
      speakers: [
        { name: 'Ada', voice: XIAOLEI },
        { name: 'Ben', voice: LIUFEI },
      ],
      language: 'zh_cn',
      format: 'wav',
      max_duration_seconds: 60,
    });
    expect(res.status).to.equal(200);
    expect((await balance()).frozen - before.frozen).to.equal(charge(countTokens(topic), 60 * AUDIO_TOKENS_PER_SECOND));
    const { final } = await pollUntilFinal(res.body.id);
    expect(final.status).to.equal('succeeded');
    expect(final.audio_duration).to.equal(2.5);
    expect(final.usage.output_audio_tokens).to.equal(Math.ceil(2.5 * AUDIO_TOKENS_PER_SECOND));
    // The request as the provider got it.
    const row = await gw.tasks.read('podcast', res.body.id, accountId);
    expect(row!.request).to.deep.include({ topic: 'the history of tea [sim:duration=2.5]', text: null, language: 'zh_cn', format: 'wav', max_duration_seconds: 60 });
    expect(row!.request.speakers).to.have.length(2);
    // The topic is researched by the provider (action 4), the hosts in the client's order.
    const [session] = await podcastSessions(gw.simulator.url, topic);
    expect(session!.request).to.deep.include({ action: 4, prompt_text: topic, speaker_info: { random_order: false, speakers: [XIAOLEI, LIUFEI] } });
    expect(session!.request).to.not.have.property('input_text');
  });

  it('never charges more audio than max_duration_seconds: a provider that overruns the cap is billed at the cap', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const text = 'An overlong chat about rivers [sim:duration=5]';
    const res = await create({ model: 'podcast-standard', text, max_duration_seconds: 2 }, undefined, fresh.key);
    expect(res.status).to.equal(200);
    const cap = 2 * AUDIO_TOKENS_PER_SECOND;
    const estimate = charge(countTokens(text), cap);
    expect((await balance(fresh.key)).frozen).to.equal(estimate);

    const { final } = await pollUntilFinal(res.body.id, fresh.key);
    expect(final.status).to.equal('succeeded');
    // The provider really ran over (it takes no length limit): 5 s of audio and 5 × 25 audio tokens reported.
    const [upstream] = await podcastSessions(gw.simulator.url, text);
    expect(upstream!.audio_seconds).to.equal(5);
    expect(upstream!.usage.output_audio_tokens).to.equal(5 * AUDIO_TOKENS_PER_SECOND);
    expect(final.audio_duration).to.equal(5);
    const plain = plainOf(text);
    expect(final.usage).to.deep.equal({ input_text_tokens: countTokens(plain), output_audio_tokens: cap });

    await waitFor('billed', async () => (await balance(fresh.key)).frozen === 0);
    const ledger = await ledgerOf(fresh.key);
    expect(ledger.map((e) => e.type)).to.deep.equal(['credit', 'reservation', 'settlement']);
    expect(ledger[1]!.amount).to.equal(estimate);
    expect(ledger[2]!.amount).to.equal(charge(countTokens(plain), cap));
    expect(ledger[2]!.amount).to.be.below(charge(countTokens(plain), 5 * AUDIO_TOKENS_PER_SECOND));
    expect(ledger[2]!.amount).to.be.at.most(ledger[1]!.amount);
    expect((await balance(fresh.key)).available).to.equal(100_000_000 - ledger[2]!.amount);
  });

  it('validates the request and reserves nothing for a refused one', async () => {
    const before = await balance();
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ model: 'podcast-standard' }, 400, 'text', 'invalid_request'],
      [{ model: 'podcast-standard', text: 'a', topic: 'b' }, 400, 'topic', 'invalid_request'],
      [{ model: 'podcast-standard', text: '' }, 400, 'text', 'invalid_request'],
      [{ model: 'podcast-standard', topic: 'x'.repeat(501) }, 400, 'topic', 'invalid_request'],
      [{ model: 'podcast-standard', text: 'x'.repeat(20_001) }, 400, 'text', 'invalid_request'],
      [{ model: 'podcast-standard', text: 'x', speakers: [{ name: 'A', voice: DAYI }, { name: 'B', voice: 'alloy' }] }, 400, 'speakers[1].voice', 'unsupported_voice'],
      [{ model: 'podcast-standard', text: 'x', speakers: [{ name: 'A', voice: DAYI }, { name: 'A', voice: MIZAI }] }, 400, 'speakers', 'invalid_request'],
      [{ model: 'podcast-standard', text: 'x', speakers: ['a', 'b', 'c'].map((name) => ({ name, voice: DAYI })) }, 400, 'speakers', 'invalid_request'],
      // The provider's podcast has two hosts: one speaker is refused before anything is reserved.
      [{ model: 'podcast-standard', text: 'x', speakers: [{ name: 'A', voice: DAYI }] }, 400, 'speakers', 'invalid_request'],
      [{ model: 'podcast-standard', text: 'x', speakers: [] }, 400, 'speakers', 'invalid_request'],
      [{ model: 'podcast-standard', text: 'x', speakers: [{ name: 'A' }] }, 400, 'speakers[0].voice', 'invalid_request'],
      [{ model: 'podcast-standard', text: 'x', language: 'fr_fr' }, 400, 'language', 'unsupported_language'],
      [{ model: 'podcast-standard', text: 'x', language: 'en_us' }, 400, 'language', 'unsupported_language'],
      [{ model: 'podcast-standard', text: 'x', format: 'mp3' }, 400, 'format', 'unsupported_format'],
      [{ model: 'podcast-standard', text: 'x', format: 'ogg' }, 400, 'format', 'invalid_request'],
      [{ model: 'podcast-standard', text: 'x', max_duration_seconds: 1801 }, 400, 'max_duration_seconds', 'invalid_request'],
      [{ model: 'podcast-standard', text: 'x', max_duration_seconds: 0 }, 400, 'max_duration_seconds', 'invalid_request'],
      [{ model: 'podcast-standard', text: 'x', voice: DAYI }, 400, 'voice', 'invalid_request'],
      [{ text: 'x' }, 400, 'model', 'invalid_request'],
      [{ model: 'image-5.0', text: 'x' }, 400, 'model', 'model_not_found'],
    ];
    for (const [body, status, param, code] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(status);
      expect(res.body.error, JSON.stringify(body)).to.deep.include({ param, code });
    }
    expect(await balance()).to.deep.equal(before);
    const poor = await gw.fundedAccount(1000);
    const short = await create({ model: 'podcast-standard', text: 'too long for my wallet' }, undefined, poor.key);
    expect(short.status).to.equal(402);
  });

  it('fails with an error string when the upstream fails, and refunds the freeze', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const res = await create({ model: 'podcast-standard', text: 'this one breaks [sim:fail]' }, undefined, fresh.key);
    const { final } = await pollUntilFinal(res.body.id, fresh.key);
    expect(final.status).to.equal('failed');
    // The provider's script model refused it for good (the reference's error 50302102): not retried.
    // The client is told the provider's code; the channel's name and the provider's words stay in the logs.
    expect(final.error).to.equal('the podcast provider refused the text (50302102)');
    expect(final.error).to.not.include('volc-podcast');
    expect(final.error).to.not.include('FangzhouPodcastNLPFailed');
    expect((await podcastSessions(gw.simulator.url, 'this one breaks')).map((s) => s.outcome)).to.deep.equal(['failed']);
    await waitFor('released', async () => (await balance(fresh.key)).frozen === 0);
    expect((await balance(fresh.key)).available).to.equal(100_000_000);
    expect((await ledgerOf(fresh.key)).map((e) => e.type)).to.deep.equal(['credit', 'reservation', 'release']);
  });

  /** The ledger of a fresh account once its one podcast is billed: credit, reservation, and one settlement. */
  async function settledOnce(k: string): Promise<number> {
    await waitFor('billed', async () => (await balance(k)).frozen === 0);
    const ledger = await ledgerOf(k);
    expect(ledger.map((e) => e.type)).to.deep.equal(['credit', 'reservation', 'settlement']);
    return ledger[2]!.amount;
  }

  it('resumes a synthesis cut inside a round with the provider\'s retry_info: the whole audio once, the text billed once', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const text = 'a talk cut in its second round [sim:duration=5] [sim:cut=1]';
    const res = await create({ model: 'podcast-standard', text }, undefined, fresh.key);
    const { final } = await pollUntilFinal(res.body.id, fresh.key);
    expect(final.status).to.equal('succeeded');
    const [cut, resumed, ...more] = await podcastSessions(gw.simulator.url, text);
    expect(more).to.deep.equal([]);
    expect([cut!.outcome, cut!.rounds, cut!.retry_info]).to.deep.equal(['cut', [0], null]);
    // The first session's id is the provider's task id; round 0 was whole, round 1 is made again from its start.
    expect(resumed!.retry_info).to.deep.equal({ retry_task_id: cut!.session_id, last_finished_round_id: 0 });
    expect([resumed!.outcome, resumed!.rounds[0]]).to.deep.equal(['finished', 1]);
    // Both sessions reported the text's tokens: billed once. The audio of the cut round is not in the file twice.
    expect(cut!.usage.input_text_tokens + resumed!.usage.input_text_tokens).to.equal(2 * countTokens(plainOf(text)));
    expect(final.usage).to.deep.equal({ input_text_tokens: countTokens(plainOf(text)), output_audio_tokens: 5 * AUDIO_TOKENS_PER_SECOND });
    expect(wavSeconds(Buffer.from(await (await fetch(final.audio_url)).arrayBuffer()))).to.equal(5);
    expect(final.audio_duration).to.equal(5);
    expect(await settledOnce(fresh.key)).to.equal(charge(countTokens(plainOf(text)), 5 * AUDIO_TOKENS_PER_SECOND));
  });

  it('bills no audio tokens a cut session reported for the round made again: at most the delivered seconds × audio_tokens_per_second', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const text = 'a talk whose cut round was counted [sim:duration=5] [sim:cut=1] [sim:cut-usage]';
    const res = await create({ model: 'podcast-standard', text }, undefined, fresh.key);
    const { final } = await pollUntilFinal(res.body.id, fresh.key);
    expect(final.status).to.equal('succeeded');
    const [cut, resumed, ...more] = await podcastSessions(gw.simulator.url, text);
    expect(more).to.deep.equal([]);
    expect([cut!.outcome, cut!.rounds, resumed!.outcome]).to.deep.equal(['cut', [0], 'finished']);
    // The provider reported round 1's tokens in both sessions: more than the 5 s delivered.
    const reported = cut!.usage.output_audio_tokens + resumed!.usage.output_audio_tokens;
    expect(reported).to.be.above(5 * AUDIO_TOKENS_PER_SECOND);
    expect(final.audio_duration).to.equal(5);
    expect(final.usage).to.deep.equal({ input_text_tokens: countTokens(plainOf(text)), output_audio_tokens: 5 * AUDIO_TOKENS_PER_SECOND });
    expect(await settledOnce(fresh.key)).to.equal(charge(countTokens(plainOf(text)), 5 * AUDIO_TOKENS_PER_SECOND));
  });

  it('makes a synthesis again from its start when the provider cuts it more often than it is resumed: settled once', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    // Only this synthesis's first task is cut (cut-tasks counts by text): a text of its own, so a rerun is cut again.
    const text = `a talk the provider keeps cutting ${randomUUID()} [sim:duration=3] [sim:cut=0] [sim:cuts=5] [sim:cut-tasks=1]`;
    const res = await create({ model: 'podcast-standard', text }, undefined, fresh.key);
    const { final } = await pollUntilFinal(res.body.id, fresh.key);
    expect(final.status).to.equal('succeeded');
    const sessions = await podcastSessions(gw.simulator.url, text);
    // The poll job's first run: a session and four resumptions, each cut; its next run starts over.
    expect(sessions.map((s) => s.outcome)).to.deep.equal(['cut', 'cut', 'cut', 'cut', 'cut', 'finished']);
    const first = sessions[0]!.session_id;
    expect(sessions.slice(1, 5).map((s) => s.retry_info)).to.deep.equal(Array(4).fill({ retry_task_id: first, last_finished_round_id: -1 }));
    expect(sessions[5]!.retry_info).to.equal(null);
    expect(sessions[5]!.task_id).to.not.equal(first);
    expect(final.usage).to.deep.equal({ input_text_tokens: countTokens(plainOf(text)), output_audio_tokens: 3 * AUDIO_TOKENS_PER_SECOND });
    expect(wavSeconds(Buffer.from(await (await fetch(final.audio_url)).arrayBuffer()))).to.equal(3);
    expect(await settledOnce(fresh.key)).to.equal(charge(countTokens(plainOf(text)), 3 * AUDIO_TOKENS_PER_SECOND));
  });

  it('cancels an unfinished podcast: released, the synthesis closed, a second cancel is 409', async () => {
    const fresh = await gw.fundedAccount(100_000_000);
    const text = 'a very long episode [sim:hold]';
    const res = await create({ model: 'podcast-standard', text }, undefined, fresh.key);
    // Let the synthesis begin first, so there is a session to stop.
    await waitFor('the session held at the provider', async () => (await podcastSessions(gw.simulator.url, text))[0]?.outcome === 'held');
    const cancelled = await cancel(res.body.id, fresh.key);
    expect(cancelled.status).to.equal(200);
    expectValid(cancelled.body, 'cancel answer');
    expect(cancelled.body.status).to.equal('cancelled');
    await waitFor('released', async () => (await balance(fresh.key)).frozen === 0);
    expect((await balance(fresh.key)).available).to.equal(100_000_000);
    expect((await ledgerOf(fresh.key)).map((e) => e.type)).to.deep.equal(['credit', 'reservation', 'release']);
    await waitFor('the session closed by the gateway', async () => (await podcastSessions(gw.simulator.url, text))[0]?.outcome === 'closed');
    expect(await podcastSessions(gw.simulator.url, text), 'no other session').to.have.length(1);
    const again = await cancel(res.body.id, fresh.key);
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('task_finished');
    offsetMs += POLL_MS; // past the polling interval since the cancelled task's last read
    const read = await get(res.body.id, fresh.key);
    expectValid(read.body, 'cancelled task');
    expect(read.body.status).to.equal('cancelled');

    const done = await create({ model: 'podcast-standard', text: 'short one [sim:duration=2]' }, undefined, fresh.key);
    expect((await pollUntilFinal(done.body.id, fresh.key)).final.status).to.equal('succeeded');
    const late = await cancel(done.body.id, fresh.key);
    expect(late.status).to.equal(409);
    expect(late.body.error.code).to.equal('task_finished');
    expect((await cancel('pod_unknown', fresh.key)).status).to.equal(404);
    expect((await cancel(done.body.id, key)).status, 'another account').to.equal(404);
  });

  it('answers 401 without a key and 404 for unknown ids and other accounts’ tasks', async () => {
    const res = await create({ model: 'podcast-standard', text: 'mine [sim:duration=2]' });
    expect((await gw.api(null, 'GET', `/v1/audio/podcasts/${res.body.id}`)).status).to.equal(401);
    expect((await gw.api(null, 'POST', '/v1/audio/podcasts', { model: 'podcast-standard', text: 'x' })).status).to.equal(401);
    expect((await gw.api(null, 'POST', `/v1/audio/podcasts/${res.body.id}/cancel`)).status).to.equal(401);
    const other = await gw.fundedAccount(0);
    const foreign = await get(res.body.id, other.key);
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error.code).to.equal('task_not_found');
    expect((await get('pod_nope')).status).to.equal(404);
    await pollUntilFinal(res.body.id);
  });

  it('honours Idempotency-Key on creation', async () => {
    const body = { model: 'podcast-standard', text: 'only once [sim:duration=2]' };
    const first = await create(body, { 'idempotency-key': 'pod-1' });
    const frozen = (await balance()).frozen;
    const again = await create(body, { 'idempotency-key': 'pod-1' });
    expect(again.body.id).to.equal(first.body.id);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect((await balance()).frozen).to.equal(frozen);
    const other = await create({ ...body, max_duration_seconds: 120 }, { 'idempotency-key': 'pod-1' });
    expect([other.status, other.body.error.code]).to.deep.equal([400, 'idempotency_key_reused']);
    await pollUntilFinal(first.body.id);
  });
});

describe('podcast audio link expiry and polling limit @integration', () => {
  let gw: TestGateway;
  const clock = new TestClock();

  before(async () => {
    // A clock the test moves: it drives the signer of the one-hour audio link (PODCAST_URL_TTL_MS default).
    gw = await startTestGateway({ TASK_POLL_MS: '20', POLL_MIN_INTERVAL_MS_PODCAST: '1500' }, { clock: clock.now });
  });
  after(async () => gw.close());

  it('serves the audio for its hour and refuses it with 403 afterwards; a new read issues a fresh link', async () => {
    const { key, accountId } = await gw.fundedAccount(100_000_000);
    const res = await gw.api(key, 'POST', '/v1/audio/podcasts', { model: 'podcast-standard', text: 'expiring audio [sim:duration=2]' });
    await waitFor('succeeded', async () => (await gw.tasks.read('podcast', res.body.id, accountId))?.status === 'succeeded');
    const task = (await gw.api(key, 'GET', `/v1/audio/podcasts/${res.body.id}`)).body;
    expectValid(task, 'succeeded podcast');
    const expires = Number(new URL(task.audio_url).searchParams.get('expires'));
    expect(expires * 1000 - Date.now()).to.be.within(3_600_000 - 2_000, 3_600_000);

    expect((await fetch(task.audio_url)).status).to.equal(200);
    clock.setOffset(59 * 60_000);
    expect((await fetch(task.audio_url)).status, 'after 59 minutes').to.equal(200);
    clock.setOffset(61 * 60_000);
    const expired = await fetch(task.audio_url);
    expect(expired.status, 'after 61 minutes').to.equal(403);
    expect(((await expired.json()) as { error: { code: string } }).error.code).to.equal('link_expired');

    // 61 minutes on the gateway's clock since the last read: past the polling interval too.
    const fresh = (await gw.api(key, 'GET', `/v1/audio/podcasts/${res.body.id}`)).body;
    expect(fresh.audio_url).to.not.equal(task.audio_url);
    expect((await fetch(fresh.audio_url)).status).to.equal(200);
    clock.setOffset(0);
    await waitFor('billed', async () => (await gw.api(key, 'GET', '/v1/account')).body.balance.frozen === 0);
    await gw.expectAuditClean();
  });

  it('answers 429 with Retry-After when one key polls one podcast faster than the limit (default 5 s, lenient next to the published 10 to 15 s)', async () => {
    expect(loadConfig({}).pollMinIntervalMsPodcast).to.equal(5_000);
    const { key, accountId } = await gw.fundedAccount(100_000_000);
    const res = await gw.api(key, 'POST', '/v1/audio/podcasts', { model: 'podcast-standard', text: 'poll me [sim:duration=2]' });
    clock.hold();
    expect((await gw.api(key, 'GET', `/v1/audio/podcasts/${res.body.id}`)).status).to.equal(200);
    const fast = await gw.api(key, 'GET', `/v1/audio/podcasts/${res.body.id}`);
    expect(fast.status).to.equal(429);
    expect(fast.body.error.code).to.equal('polling_too_fast');
    expect(Number(fast.headers.get('retry-after'))).to.be.oneOf([1, 2]);
    const second = (await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, {})).body.key as string;
    expect((await gw.api(second, 'GET', `/v1/audio/podcasts/${res.body.id}`)).status, 'another key').to.equal(200);
    clock.advance(1500);
    expect((await gw.api(key, 'GET', `/v1/audio/podcasts/${res.body.id}`)).status, 'after the interval').to.equal(200);
    clock.release();
    await waitFor('billed', async () => (await gw.api(key, 'GET', '/v1/account')).body.balance.frozen === 0);
    await gw.expectAuditClean();
  });
});
