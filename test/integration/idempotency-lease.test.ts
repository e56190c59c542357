import { expect } from 'chai';
import type { AccountService } from '../../src/accounts/service';
import { taskIdOfStream, taskStream } from '../../src/tasks/events';
import { IdempotencyKeys, requestHash } from '../../src/tasks/idempotency';
import { TestClock } from '../support/clock';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

const LEASE_MS = 10_000;
const PER_SECOND_720 = 400_000; // video-ref-2.0 at 720p

/**
 * An Idempotency-Key's claim is a lease: while it runs a second request answers 429 with the
 * seconds left; once it has run out (its holder crashed) the key is taken over; a holder that was
 * only slow cannot record a second task after a takeover. The gateway's clock is held and moved;
 * the claims that are to lapse are made in its past, so that the tasks are created at the real
 * time their jobs are scheduled by (the job queue reads the database's clock).
 */
describe('Idempotency-Key leases: Retry-After, takeover after a crash, and no second task from a slow holder @integration', () => {
  const clock = new TestClock();
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ IDEMPOTENCY_LEASE_MS: String(LEASE_MS), ORPHAN_RESERVATION_GRACE_MS: '60000', RECONCILE_INTERVAL_MS: '3600000', TASK_POLL_MS: '20' }, { clock: clock.now });
  });
  afterEach(() => {
    clock.release();
    clock.setOffset(0);
  });
  after(async () => gw.close());

  const body = (text: string) => ({ model: 'video-ref-2.0', content: [{ type: 'text', text }], duration: 4 });
  const create = (key: string, idempotencyKey: string, text: string) => gw.api(key, 'POST', '/v1/videos/generations', body(text), { 'idempotency-key': idempotencyKey });
  const ledger = async (accountId: string) => (await gw.admin('GET', `/admin/v1/accounts/${accountId}/ledger`)).body.data as { type: string; reservation_id?: string }[];
  const countOf = (entries: { type: string }[], type: string) => entries.filter((e) => e.type === type).length;

  it('answers 429 with the whole seconds left on a crashed holder\'s lease, then takes the key over for the task it would have recorded', async () => {
    const { accountId, key } = await gw.fundedAccount(100_000_000);
    const text = 'after a crash';
    clock.setOffset(-LEASE_MS);
    clock.hold();
    // What a gateway that crashed after claiming the key and reserving left behind.
    const crashedStream = taskStream('video', 'vid_crashedholder1');
    const claim = await new IdempotencyKeys(gw.store, clock.now, LEASE_MS).claim(accountId, 'order-7', requestHash(JSON.stringify(body(text))), crashedStream, 'req_crashed');
    expect(claim).to.deep.include({ kind: 'claimed', taskStream: crashedStream });
    const crashedReservation = await gw.accounts.reserve({ accountId, amount: 4 * PER_SECOND_720, purpose: { kind: 'task', ref: crashedStream, description: 'video-ref-2.0', model: 'video-ref-2.0', actor: 'test', endpoint: 'test' }, ttlMs: 30 * 24 * 3_600_000 });

    const early = await create(key, 'order-7', text);
    expect([early.status, early.body.error?.code, early.headers.get('retry-after')]).to.deep.equal([429, 'idempotent_request_in_progress', '10']);
    clock.advance(3_500);
    expect((await create(key, 'order-7', text)).headers.get('retry-after'), '6.5 s left').to.equal('7');
    clock.advance(6_499);
    expect((await create(key, 'order-7', text)).headers.get('retry-after'), '1 ms left').to.equal('1');
    clock.release();
    clock.setOffset(0);

    const taken = await create(key, 'order-7', text);
    expect([taken.status, taken.body.id, taken.headers.get('idempotent-replayed')], 'the lease ran out: the key is taken over').to.deep.equal([200, taskIdOfStream(crashedStream), null]);
    const again = await create(key, 'order-7', text);
    expect([again.status, again.body.id, again.headers.get('idempotent-replayed')]).to.deep.equal([200, taken.body.id, 'true']);

    await waitFor('the task settled', async () => countOf(await ledger(accountId), 'settlement') === 1);
    // The crashed request's reservation belongs to no task: the reconciler releases it after the grace.
    clock.setOffset(60_000);
    expect(await gw.reconciler.runOnce()).to.equal(1);
    clock.setOffset(0);
    const released = (await ledger(accountId)).filter((e) => e.type === 'release');
    expect(released.map((e) => e.reservation_id)).to.deep.equal([crashedReservation]);
    await expectSettledAndAuditClean(gw, [key]);
    const entries = await ledger(accountId);
    expect([countOf(entries, 'reservation'), countOf(entries, 'release'), countOf(entries, 'settlement')]).to.deep.equal([2, 1, 1]);
    expect((await gw.balance(key)).available, 'charged once').to.equal(100_000_000 - 4 * PER_SECOND_720);
  });

  it('a holder slow past its lease records no second task after a takeover: it releases its reservation and answers the task', async () => {
    const { accountId, key } = await gw.fundedAccount(100_000_000);
    const accounts = gw.accounts as AccountService & { reserve: AccountService['reserve'] };
    const reserve = accounts.reserve.bind(accounts);
    let holderReserving = false;
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    // The first request of this account stops after claiming the key, before it reserves, until the test lets it go on.
    let held = false;
    accounts.reserve = async (input, metadata) => {
      if (input.accountId === accountId && !held) {
        held = true;
        holderReserving = true;
        await resumed;
      }
      return reserve(input, metadata);
    };
    try {
      clock.setOffset(-LEASE_MS);
      const slow = create(key, 'order-8', 'slow holder');
      await waitFor('the first request to hold the key', async () => holderReserving);
      clock.setOffset(0);
      const taker = await create(key, 'order-8', 'slow holder');
      expect([taker.status, taker.headers.get('idempotent-replayed')], JSON.stringify(taker.body)).to.deep.equal([200, null]);
      resume();
      const late = await slow;
      expect([late.status, late.body.id, late.headers.get('idempotent-replayed')], JSON.stringify(late.body)).to.deep.equal([200, taker.body.id, 'true']);
    } finally {
      resume();
      delete (accounts as Partial<typeof accounts>).reserve;
    }
    const tasks = (await gw.api(key, 'GET', '/v1/tasks')).body.data as unknown[];
    expect(tasks, 'one task').to.have.length(1);
    const entries = await ledger(accountId);
    expect([countOf(entries, 'reservation'), countOf(entries, 'release')], 'the slow holder released its own reservation').to.deep.equal([2, 1]);
    await expectSettledAndAuditClean(gw, [key]);
    expect(countOf(await ledger(accountId), 'settlement')).to.equal(1);
    expect((await gw.balance(key)).available, 'charged once').to.equal(100_000_000 - 4 * PER_SECOND_720);
  });
});
