import { units } from '../support/pricing';
import { expect } from 'chai';
import { accountDecider, available, closedOutcomeOf, RECENT_GENERATION, type AccountCommand, type AccountState } from '../../src/domain/account/decider';
import { DomainError } from '../../src/domain/decider';
import { upcastAccountEvent } from '../../src/domain/account/events';
import { pricingOf, tokenLine } from '../../src/billing/money';

const now = '2026-01-01T00:00:00.000Z';
const purpose = { kind: 'request' as const, ref: 'req_1', description: 'chat', actor: 'system', model: 'chat', endpoint: 'test' };
const context = { actor: 'system', model: 'chat', endpoint: 'test', kind: 'request' as const, ref: 'req_1' };

function run(commands: AccountCommand[], state: AccountState = accountDecider.initialState()): AccountState {
  for (const c of commands) for (const e of accountDecider.decide(c, state)) state = accountDecider.evolve(state, e);
  return state;
}

function refused(command: AccountCommand, state: AccountState): string {
  try {
    accountDecider.decide(command, state);
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return (err as DomainError).code;
  }
  throw new Error('command was accepted');
}

const opened = (): AccountState =>
  run([
    { type: 'OpenAccount', accountId: 'a', name: 'A', now },
    { type: 'AddCredit', entryId: 'c1', amount: 100, reference: 'top-up-1', note: null, now },
  ]);

const reserve = (id: string, amount: number): AccountCommand => ({ type: 'Reserve', reservationId: id, amount, purpose, expiresAt: now, now });

