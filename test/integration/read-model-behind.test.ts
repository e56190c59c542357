import { expect } from 'chai';
import { closedOutcomeOf, RECENT_GENERATION } from '../../src/domain/account/decider';
import { accountStream } from '../../src/domain/account/events';
import { SESSION_KIND } from '../../src/assets/session-kind';
import { ERASE_TASK_KIND } from '../../src/media-tasks/erase/kind';
import { IMAGE_TASK_KIND } from '../../src/media-tasks/images/kind';
import { PODCAST_TASK_KIND } from '../../src/media-tasks/podcasts/kind';
import { ReadModelBehindError } from '../../src/projections-runtime/progress';
import { taskStream } from '../../src/tasks/events';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';

/**
 * A funded account and its key, once `gw` reads them. With PROJECTION_WAIT_MS this short a busy
 * machine may answer before a view caught up (the account's opening or credit answers 503 then):
 * they come from a gateway on the same database with the usual wait.
 */
async function accountSeenBy(gw: TestGateway, amount: number): Promise<{ accountId: string; key: string }> {
  const setup = await startTestGateway({}, { reuseDatabaseOf: gw });
  let account: { accountId: string; key: string };
  try {
    account = await setup.fundedAccount(amount);
  } finally {
    await setup.close();
  }
  await waitFor('the key to work here', async () => (await gw.api(account.key, 'GET', '/v1/account')).status === 200);
  return account;
}

describe('a write whose view has not caught up within PROJECTION_WAIT_MS @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ PROJECTION_WAIT_MS: '200' });
  });
  after(async () => gw.close());

  it('answers 503 read_model_behind with Retry-After, not a 500; the write stands and a retry with the same reference credits nothing more', async () => {
    const { accountId, key } = await accountSeenBy(gw, 0);
    // The ledger view stops folding (as if far behind); balances keep going.
    await gw.runners.get('ledger')!.stop();
    const res = await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 700, reference: 'topup-behind' });
    expect(res.status).to.equal(503);
    expect(res.headers.get('retry-after')).to.equal('1');
    expect(res.body.error).to.deep.include({ code: 'read_model_behind', message: `credit topup-behind of ${accountId} was recorded, but its view is still catching up; retry shortly` });
    const credited = await waitFor('the balance view to fold the credit', async () => {
      const balance = (await gw.api(key, 'GET', '/v1/account')).body.balance;
      return balance.available !== 0 ? balance : null;
    });
    expect(credited).to.deep.equal({ available: 700, frozen: 0, currency: 'CNY' });
    const again = await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 700, reference: 'topup-behind' });
    expect(again.status).to.equal(503);
    expect((await gw.api(key, 'GET', '/v1/account')).body.balance.available).to.equal(700);
  });
});

describe('a refund while the ledger view has not caught up within PROJECTION_WAIT_MS @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ PROJECTION_WAIT_MS: '200' });
  });
  after(async () => gw.close());

  it('answers 503 read_model_behind for a reservation the view does not show yet, not 404, and refunds nothing', async () => {
    const { accountId, key } = await accountSeenBy(gw, 1_000_000);
    // The ledger view (which holds the reservations) stops folding; the chat request goes on.
    await gw.runners.get('ledger')!.stop();
    const chat = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi [sim:tokens=3]' }] });
    expect(chat.status, JSON.stringify(chat.body)).to.equal(200);
    const settled = (await gw.store.readStream(accountStream(accountId))).filter((e) => e.type === 'ReservationSettled');
    expect(settled).to.have.length(1);
    const reservationId = (settled[0]!.data as { reservationId: string }).reservationId;
    // The balances view keeps folding (only the ledger view is stopped): the balance to compare
    // with is the settled one, not whatever the view shows before it folds the settlement.
    const balance = await waitFor('the balance view to fold the settlement', async () => {
      const b = await gw.balance(key);
      return b.available < 1_000_000 && b.frozen === 0 ? b : null;
    });

    const refund = await gw.admin('POST', `/admin/v1/accounts/${accountId}/refunds`, { reservation_id: reservationId, amount: 1, reference: 'while-behind', reason: 'goodwill' });
    expect(refund.status, JSON.stringify(refund.body)).to.equal(503);
    expect(refund.headers.get('retry-after')).to.equal('1');
    expect(refund.body.error).to.deep.include({ code: 'read_model_behind', message: `the ledger of ${accountId} is still catching up, so nothing was written; retry shortly` });
    const events = await gw.store.readStream(accountStream(accountId));
    expect(events.map((e) => e.type)).to.not.include('ChargeRefunded');
    expect(await gw.balance(key)).to.deep.equal(balance);
  });
});

