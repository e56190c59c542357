import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { KeptConversations, MAX_REPLAYED_TURNS, purgeExpiredPeriodically, type KeptTurn } from '../../src/agents/webqa/kept-conversations';
import { DEFAULT_CATALOG_FILE, type ModelEntry } from '../../src/billing/catalog';
import { countMessageTokens } from '../../src/billing/tokens';
import type { Database } from '../../src/db/database';
import { TestClock } from '../support/clock';
import { createTestDatabase } from '../support/database';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';

const DAY_MS = 86_400_000;
const TTL_MS = 7 * DAY_MS;
const turn = (question: string, answer = `answer to ${question}`): KeptTurn => ({ messages: [{ role: 'user', content: question }], answer });

describe('web Q&A conversations the gateway keeps: the purgeable table @integration', () => {
  let db: Database;
  let kept: KeptConversations;
  const t0 = new Date('2026-05-20T00:00:00Z');
  const at = (ms: number) => new Date(t0.getTime() + ms);

  before(async () => {
    db = await createTestDatabase(4, { withSchema: true });
    kept = new KeptConversations(db.pool, TTL_MS);
  });
  after(async () => db.close());

  it('reads a conversation until TTL after its last turn, each turn extending it; an expired one is never read, and starts afresh', async () => {
    await kept.record('acct_a', 'conv_1', 'webqa-ark', turn('first'), t0);
    await kept.record('acct_a', 'conv_1', 'webqa-ark', turn('second'), at(DAY_MS));
    expect(await kept.recentTurns('acct_a', 'conv_1', at(DAY_MS + TTL_MS - 1))).to.deep.equal([turn('first'), turn('second')]);
    expect(await kept.recentTurns('acct_a', 'conv_1', at(DAY_MS + TTL_MS)), 'expired: TTL after the last turn').to.deep.equal([]);
    // Continued after it expired (not purged yet): only the new turn is kept.
    await kept.record('acct_a', 'conv_1', 'webqa-ark', turn('third'), at(DAY_MS + TTL_MS + 5));
    expect(await kept.recentTurns('acct_a', 'conv_1', at(DAY_MS + TTL_MS + 6))).to.deep.equal([turn('third')]);
    const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM webqa_turns WHERE conversation_id = 'conv_1'`);
    expect(rows[0]!.n, 'the expired turns are gone, not hidden').to.equal(1);
  });

  it("keeps each account's conversations apart: another account reads nothing under the same conversation id", async () => {
    await kept.record('acct_a', 'conv_shared', 'webqa-ark', turn('a private question'), t0);
    await kept.record('acct_b', 'conv_shared', 'webqa-ark', turn("b's question"), t0);
    expect(await kept.recentTurns('acct_a', 'conv_shared', at(1))).to.deep.equal([turn('a private question')]);
    expect(await kept.recentTurns('acct_b', 'conv_shared', at(1))).to.deep.equal([turn("b's question")]);
    expect(await kept.recentTurns('acct_c', 'conv_shared', at(1))).to.deep.equal([]);
  });

  it(`reads back the most recent ${MAX_REPLAYED_TURNS} turns, oldest first`, async () => {
    for (let i = 1; i <= MAX_REPLAYED_TURNS + 3; i++) await kept.record('acct_a', 'conv_long', 'webqa-ark', turn(`q${i}`), at(i));
    const read = await kept.recentTurns('acct_a', 'conv_long', at(100));
    expect(read.map((t) => t.messages[0]!.content)).to.deep.equal(Array.from({ length: MAX_REPLAYED_TURNS }, (_, i) => `q${i + 4}`));
  });

  it('purges the expired conversations with their turns, and only those; periodically until stopped', async () => {
    await kept.record('acct_p', 'conv_old', 'webqa-ark', turn('old'), at(-TTL_MS - 1));
    await kept.record('acct_p', 'conv_new', 'webqa-ark', turn('new'), at(-1));
    const count = async (conversation: string) => (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webqa_turns WHERE account_id = $1 AND conversation_id = $2', ['acct_p', conversation])).rows[0]!.n;
    expect(await kept.purgeExpired(t0)).to.be.at.least(1);
    expect([await count('conv_old'), await count('conv_new')]).to.deep.equal([0, 1]);
    expect((await db.pool.query(`SELECT 1 FROM webqa_conversations WHERE conversation_id = 'conv_old'`)).rowCount).to.equal(0);

    const errors: unknown[] = [];
    const purging = purgeExpiredPeriodically(kept, { everyMs: 10, clock: () => at(TTL_MS), onError: (err) => errors.push(err) });
    try {
      await waitFor('the periodic purge', async () => (await count('conv_new')) === 0);
    } finally {
      await purging.stop();
    }
    expect(errors).to.deep.equal([]);
  });
});

/**
 * A Pro bot on Ark's bots API (the `ark-bots` channel, served by the simulated Ark): its provider
 * keeps no conversation, so the gateway keeps it. Its output limit is above Ark's default
 * `max_tokens` (4096), which the gateway sends as it is; its window is small, so a long kept
 * conversation overflows it.
 */
const MAX_OUTPUT = 8192;
const WINDOW = MAX_OUTPUT + 300;
const ARK_BOT = {
  id: 'webqa-ark-small',
  type: 'bot',
  channel: 'ark-bots',
  owned_by: 'gateway',
  created: 1767225600,
  description: 'A web Q&A Pro bot on Ark with a small context window',
  pricing: { input_per_million: 2_000_000, output_per_million: 8_000_000 },
  capabilities: { tier: 'pro', max_output_tokens: MAX_OUTPUT, context_window: WINDOW, models: [], upstream_model: 'bot-20260520000000-wqpro' },
} as unknown as ModelEntry;

describe('web Q&A on a bot whose conversation the gateway keeps @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  const clock = new TestClock();

  before(async () => {
    const catalog = JSON.parse(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8')) as { models: ModelEntry[] };
    const catalogFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'webqa-kept-')), 'catalog.json');
    fs.writeFileSync(catalogFile, JSON.stringify({ ...catalog, models: [...catalog.models, ARK_BOT] }));
    gw = await startTestGateway({ CATALOG_FILE: catalogFile, RATE_LIMIT_PER_MINUTE: '100000', WEBQA_HISTORY_TTL_MS: String(DAY_MS) }, { clock: clock.now });
    ({ key, accountId } = await gw.fundedAccount(1_000_000_000));
  });
  afterEach(async () => gw.expectAuditClean());
  after(async () => gw.close());

  const ask = (messages: unknown[], conversation?: string) =>
    gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: ARK_BOT.id, messages, ...(conversation ? { extension_options: { conversation_id: conversation } } : {}) });

  it('replays earlier turns as text only: a media part of an earlier turn is not sent again', async () => {
    const first = await ask([{ role: 'user', content: [{ type: 'text', text: 'What is in this chart?' }, { type: 'image_url', image_url: { url: 'https://cdn.example.com/chart.png' } }] }]);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.choices[0].message.content).to.equal('bot-20260520000000-wqpro answers (with 1 attachment): What is in this chart?');
    const second = await ask([{ role: 'user', content: 'And the trend?' }], first.body.conversation_id);
    expect(second.status, JSON.stringify(second.body)).to.equal(200);
    // The simulated Ark counts the media parts of every message it is sent.
    expect(second.body.choices[0].message.content).to.equal('bot-20260520000000-wqpro answers: And the trend? (earlier in this conversation you asked: "What is in this chart?")');
  });

  it("drops the oldest kept turns that would not fit the bot's context window beside the new messages and the output reserved", async () => {
    const long = (n: number) => `question ${n} ${'about the tides of the northern sea '.repeat(12)}`;
    let conversation: string | undefined;
    const prompts: number[] = [];
    for (let n = 1; n <= 5; n++) {
      const res = await ask([{ role: 'user', content: long(n) }], conversation);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      conversation = res.body.conversation_id as string;
      prompts.push(res.body.usage.prompt_tokens as number);
    }
    // A question alone is over 90 tokens, a kept turn (question and answer) over 100: beside a new
    // question, one earlier turn fits in the 300 the window leaves, two do not.
    const alone = countMessageTokens([{ role: 'user', content: long(5) }]);
    expect(alone).to.be.above(90);
    for (const prompt of prompts) expect(prompt + MAX_OUTPUT, 'what the simulated Ark was sent').to.be.at.most(WINDOW);
    expect(prompts[4], 'the most recent earlier turn is still sent, the older ones not').to.be.above(alone + 100).and.below(alone + 200);
    const last = await ask([{ role: 'user', content: 'Which was the first question?' }], conversation);
    expect(last.body.choices[0].message.content).to.include('earlier in this conversation you asked: "question 5');
    expect(last.body.usage.prompt_tokens + MAX_OUTPUT).to.be.at.most(WINDOW);
    const { rows } = await gw.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webqa_turns WHERE account_id = $1 AND conversation_id = $2', [accountId, conversation!.split('.')[0]]);
    expect(rows[0]!.n, 'every turn is kept; only the replay is bounded').to.equal(6);
  });

  it('keeps the conversation out of the event log, and forgets it WEBQA_HISTORY_TTL_MS after its last turn', async () => {
    const first = await ask([{ role: 'user', content: 'Is the harbour tide table private-7f3a?' }]);
    const conversation = first.body.conversation_id as string;
    const { rows } = await gw.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM es_events WHERE data::text LIKE '%private-7f3a%' OR type LIKE 'WebQa%'`);
    expect(rows[0]!.n).to.equal(0);
    clock.advance(DAY_MS - 1000);
    const within = await ask([{ role: 'user', content: 'And tomorrow?' }], conversation);
    expect(within.body.choices[0].message.content).to.include('you asked: "Is the harbour tide table private-7f3a?"');
    clock.advance(DAY_MS + 1000);
    const after = await ask([{ role: 'user', content: 'And next week?' }], conversation);
    expect(after.status, 'the id still continues').to.equal(200);
    expect(after.body.choices[0].message.content, 'without the expired turns').to.equal('bot-20260520000000-wqpro answers: And next week?');
  });
});