describe('account decider', () => {
  it('closes a reservation with an event that names who asked, for which model, through which endpoint', () => {
    const asked = { kind: 'request' as const, ref: 'req_9', description: 'chat-fast', actor: 'key_1', model: 'chat-fast', endpoint: 'POST /v1/chat/completions' };
    const state = run([{ type: 'Reserve', reservationId: 'r1', amount: 10, purpose: asked, expiresAt: now, now }, { type: 'Reserve', reservationId: 'r2', amount: 10, purpose: asked, expiresAt: now, now }], opened());
    const expected = { actor: 'key_1', model: 'chat-fast', endpoint: 'POST /v1/chat/completions', kind: 'request', ref: 'req_9' };
    const [settled] = accountDecider.decide({ type: 'Settle', reservationId: 'r1', pricing: units(8), usage: {}, now }, state);
    expect(settled!.data).to.deep.include({ context: expected });
    const [released] = accountDecider.decide({ type: 'Release', reservationId: 'r2', reason: 'upstream failed', now }, state);
    expect(released!.data).to.deep.include({ context: expected });
  });

  it('reads a reservation recorded before its actor, model and endpoint were kept, and closes it naming them unknown', () => {
    const legacy = { type: 'FundsReserved', data: { reservationId: 'old', amount: 10, purpose: { kind: 'task', ref: 'video-1', description: 'video-ref-2.0' }, expiresAt: now, at: now } };
    const state = accountDecider.evolve(opened(), legacy as Parameters<typeof accountDecider.evolve>[1]);
    const [settled] = accountDecider.decide({ type: 'Settle', reservationId: 'old', pricing: units(10), usage: {}, now }, state);
    expect(settled!.data).to.deep.include({ context: { actor: 'unknown', model: 'video-ref-2.0', endpoint: 'unknown', kind: 'task', ref: 'video-1' } });
    // A closing event of that age has no context; it reads as null, not as a missing member.
    const legacyClose = { type: 'ReservationReleased', data: { reservationId: 'old', amount: 10, reason: 'x', at: now } };
    const closed = accountDecider.evolve(state, legacyClose as Parameters<typeof accountDecider.evolve>[1]);
    expect(closedOutcomeOf(closed, 'old')).to.deep.equal({ kind: 'released', amount: 10, reason: 'x' });
  });

  it('refuses commands on an account that was never opened', () => {
    expect(refused(reserve('r', 1), accountDecider.initialState())).to.equal('account_not_found');
  });

  it('credits once per reference and refuses a reused reference with another amount', () => {
    const state = opened();
    expect(accountDecider.decide({ type: 'AddCredit', entryId: 'c2', amount: 100, reference: 'top-up-1', note: null, now }, state)).to.deep.equal([]);
    expect(refused({ type: 'AddCredit', entryId: 'c2', amount: 5, reference: 'top-up-1', note: null, now }, state)).to.equal('credit_reference_conflict');
    expect(available(state)).to.equal(100);
  });

  it('reserves up to the available balance and refuses beyond it', () => {
    const state = run([reserve('r1', 60)], opened());
    expect(available(state)).to.equal(40);
    expect(state.frozen).to.equal(60);
    expect(refused(reserve('r2', 41), state)).to.equal('insufficient_balance');
    expect(available(run([reserve('r2', 40)], state))).to.equal(0);
  });

  it('settles by actual usage and releases the rest of the freeze', () => {
    const state = run([reserve('r1', 60), { type: 'Settle', reservationId: 'r1', pricing: units(25), usage: { tokens: 25 }, now }], opened());
    expect(state.frozen).to.equal(0);
    expect(state.settled).to.equal(25);
    expect(available(state)).to.equal(75);
  });

  it('records an overrun when usage exceeds the reservation', () => {
    const state = run([reserve('r1', 100)], opened());
    const [event] = accountDecider.decide({ type: 'Settle', reservationId: 'r1', pricing: units(130), usage: {}, now }, state);
    expect(event).to.deep.include({ type: 'ReservationSettled' });
    expect((event!.data as { overrun: number }).overrun).to.equal(30);
    expect(available(accountDecider.evolve(state, event!))).to.equal(-30);
  });

  it('closes a reservation once: a second settle or release is a no-op and the first outcome stays', () => {
    const state = run([reserve('r1', 60), { type: 'Release', reservationId: 'r1', reason: 'upstream failed', now }], opened());
    expect(accountDecider.decide({ type: 'Settle', reservationId: 'r1', pricing: units(60), usage: {}, now }, state)).to.deep.equal([]);
    expect(accountDecider.decide({ type: 'Release', reservationId: 'r1', reason: 'again', now }, state)).to.deep.equal([]);
    expect(closedOutcomeOf(state, 'r1')).to.deep.equal({ kind: 'released', amount: 60, reason: 'upstream failed' });
    expect(available(state)).to.equal(100);
  });

  it('refuses to close a reservation that never existed', () => {
    expect(refused({ type: 'Settle', reservationId: 'nope', pricing: units(1), usage: {}, now }, opened())).to.equal('reservation_not_found');
  });

  it('refunds at most the settled charge', () => {
    const state = run([reserve('r1', 60), { type: 'Settle', reservationId: 'r1', pricing: units(50), usage: {}, now }], opened());
    expect(refused({ type: 'Refund', refundId: 'f1', reservationId: 'r1', amount: 51, reason: 'x', context, now }, state)).to.equal('refund_exceeds_charge');
    const refunded = run([{ type: 'Refund', refundId: 'f1', reservationId: 'r1', amount: 20, reason: 'goodwill', context, now }], state);
    expect(available(refunded)).to.equal(70);
    expect(refused({ type: 'Refund', refundId: 'f2', reservationId: 'r1', amount: 31, reason: 'x', context, now }, refunded)).to.equal('refund_exceeds_charge');
  });

  it('refunds once per reference, and refuses a reused reference for another amount or reservation', () => {
    const state = run([reserve('r1', 60), { type: 'Settle', reservationId: 'r1', pricing: units(50), usage: {}, now }], opened());
    const refund = { type: 'Refund' as const, refundId: 'f1', reservationId: 'r1', amount: 20, reason: 'goodwill', context, now };
    const refunded = run([refund], state);
    expect(accountDecider.decide(refund, refunded), 'the same refund again').to.deep.equal([]);
    expect(refused({ ...refund, amount: 21 }, refunded)).to.equal('refund_reference_conflict');
    expect(refused({ ...refund, reservationId: 'r2' }, refunded)).to.equal('refund_reference_conflict');
    expect(available(run([refund], refunded))).to.equal(70);
  });

  it('refuses to refund an open or released reservation', () => {
    const state = run([reserve('r1', 30), reserve('r2', 30), { type: 'Release', reservationId: 'r2', reason: 'failed', now }], opened());
    // Even when a caller claims a settled charge for it.
    expect(refused({ type: 'Refund', refundId: 'f1', reservationId: 'r1', amount: 1, reason: 'x', context, settledCharge: 30, now }, state)).to.equal('refund_not_allowed');
    expect(refused({ type: 'Refund', refundId: 'f2', reservationId: 'r2', amount: 1, reason: 'x', context, settledCharge: 30, now }, state)).to.equal('refund_not_allowed');
    expect(refused({ type: 'Refund', refundId: 'f3', reservationId: 'unknown', amount: 1, reason: 'x', context, now }, state)).to.equal('refund_not_allowed');
  });

  it('refunds a charge settled too long ago to be remembered, against the settled charge the caller found, and never beyond it in total', () => {
    let state = run([reserve('old', 60), { type: 'Settle', reservationId: 'old', pricing: units(40), usage: {}, now }], opened());
    state = run([{ type: 'Refund', refundId: 'early', reservationId: 'old', amount: 10, reason: 'first', context, now }], state);
    // Enough later closes to push the old one out of both generations of remembered outcomes.
    for (let i = 0; i < 2 * RECENT_GENERATION + 1; i++) state = run([reserve(`r${i}`, 1), { type: 'Release', reservationId: `r${i}`, reason: 'x', now }], state);
    expect(closedOutcomeOf(state, 'old')).to.equal(undefined);
    const late = { type: 'Refund' as const, refundId: 'late', reservationId: 'old', amount: 31, reason: 'late', context, now };
    expect(refused(late, state), 'without the settled charge').to.equal('refund_not_allowed');
    // 40 charged, 10 refunded before: 30 left, whatever the window forgot.
    expect(refused({ ...late, settledCharge: 40 }, state)).to.equal('refund_exceeds_charge');
    const after = run([{ ...late, amount: 30, settledCharge: 40 }], state);
    expect(available(after) - available(state)).to.equal(30);
    expect(refused({ ...late, refundId: 'later', amount: 1, settledCharge: 40 }, after)).to.equal('refund_exceeds_charge');
  });

  it('refuses amounts that are not non-negative integers of minor units', () => {
    expect(refused(reserve('r1', 1.5), opened())).to.equal('invalid_amount');
    expect(refused(reserve('r1', -1), opened())).to.equal('invalid_amount');
    expect(refused({ type: 'AddCredit', entryId: 'c', amount: 0, reference: 'z', note: null, now }, opened())).to.equal('invalid_amount');
  });

  it('keeps its state bounded however many reservations close', () => {
    let state = run([{ type: 'AddCredit', entryId: 'c9', amount: 1_000_000, reference: 'big', note: null, now }], opened());
    for (let i = 0; i < RECENT_GENERATION * 3 + 5; i++) state = run([reserve(`r${i}`, 1), { type: 'Settle', reservationId: `r${i}`, pricing: units(1), usage: {}, now }], state);
    expect(Object.keys(state.recentlyClosed)).to.have.length(5);
    expect(Object.keys(state.previouslyClosed)).to.have.length(RECENT_GENERATION);
    expect(closedOutcomeOf(state, `r${RECENT_GENERATION * 2 + 10}`)).to.deep.include({ kind: 'settled' });
    expect(closedOutcomeOf(state, 'r0')).to.equal(undefined);
    expect(Object.keys(state.open)).to.have.length(0);
    expect(state.settled).to.equal(RECENT_GENERATION * 3 + 5);
  });

  it('revokes keys once and refuses unknown keys', () => {
    const state = run([{ type: 'IssueApiKey', keyId: 'k1', keyHash: 'h', keyPrefix: 'tr-abc', settings: { name: null, allowedModels: null, budget: null, expiresAt: null, rateLimitPerMinute: null }, by: null, now }], opened());
    const revoked = run([{ type: 'RevokeApiKey', keyId: 'k1', now }], state);
    expect(accountDecider.decide({ type: 'RevokeApiKey', keyId: 'k1', now }, revoked)).to.deep.equal([]);
    expect(refused({ type: 'RevokeApiKey', keyId: 'k2', now }, state)).to.equal('key_not_found');
  });

  describe('pricing and time zone', () => {
    it('given an open reservation, when it is settled with a pricing, then the settlement records it and charges its amount', () => {
      const state = run([reserve('r1', 50)], opened());
      const pricing = pricingOf(tokenLine({ input_per_million: 2_000_000, output_per_million: 8_000_000 }, 3, 2));
      const [settled] = accountDecider.decide({ type: 'Settle', reservationId: 'r1', pricing, usage: {}, now }, state);
      expect(settled!.data).to.deep.include({ amount: 22, pricing });
    });

    it('given an open reservation, when a pricing does not add up to its amount, then the settlement is refused', () => {
      const state = run([reserve('r1', 50)], opened());
      const forged = { amount: 1, lines: [{ units: { images: 2 }, unit_prices: { images: 5 }, per: 1, amount: 1 }] };
      expect(refused({ type: 'Settle', reservationId: 'r1', pricing: forged, usage: {}, now }, state)).to.equal('invalid_pricing');
    });

    it('given an account in the default zone, when the zone changes, then one event records it and the same zone again records nothing', () => {
      const state = opened();
      expect(state.timezone).to.equal('Asia/Shanghai');
      const events = accountDecider.decide({ type: 'ChangeTimeZone', timezone: 'Europe/Berlin', now }, state);
      expect(events).to.deep.equal([{ type: 'AccountTimeZoneChanged', data: { timezone: 'Europe/Berlin', at: now } }]);
      const changed = run([{ type: 'ChangeTimeZone', timezone: 'Europe/Berlin', now }], state);
      expect(accountDecider.decide({ type: 'ChangeTimeZone', timezone: 'Europe/Berlin', now }, changed)).to.deep.equal([]);
    });

    it('given an account, when the zone is not an IANA name, then the change is refused', () => {
      expect(refused({ type: 'ChangeTimeZone', timezone: 'Mars/Olympus', now }, opened())).to.equal('invalid_timezone');
    });

    it('given a settlement recorded before pricing was kept, when it is read, then its pricing is null', () => {
      const old = { type: 'ReservationSettled', data: { reservationId: 'r', amount: 1, reservedAmount: 1, overrun: 0, usage: {}, at: now } };
      expect(upcastAccountEvent(old).data).to.deep.include({ pricing: null, context: null });
    });
  });
});