describe('a refund while the ledger view still shows open a reservation settled since @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ PROJECTION_WAIT_MS: '200' });
  });
  after(async () => gw.close());

  /** The row the ledger view holds once it has folded `reservationId`'s reservation and not yet its close. */
  async function showOpen(accountId: string, reservationId: string): Promise<void> {
    const reserved = (await gw.store.readStream(accountStream(accountId))).find((e) => e.type === 'FundsReserved' && (e.data as { reservationId: string }).reservationId === reservationId)!;
    const d = reserved.data as { amount: number; purpose: { kind: string; ref: string; description: string; actor: string; model: string; endpoint: string }; expiresAt: string; at: string };
    await gw.pool.query(
      `INSERT INTO rm.reservations (reservation_id, account_id, amount, status, purpose_kind, purpose_ref, description, actor, model, endpoint, reserved_at, expires_at)
       VALUES ($1, $2, $3, 'open', $4, $5, $6, $7, $8, $9, $10, $11)`,
      [reservationId, accountId, d.amount, d.purpose.kind, d.purpose.ref, d.purpose.description, d.purpose.actor, d.purpose.model, d.purpose.endpoint, d.at, d.expiresAt],
    );
  }

  it('answers 503 when the account no longer remembers the close, and refunds by what it remembers otherwise; a late close of it says the view is behind', async () => {
    const { accountId, key } = await accountSeenBy(gw, 10_000_000);
    await gw.runners.get('ledger')!.stop();
    // The first reservation, then 2 × RECENT_GENERATION more closes: the account keeps the
    // outcome of only the latest 32 to 64, so it has forgotten the first one's.
    const chats = 1 + 2 * RECENT_GENERATION;
    for (let i = 0; i < chats; i++) {
      const chat = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: `hi ${i} [sim:tokens=3]` }] });
      expect(chat.status, JSON.stringify(chat.body)).to.equal(200);
    }
    const settled = (await gw.store.readStream(accountStream(accountId))).filter((e) => e.type === 'ReservationSettled').map((e) => (e.data as { reservationId: string }).reservationId);
    expect(settled).to.have.length(chats);
    const [forgotten, remembered] = [settled[0]!, settled[chats - 1]!];
    const state = (await gw.accountCommands.load(accountStream(accountId))).state;
    expect(closedOutcomeOf(state, forgotten), 'the first close is forgotten').to.equal(undefined);
    expect(closedOutcomeOf(state, remembered), 'the last close is remembered').to.not.equal(undefined);
    await showOpen(accountId, forgotten);
    await showOpen(accountId, remembered);

    const refused = await gw.admin('POST', `/admin/v1/accounts/${accountId}/refunds`, { reservation_id: forgotten, amount: 1, reference: 'stale-forgotten', reason: 'goodwill' });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(503);
    expect(refused.body.error).to.deep.include({ code: 'read_model_behind', message: `the ledger of ${accountId} is still catching up, so nothing was written; retry shortly` });
    expect((await gw.store.readStream(accountStream(accountId))).map((e) => e.type)).to.not.include('ChargeRefunded');

    // The account itself knows the last close: the refund goes through on it, the view's lag
    // showing only in the answer, which waits for the refund's ledger entry.
    const refund = await gw.admin('POST', `/admin/v1/accounts/${accountId}/refunds`, { reservation_id: remembered, amount: 1, reference: 'stale-remembered', reason: 'goodwill' });
    expect(refund.status, JSON.stringify(refund.body)).to.equal(503);
    expect(refund.body.error).to.deep.include({ code: 'read_model_behind', message: `refund stale-remembered of ${accountId} was recorded, but its view is still catching up; retry shortly` });
    const refunds = (await gw.store.readStream(accountStream(accountId))).filter((e) => e.type === 'ChargeRefunded');
    expect(refunds.map((e) => { const d = e.data as { reservationId: string; amount: number }; return { reservationId: d.reservationId, amount: d.amount }; })).to.deep.equal([{ reservationId: remembered, amount: 1 }]);

    // A late repeated close of the forgotten reservation (a retried bill job, say) asks the ledger
    // view how it was closed: behind, the view cannot tell, and the close says so instead of
    // calling the reservation unknown.
    const eventsBefore = (await gw.store.readStream(accountStream(accountId))).length;
    const lateClose = await gw.accounts.release(accountId, forgotten, 'a late retry').then(
      () => null,
      (err: unknown) => err,
    );
    expect(lateClose).to.be.instanceOf(ReadModelBehindError);
    expect((lateClose as Error).message).to.equal(`the ledger of ${accountId} is still catching up, so nothing was written; retry shortly`);
    expect((await gw.store.readStream(accountStream(accountId))).length).to.equal(eventsBefore);
  });
});

