import { expect } from 'chai';
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
 * only slow cannot record a second task after a takeover, and records none once its key was taken
 * over or released; a request that fails while an earlier holder may still record is told to retry,
 * never refused for good. The gateway's clock is held and moved;
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

  /**
   * Holds the first call of `target[method]` that `matches`, before or after it runs, until
   * `open()`; `reached()` says whether it is held. `restore()` puts the method back.
   */
  function holdFirst<T extends object, K extends keyof T>(target: T, method: K, matches: (...args: any[]) => boolean, when: 'before' | 'after') {
    const original = (target[method] as (...args: any[]) => Promise<unknown>).bind(target);
    let reached = false;
    let taken = false;
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    (target as Record<K, unknown>)[method] = async (...args: any[]) => {
      const held = !taken && matches(...args);
      if (held) taken = true;
      if (held && when === 'before') {
        reached = true;
        await opened;
      }
      const result = await original(...args);
      if (held && when === 'after') {
        reached = true;
        await opened;
      }
      return result;
    };
    return { reached: () => reached, open, restore: () => delete (target as Partial<T>)[method] };
  }
  const reserveOf = (accountId: string) => (input: { accountId: string }) => input.accountId === accountId;
  const submitOf = (accountId: string) => (_stream: string, command: { type: string; data?: { accountId?: string } }) => command.type === 'Submit' && command.data?.accountId === accountId;
  const EXACTLY_ONE_VIDEO = 4 * PER_SECOND_720;

  it('answers 429 with the whole seconds left on a crashed holder\'s lease, then takes the key over for the task it would have recorded', async () => {
    const { accountId, key } = await gw.fundedAccount(100_000_000);
    const text = 'after a crash';
    clock.setOffset(-LEASE_MS);
    clock.hold();
    // What a gateway that crashed after claiming the key and reserving left behind.
    const crashedStream = taskStream('video', 'vid_crashedholder1');
    const crashedReservation = 'rsv_crashedholder1';
    const claim = await new IdempotencyKeys(gw.store, clock.now, LEASE_MS).claim(accountId, 'order-7', requestHash(JSON.stringify(body(text))), crashedStream, 'req_crashed', crashedReservation);
    expect(claim).to.deep.include({ kind: 'claimed', taskStream: crashedStream });
    await gw.accounts.reserve({ accountId, amount: 4 * PER_SECOND_720, purpose: { kind: 'task', ref: crashedStream, description: 'video-ref-2.0', model: 'video-ref-2.0', actor: 'test', endpoint: 'test' }, ttlMs: 30 * 24 * 3_600_000, reservationId: crashedReservation });

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

  /**
   * A first request with `idempotencyKey` whose claim is made in the clock's past (its lease has
   * run out by the time the test goes on), held by `hold`: `meanwhile` runs while it is held.
   * Returns its answer once let go.
   */
  async function slowHolder(hold: ReturnType<typeof holdFirst>, key: string, idempotencyKey: string, text: string, meanwhile: () => Promise<void>) {
    try {
      clock.setOffset(-LEASE_MS);
      const slow = create(key, idempotencyKey, text);
      await waitFor('the first request to be held', async () => hold.reached());
      clock.setOffset(0);
      await meanwhile();
      hold.open();
      return await slow;
    } finally {
      hold.open();
      hold.restore();
    }
  }

  /** Once the account's one task is settled: the audit clean, the ledger's reservations, releases and settlements so many, `available` left. */
  async function expectChargedOnce(accountId: string, key: string, counts: [number, number, number], available: number) {
    expect((await gw.api(key, 'GET', '/v1/tasks')).body.data, 'one task').to.have.length(1);
    await waitFor('the task settled', async () => countOf(await ledger(accountId), 'settlement') === 1);
    await expectSettledAndAuditClean(gw, [key]);
    const entries = await ledger(accountId);
    expect([countOf(entries, 'reservation'), countOf(entries, 'release'), countOf(entries, 'settlement')], 'reservations, releases, settlements').to.deep.equal(counts);
    expect((await gw.balance(key)).available, 'charged once').to.equal(available);
  }

  // The first request of the account stops after claiming the key, before it reserves; the retry takes the key over and records the task.
  for (const { funds, does, counts } of [
    { funds: 100_000_000, does: 'reserves, then finds its key taken over: it releases its reservation', counts: [2, 1, 1] as [number, number, number] },
    { funds: EXACTLY_ONE_VIDEO, does: 'finds no money left (not 402)', counts: [1, 0, 1] as [number, number, number] },
  ]) {
    it(`a holder slow past its lease records no second task after a takeover: it ${does} and answers the task`, async () => {
      const { accountId, key } = await gw.fundedAccount(funds);
      const hold = holdFirst(gw.accounts, 'reserve', reserveOf(accountId), 'before');
      let taker!: Awaited<ReturnType<typeof create>>;
      const late = await slowHolder(hold, key, 'order-8', 'slow holder', async () => {
        taker = await create(key, 'order-8', 'slow holder');
        expect([taker.status, taker.headers.get('idempotent-replayed')], JSON.stringify(taker.body)).to.deep.equal([200, null]);
      });
      expect([late.status, late.body.id, late.headers.get('idempotent-replayed')], JSON.stringify(late.body)).to.deep.equal([200, taker.body.id, 'true']);
      await expectChargedOnce(accountId, key, counts, funds - 4 * PER_SECOND_720);
    });
  }

  it('a retry that finds no money while the slow holder\'s reservation is open is told to retry (429), not 402; the holder, its key released, records nothing; the next retry records the task once', async () => {
    const { accountId, key } = await gw.fundedAccount(EXACTLY_ONE_VIDEO);
    const hold = holdFirst(gw.accounts, 'reserve', reserveOf(accountId), 'after');
    const late = await slowHolder(hold, key, 'order-10', 'one video', async () => {
      const retry = await create(key, 'order-10', 'one video');
      expect([retry.status, retry.body.error?.code, retry.headers.get('retry-after')], JSON.stringify(retry.body)).to.deep.equal([429, 'idempotent_request_in_progress', '1']);
    });
    expect([late.status, late.body.error?.code], 'the key was released: it records nothing').to.deep.equal([429, 'idempotent_request_in_progress']);
    const last = await create(key, 'order-10', 'one video');
    expect([last.status, last.headers.get('idempotent-replayed')], JSON.stringify(last.body)).to.deep.equal([200, null]);
    await expectChargedOnce(accountId, key, [2, 1, 1], 0);
  });

  it('a retry that finds no money while the slow holder, past its check, is about to record is told to retry (429); the holder records; the next retry replays it', async () => {
    const { accountId, key } = await gw.fundedAccount(EXACTLY_ONE_VIDEO);
    const hold = holdFirst(gw.tasks, 'run', submitOf(accountId), 'before');
    const recorded = await slowHolder(hold, key, 'order-11', 'one video', async () => {
      const retry = await create(key, 'order-11', 'one video');
      expect([retry.status, retry.body.error?.code, retry.headers.get('retry-after')], JSON.stringify(retry.body)).to.deep.equal([429, 'idempotent_request_in_progress', '1']);
      const otherBody = await create(key, 'order-11', 'another video');
      expect([otherBody.status, otherBody.body.error?.code], 'a released key keeps its body').to.deep.equal([400, 'idempotency_key_reused']);
    });
    expect([recorded.status, recorded.headers.get('idempotent-replayed')], JSON.stringify(recorded.body)).to.deep.equal([200, null]);
    const last = await create(key, 'order-11', 'one video');
    expect([last.status, last.body.id, last.headers.get('idempotent-replayed')]).to.deep.equal([200, recorded.body.id, 'true']);
    await expectChargedOnce(accountId, key, [1, 0, 1], 0);
  });
});