describe('a task creation while the tasks view has not caught up within PROJECTION_WAIT_MS @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ PROJECTION_WAIT_MS: '200', FILE_URL_ALLOW_PRIVATE_TARGETS: 'true', RATE_LIMIT_PER_MINUTE: '100000' });
  });
  after(async () => gw.close());

  it('answers every kind of creation with its new task, from what it recorded, without reading the view back', async () => {
    const { key } = await accountSeenBy(gw, 100_000_000);
    const media = `${gw.simulator.url}/sim/media/behind.mp3?sim_duration_ms=60000`;
    const creations: { kind: string; path: string; body: Record<string, unknown>; prefix: string }[] = [
      { kind: 'video', path: '/v1/videos/generations', body: { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a view behind' }] }, prefix: 'vid_' },
      { kind: 'minutes', path: '/v1/audio/minutes', body: { model: 'service-minutes', file_url: media }, prefix: 'mins_' },
      { kind: IMAGE_TASK_KIND, path: '/v1/images/async', body: { model: 'image-5.0', prompt: 'a view behind' }, prefix: 'imt_' },
      { kind: PODCAST_TASK_KIND, path: '/v1/audio/podcasts', body: { model: 'podcast-standard', text: 'a view behind' }, prefix: 'pod_' },
      { kind: ERASE_TASK_KIND, path: '/v1/videos/erase-subtitle', body: { video_url: 'https://cdn.example.com/clips/behind.mp4' }, prefix: 'ers_' },
      { kind: SESSION_KIND, path: '/v1/asset-groups/validate-session', body: { name: 'Behind' }, prefix: 'avs_' },
    ];
    // The tasks view stops folding (as if far behind): nothing a creation answers may come from it.
    await gw.runners.get('tasks')!.stop();
    const answers = new Map<string, any>();
    for (const { kind, path, body, prefix } of creations) {
      const res = await gw.api(key, 'POST', path, body);
      expect(res.status, `${kind}: ${JSON.stringify(res.body)}`).to.equal(200);
      const id = res.body.id as string;
      expect(id.startsWith(prefix), `${kind}: ${id}`).to.equal(true);
      const recorded = await gw.store.readStream(taskStream(kind, id));
      expect(recorded[0]?.type, `${kind}: the task answered is the one recorded`).to.equal('TaskSubmitted');
      answers.set(kind, res.body);
    }
    // What an inline submission recorded is in the answer too: the provider's id, the verification link.
    const accepted = (kind: string) => gw.store.readStream(taskStream(kind, answers.get(kind)!.id)).then((events) => events.find((e) => e.type === 'TaskUpstreamAccepted')!.data as { upstreamId: string; details?: { verification_url?: string } });
    expect(answers.get('video')).to.deep.include({ status: 'queued', upstream_id: (await accepted('video')).upstreamId });
    const session = answers.get(SESSION_KIND)!;
    expect(session).to.deep.include({ status: 'pending', verification_url: (await accepted(SESSION_KIND)).details!.verification_url });
    expect(session.verification_url).to.be.a('string');
  });
});

describe('a key issued while the keys view has not caught up within PROJECTION_WAIT_MS @integration', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ PROJECTION_WAIT_MS: '200' });
  });
  after(async () => gw.close());

  it('answers 201 with its secret and its view as the event records it (the secret is shown once: an error would lose it), and the key works once the view folds it', async () => {
    const { accountId } = await accountSeenBy(gw, 0);
    // The keys view cannot fold anything while another transaction holds its table.
    const blocker = await gw.pool.connect();
    let released = false;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE rm.api_keys IN ACCESS EXCLUSIVE MODE');
      const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'while behind', budget: { amount: 5000, period: 'day' }, allowed_models: ['chat-fast'] });
      expect(issued.status, JSON.stringify(issued.body)).to.equal(201);
      expect(issued.body.key).to.be.a('string').and.match(new RegExp(`^${issued.body.prefix.replace(/[….]+$/, '')}`));
      expect(issued.body).to.deep.include({ name: 'while behind', allowed_models: ['chat-fast'], revoked: false, last_used_at: null, expires_at: null });
      expect(issued.body.budget).to.deep.equal({ amount: 5000, period: 'day', spent: 0, remaining: 5000 });
      await blocker.query('COMMIT');
      released = true;

      await waitFor('the key to work', async () => (await gw.api(issued.body.key, 'GET', '/v1/account')).status === 200);
      const listed = (await gw.admin('GET', `/admin/v1/accounts/${accountId}/keys`)).body.data.find((k: { id: string }) => k.id === issued.body.id);
      const { key: _secret, ...answered } = issued.body;
      expect(listed, 'the view the 201 answered is the one the keys view then holds').to.deep.equal(answered);
    } finally {
      if (!released) await blocker.query('ROLLBACK').catch(() => undefined);
      blocker.release();
    }
  });
});
