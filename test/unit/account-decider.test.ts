import { units } from '../support/pricing';
import { expect } from 'chai';
import { accountDecider, available, reachRefusal, RECENT_GENERATION, type AccountCommand } from '../../src/domain/account/decider';
import { upcastAccountEvent, type AccountEvent, type ChargeContext, type ReservationPurpose } from '../../src/domain/account/events';
import { pricingOf, tokenLine, type Pricing } from '../../src/billing/money';
import { DeciderSpecification } from '../support/decider-specification';
import { shardedValues } from '../../src/domain/sharded-record';

/** The account decider as given events / when command / then events (or the refusal's code). */
const given = DeciderSpecification.for(accountDecider);
const stateOf = (events: readonly AccountEvent[]) => events.reduce(accountDecider.evolve, accountDecider.initialState());

const now = '2026-01-01T00:00:00.000Z';
const purpose: ReservationPurpose = { kind: 'request', ref: 'req_1', description: 'chat', actor: 'system', model: 'chat', endpoint: 'test' };
const context: ChargeContext = { actor: 'system', model: 'chat', endpoint: 'test', kind: 'request', ref: 'req_1' };

// Events.
const opened: AccountEvent = { type: 'AccountOpened', data: { accountId: 'a', name: 'A', openedAt: now } };
const credited = (amount: number, reference = 'top-up-1', entryId = 'c1'): AccountEvent => ({ type: 'CreditAdded', data: { entryId, amount, reference, note: null, at: now } });
const reserved = (reservationId: string, amount: number): AccountEvent => ({ type: 'FundsReserved', data: { reservationId, amount, purpose, expiresAt: now, at: now } });
const settled = (reservationId: string, reservedAmount: number, pricing: Pricing, usage: Record<string, unknown> = {}): AccountEvent => ({
  type: 'ReservationSettled',
  data: { reservationId, amount: pricing.amount, reservedAmount, overrun: Math.max(0, pricing.amount - reservedAmount), usage, context, pricing, at: now },
});
const released = (reservationId: string, amount: number, reason: string): AccountEvent => ({ type: 'ReservationReleased', data: { reservationId, amount, reason, context, at: now } });
const refunded = (refundId: string, reservationId: string, amount: number, reason: string): AccountEvent => ({
  type: 'ChargeRefunded',
  data: { refundId, reservationId, amount, reason, context, at: now },
});
/** An account opened with 100 credited. */
const funded: AccountEvent[] = [opened, credited(100)];

// Commands.
const reserve = (reservationId: string, amount: number): AccountCommand => ({ type: 'Reserve', reservationId, amount, purpose, expiresAt: now, now });
const settle = (reservationId: string, pricing: Pricing, usage: Record<string, unknown> = {}): AccountCommand => ({ type: 'Settle', reservationId, pricing, usage, now });
const release = (reservationId: string, reason: string): AccountCommand => ({ type: 'Release', reservationId, reason, now });
const refund = (refundId: string, reservationId: string, amount: number, extra: { settledCharge?: number; reason?: string } = {}): AccountCommand => ({
  type: 'Refund',
  refundId,
  reservationId,
  amount,
  reason: extra.reason ?? 'x',
  context,
  ...(extra.settledCharge === undefined ? {} : { settledCharge: extra.settledCharge }),
  now,
});

/** `count` reservations of 1, each reserved and closed: enough of them push older outcomes out of memory. */
function closedMany(count: number, close: (id: string) => AccountEvent): AccountEvent[] {
  return Array.from({ length: count }, (_, i) => [reserved(`r${i}`, 1), close(`r${i}`)]).flat();
}

describe('account decider', () => {
  describe('opening and credits', () => {
    it('opens an account once', () => {
      given([]).when({ type: 'OpenAccount', accountId: 'a', name: 'A', now }).then([opened]);
      given([opened]).when({ type: 'OpenAccount', accountId: 'a', name: 'A', now }).thenThrows('account_exists');
    });

    it('refuses commands on an account that was never opened', () => {
      given([]).when(reserve('r', 1)).thenThrows('account_not_found');
      given([]).when({ type: 'AddCredit', entryId: 'c', amount: 1, reference: 'x', note: null, now }).thenThrows('account_not_found');
    });

    it('credits once per reference and refuses a reused reference with another amount', () => {
      given([opened]).when({ type: 'AddCredit', entryId: 'c1', amount: 100, reference: 'top-up-1', note: null, now }).then([credited(100)]);
      given(funded).when({ type: 'AddCredit', entryId: 'c2', amount: 100, reference: 'top-up-1', note: null, now }).thenNothingHappened();
      given(funded).when({ type: 'AddCredit', entryId: 'c2', amount: 5, reference: 'top-up-1', note: null, now }).thenThrows('credit_reference_conflict');
      // The repeated credit added nothing: 100 is still all there is.
      given(funded).when(reserve('r', 101)).thenThrows('insufficient_balance', { required: 101, available: 100 });
    });

    it('refuses amounts that are not non-negative integers of minor units', () => {
      given(funded).when(reserve('r1', 1.5)).thenThrows('invalid_amount');
      given(funded).when(reserve('r1', -1)).thenThrows('invalid_amount');
      given(funded).when({ type: 'AddCredit', entryId: 'c', amount: 0, reference: 'z', note: null, now }).thenThrows('invalid_amount');
      given(funded).when(reserve('r1', 0)).then([reserved('r1', 0)]);
    });
  });

  describe('reservations', () => {
    it('reserves up to the available balance and refuses beyond it', () => {
      given(funded).when(reserve('r1', 60)).then([reserved('r1', 60)]);
      given([...funded, reserved('r1', 60)]).when(reserve('r2', 41)).thenThrows('insufficient_balance', { required: 41, available: 40 });
      given([...funded, reserved('r1', 60)]).when(reserve('r2', 40)).then([reserved('r2', 40)]);
    });

    it('reserves once per id: the same amount again is a no-op, another amount or a closed id is refused', () => {
      given([...funded, reserved('r1', 60)]).when(reserve('r1', 60)).thenNothingHappened();
      given([...funded, reserved('r1', 60)]).when(reserve('r1', 61)).thenThrows('reservation_exists');
      given([...funded, reserved('r1', 60), released('r1', 60, 'x')]).when(reserve('r1', 60)).thenThrows('reservation_closed');
    });

    it('settles by actual usage, which gives the rest of the freeze back', () => {
      given([...funded, reserved('r1', 60)]).when(settle('r1', units(25), { tokens: 25 })).then([settled('r1', 60, units(25), { tokens: 25 })]);
      // 100 credited, 25 charged, nothing frozen: 75 can be reserved, 76 cannot.
      const after = [...funded, reserved('r1', 60), settled('r1', 60, units(25))];
      given(after).when(reserve('r2', 75)).then([reserved('r2', 75)]);
      given(after).when(reserve('r2', 76)).thenThrows('insufficient_balance', { required: 76, available: 75 });
    });

    it('records an overrun when usage exceeds the reservation, and the balance goes below zero', () => {
      given([...funded, reserved('r1', 100)]).when(settle('r1', units(130))).then([settled('r1', 100, units(130))]);
      given([...funded, reserved('r1', 100), settled('r1', 100, units(130))]).when(reserve('r2', 0)).thenThrows('insufficient_balance', { required: 0, available: -30 });
    });

    it('releases the whole freeze', () => {
      given([...funded, reserved('r1', 60)]).when(release('r1', 'upstream failed')).then([released('r1', 60, 'upstream failed')]);
      given([...funded, reserved('r1', 60), released('r1', 60, 'upstream failed')]).when(reserve('r2', 100)).then([reserved('r2', 100)]);
    });

    it('closes a reservation once: a second settle or release is a no-op and the first outcome stays', () => {
      const releasedFirst = [...funded, reserved('r1', 60), released('r1', 60, 'upstream failed')];
      given(releasedFirst).when(settle('r1', units(60))).thenNothingHappened();
      given(releasedFirst).when(release('r1', 'again')).thenNothingHappened();
      // Released, not settled: there is no charge to refund.
      given(releasedFirst).when(refund('f1', 'r1', 1)).thenThrows('refund_not_allowed');
    });

    it('refuses to close a reservation that never existed', () => {
      given(funded).when(settle('nope', units(1))).thenThrows('reservation_not_found');
      given(funded).when(release('nope', 'x')).thenThrows('reservation_not_found');
    });

    it('closes a reservation with an event that names who asked, for which model, through which endpoint', () => {
      const asked: ReservationPurpose = { kind: 'request', ref: 'req_9', description: 'chat-fast', actor: 'key_1', model: 'chat-fast', endpoint: 'POST /v1/chat/completions' };
      const expected: ChargeContext = { actor: 'key_1', model: 'chat-fast', endpoint: 'POST /v1/chat/completions', kind: 'request', ref: 'req_9' };
      const history: AccountEvent[] = [...funded, { type: 'FundsReserved', data: { reservationId: 'r1', amount: 10, purpose: asked, expiresAt: now, at: now } }];
      given(history)
        .when(settle('r1', units(8)))
        .then([{ type: 'ReservationSettled', data: { reservationId: 'r1', amount: 8, reservedAmount: 10, overrun: 0, usage: {}, context: expected, pricing: units(8), at: now } }]);
      given(history).when(release('r1', 'upstream failed')).then([{ type: 'ReservationReleased', data: { reservationId: 'r1', amount: 10, reason: 'upstream failed', context: expected, at: now } }]);
    });

    it('reads a reservation recorded before its actor, model and endpoint were kept, and closes it naming them unknown', () => {
      const legacy = { type: 'FundsReserved', data: { reservationId: 'old', amount: 10, purpose: { kind: 'task', ref: 'video-1', description: 'video-ref-2.0' }, expiresAt: now, at: now } } as AccountEvent;
      const unknown: ChargeContext = { actor: 'unknown', model: 'video-ref-2.0', endpoint: 'unknown', kind: 'task', ref: 'video-1' };
      given([...funded, legacy])
        .when(settle('old', units(10)))
        .then([{ type: 'ReservationSettled', data: { reservationId: 'old', amount: 10, reservedAmount: 10, overrun: 0, usage: {}, context: unknown, pricing: units(10), at: now } }]);
      // A closing event of that age has no context; the reservation still reads as released.
      const legacyClose = { type: 'ReservationReleased', data: { reservationId: 'old', amount: 10, reason: 'x', at: now } } as AccountEvent;
      given([...funded, legacy, legacyClose]).when(release('old', 'again')).thenNothingHappened();
      given([...funded, legacy, legacyClose]).when(refund('f', 'old', 1)).thenThrows('refund_not_allowed');
    });
  });

  describe('refunds', () => {
    const charged50 = [...funded, reserved('r1', 60), settled('r1', 60, units(50))];

    it('refunds at most the settled charge, in total', () => {
      given(charged50).when(refund('f1', 'r1', 51)).thenThrows('refund_exceeds_charge');
      given(charged50).when(refund('f1', 'r1', 20, { reason: 'goodwill' })).then([refunded('f1', 'r1', 20, 'goodwill')]);
      given([...charged50, refunded('f1', 'r1', 20, 'goodwill')]).when(refund('f2', 'r1', 31)).thenThrows('refund_exceeds_charge');
      given([...charged50, refunded('f1', 'r1', 20, 'goodwill')]).when(refund('f2', 'r1', 30)).then([refunded('f2', 'r1', 30, 'x')]);
    });

    it('gives the refund back to the balance', () => {
      // 100 credited, 50 charged, 20 refunded: 70 available.
      const history = [...charged50, refunded('f1', 'r1', 20, 'goodwill')];
      given(history).when(reserve('r2', 71)).thenThrows('insufficient_balance', { available: 70 });
      given(history).when(reserve('r2', 70)).then([reserved('r2', 70)]);
    });

    it('refunds once per reference, and refuses a reused reference for another amount or reservation', () => {
      const history = [...charged50, refunded('f1', 'r1', 20, 'goodwill')];
      given(history).when(refund('f1', 'r1', 20, { reason: 'goodwill' })).thenNothingHappened();
      given(history).when(refund('f1', 'r1', 21)).thenThrows('refund_reference_conflict');
      given(history).when(refund('f1', 'r2', 20)).thenThrows('refund_reference_conflict');
    });

    it('refuses to refund an open, released or unknown reservation, even when a caller claims a settled charge for it', () => {
      const history = [...funded, reserved('r1', 30), reserved('r2', 30), released('r2', 30, 'failed')];
      given(history).when(refund('f1', 'r1', 1, { settledCharge: 30 })).thenThrows('refund_not_allowed');
      given(history).when(refund('f2', 'r2', 1, { settledCharge: 30 })).thenThrows('refund_not_allowed');
      given(history).when(refund('f3', 'unknown', 1)).thenThrows('refund_not_allowed');
    });

    it('refunds a charge settled too long ago to be remembered, against the settled charge the caller found, and never beyond it in total', () => {
      // Enough later closes to push the old one out of both generations of remembered outcomes.
      const history = [
        opened,
        credited(1_000_000),
        reserved('old', 60),
        settled('old', 60, units(40)),
        refunded('early', 'old', 10, 'first'),
        ...closedMany(2 * RECENT_GENERATION + 1, (id) => released(id, 1, 'x')),
      ];
      given(history).when(refund('late', 'old', 31)).thenThrows('refund_not_allowed');
      // 40 charged, 10 refunded before: 30 left, whatever the window forgot.
      given(history).when(refund('late', 'old', 31, { settledCharge: 40 })).thenThrows('refund_exceeds_charge');
      given(history).when(refund('late', 'old', 30, { settledCharge: 40 })).then([refunded('late', 'old', 30, 'x')]);
      given([...history, refunded('late', 'old', 30, 'x')]).when(refund('later', 'old', 1, { settledCharge: 40 })).thenThrows('refund_exceeds_charge');
    });

    it('answers a repeated close of a recently closed reservation from memory, and a forgotten one as not found', () => {
      const history = [opened, credited(1_000_000), ...closedMany(3 * RECENT_GENERATION + 5, (id) => settled(id, 1, units(1)))];
      given(history).when(settle(`r${2 * RECENT_GENERATION + 10}`, units(1))).thenNothingHappened();
      given(history).when(settle('r0', units(1))).thenThrows('reservation_not_found');
    });
  });

  describe('keys', () => {
    const unlimited = { name: null, allowedModels: null, budget: null, expiresAt: null, rateLimitPerMinute: null, tokensPerMinute: null };
    const issued: AccountEvent = { type: 'ApiKeyIssued', data: { keyId: 'k1', keyHash: 'h', keyPrefix: 'tr-abc', ...unlimited, at: now } };

    it('issues a key', () => {
      given(funded)
        .when({ type: 'IssueApiKey', keyId: 'k1', keyHash: 'h', keyPrefix: 'tr-abc', settings: unlimited, by: null, now })
        .then([issued]);
    });

    it('revokes keys once and refuses unknown keys', () => {
      given([...funded, issued]).when({ type: 'RevokeApiKey', keyId: 'k1', now }).then([{ type: 'ApiKeyRevoked', data: { keyId: 'k1', at: now } }]);
      given([...funded, issued, { type: 'ApiKeyRevoked', data: { keyId: 'k1', at: now } }]).when({ type: 'RevokeApiKey', keyId: 'k1', now }).thenNothingHappened();
      given([...funded, issued]).when({ type: 'RevokeApiKey', keyId: 'k2', now }).thenThrows('key_not_found');
    });

    it('regenerates a live key’s secret only, keeping its limits, and refuses unknown, revoked and wider keys', () => {
      const regenerate = { type: 'RegenerateApiKeySecret', keyId: 'k1', keyHash: 'h2', keyPrefix: 'tr-new', by: null, now } as const;
      const regenerated: AccountEvent = { type: 'ApiKeySecretRegenerated', data: { keyId: 'k1', keyHash: 'h2', keyPrefix: 'tr-new', at: now } };
      given([...funded, issued]).when(regenerate).then([regenerated]);
      // Nothing but the secret changed: the key may be changed, and regenerated again, as before.
      given([...funded, issued, regenerated]).when({ ...regenerate, keyHash: 'h3' }).then([{ type: 'ApiKeySecretRegenerated', data: { keyId: 'k1', keyHash: 'h3', keyPrefix: 'tr-new', at: now } }]);
      given([...funded, issued]).when({ ...regenerate, keyId: 'k2' }).thenThrows('key_not_found');
      given([...funded, issued, { type: 'ApiKeyRevoked', data: { keyId: 'k1', at: now } }]).when(regenerate).thenThrows('key_not_found');
      const narrow: AccountEvent = { type: 'ApiKeyIssued', data: { keyId: 'k0', keyHash: 'h0', keyPrefix: 'tr-nar', ...unlimited, allowedModels: ['chat-fast'], at: now } };
      given([...funded, issued, narrow]).when({ ...regenerate, by: { keyId: 'k0', gatewayRatePerMinute: 60 } }).thenThrows('key_scope_exceeded');
    });

    it('given a key with a budget, when it regenerates another key, even one no wider, then it is refused; itself it may regenerate', () => {
      const budgeted = { ...unlimited, allowedModels: ['chat-pro'], budget: { amount: 1, period: 'total' as const } };
      const holder: AccountEvent = { type: 'ApiKeyIssued', data: { keyId: 'k1', keyHash: 'h1', keyPrefix: 'tr-one', ...budgeted, at: now } };
      const twin: AccountEvent = { type: 'ApiKeyIssued', data: { keyId: 'k2', keyHash: 'h2', keyPrefix: 'tr-two', ...budgeted, at: now } };
      const by = { keyId: 'k1', gatewayRatePerMinute: 60 };
      const regenerate = (keyId: string) => ({ type: 'RegenerateApiKeySecret', keyId, keyHash: 'h9', keyPrefix: 'tr-new', by, now }) as const;
      given([...funded, holder, twin]).when(regenerate('k2')).thenThrows('key_scope_exceeded');
      given([...funded, holder, twin]).when(regenerate('k1')).then([{ type: 'ApiKeySecretRegenerated', data: { keyId: 'k1', keyHash: 'h9', keyPrefix: 'tr-new', at: now } }]);
    });

    it('given keys, when one reaches another (the playground, a regeneration), then only itself, or a key no wider when it has no budget', () => {
      const wide: AccountEvent = { type: 'ApiKeyIssued', data: { keyId: 'wide', keyHash: 'hw', keyPrefix: 'tr-w', ...unlimited, at: now } };
      const narrow: AccountEvent = { type: 'ApiKeyIssued', data: { keyId: 'narrow', keyHash: 'hn', keyPrefix: 'tr-n', ...unlimited, allowedModels: ['chat-pro'], at: now } };
      const narrower: AccountEvent = { type: 'ApiKeyIssued', data: { keyId: 'narrower', keyHash: 'hr', keyPrefix: 'tr-r', ...unlimited, allowedModels: ['chat-pro'], rateLimitPerMinute: 5, at: now } };
      const budgeted: AccountEvent = {
        type: 'ApiKeyIssued',
        data: { keyId: 'budgeted', keyHash: 'hb', keyPrefix: 'tr-b', ...unlimited, allowedModels: ['chat-pro'], budget: { amount: 10, period: 'total' }, at: now },
      };
      const revoked: AccountEvent = { type: 'ApiKeyRevoked', data: { keyId: 'narrower', at: now } };
      const state = stateOf([...funded, wide, narrow, narrower, budgeted]);
      const as = (keyId: string) => ({ keyId, gatewayRatePerMinute: 60 });
      const reach = (by: string, keyId: string) => reachRefusal(state, as(by), keyId)?.code ?? null;
      expect(reach('narrow', 'narrow')).to.equal(null);
      expect(reach('narrow', 'narrower')).to.equal(null);
      expect(reach('narrow', 'budgeted')).to.equal(null);
      expect(reach('narrow', 'wide')).to.equal('key_scope_exceeded');
      expect(reach('wide', 'narrow')).to.equal(null);
      expect(reach('budgeted', 'budgeted')).to.equal(null);
      expect(reach('budgeted', 'narrower')).to.equal('key_scope_exceeded');
      expect(reachRefusal(state, null, 'wide')).to.equal(null);
      expect(reachRefusal(stateOf([...funded, wide, narrow, narrower, revoked]), as('narrow'), 'narrower')?.code).to.equal('key_not_found');
    });
  });

  describe('settings, pricing and time zone', () => {
    it('rotates the webhook secret and changes the default video URL mode', () => {
      given(funded).when({ type: 'RotateWebhookSecret', secret: 's3cret', now }).then([{ type: 'WebhookSecretRotated', data: { secret: 's3cret', at: now } }]);
      given(funded).when({ type: 'ChangeSettings', defaultVideoUrlMode: 'tos', now }).then([{ type: 'AccountSettingsChanged', data: { defaultVideoUrlMode: 'tos', at: now } }]);
    });

    it('given an open reservation, when it is settled with a pricing, then the settlement records it and charges its amount', () => {
      const pricing = pricingOf(tokenLine({ input_per_million: 2_000_000, output_per_million: 8_000_000 }, 3, 2));
      expect(pricing.amount).to.equal(22);
      given([...funded, reserved('r1', 50)]).when(settle('r1', pricing)).then([settled('r1', 50, pricing)]);
    });

    it('given an open reservation, when a pricing does not add up to its amount, then the settlement is refused', () => {
      const forged = { amount: 1, lines: [{ units: { images: 2 }, unit_prices: { images: 5 }, per: 1, amount: 1 }] };
      given([...funded, reserved('r1', 50)]).when(settle('r1', forged)).thenThrows('invalid_pricing');
    });

    it('given an account in the default zone, when the zone changes, then one event records it and the same zone again records nothing', () => {
      given(funded).when({ type: 'ChangeTimeZone', timezone: 'Asia/Shanghai', now }).thenNothingHappened();
      given(funded).when({ type: 'ChangeTimeZone', timezone: 'Europe/Berlin', now }).then([{ type: 'AccountTimeZoneChanged', data: { timezone: 'Europe/Berlin', at: now } }]);
      given([...funded, { type: 'AccountTimeZoneChanged', data: { timezone: 'Europe/Berlin', at: now } }]).when({ type: 'ChangeTimeZone', timezone: 'Europe/Berlin', now }).thenNothingHappened();
    });

    it('given an account, when the zone is not an IANA name, then the change is refused', () => {
      given(funded).when({ type: 'ChangeTimeZone', timezone: 'Mars/Olympus', now }).thenThrows('invalid_timezone');
    });

    it('given a settlement recorded before pricing was kept, when it is read, then its pricing is null', () => {
      const old = { type: 'ReservationSettled', data: { reservationId: 'r', amount: 1, reservedAmount: 1, overrun: 0, usage: {}, at: now } };
      expect(upcastAccountEvent(old).data).to.deep.include({ pricing: null, context: null });
    });
  });

  describe('the state (no event shows it)', () => {
    it('stays bounded however many reservations close: two generations of remembered outcomes', () => {
      const history = [opened, credited(1_000_000), ...closedMany(RECENT_GENERATION * 3 + 5, (id) => settled(id, 1, units(1)))];
      const state = history.reduce(accountDecider.evolve, accountDecider.initialState());
      expect(Object.keys(state.recentlyClosed)).to.have.length(5);
      expect(Object.keys(state.previouslyClosed)).to.have.length(RECENT_GENERATION);
      expect(shardedValues(state.open)).to.have.length(0);
      expect(available(state)).to.equal(1_000_000 - (RECENT_GENERATION * 3 + 5));
    });
  });
});

describe('account decider: keys named like properties of every object', () => {
  const names = ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'];
  const fold = (events: readonly AccountEvent[]) => events.reduce(accountDecider.evolve, accountDecider.initialState());
  const answer = (command: AccountCommand, state: ReturnType<typeof fold>) => {
    try {
      return accountDecider.decide(command, state);
    } catch (err) {
      return (err as { code?: string }).code ?? String(err);
    }
  };
  // A folded state's records are copies without a prototype; its first records and one read
  // from a snapshot (JSON) have one: the decisions must not tell them apart.
  const histories: Record<string, AccountEvent[]> = {
    'a new account': funded,
    'an account with closed and refunded reservations': [...funded, reserved('r1', 10), settled('r1', 10, units(5)), refunded('f1', 'r1', 1, 'x'), reserved('r2', 10)],
  };

  for (const [description, history] of Object.entries(histories)) {
    it(`decides the same on ${description}, folded or read back from a snapshot, and finds no entry it does not hold`, () => {
      const folded = fold(history);
      const snapshot = JSON.parse(JSON.stringify(folded)) as typeof folded;
      for (const name of names) {
        const commands: AccountCommand[] = [
          { type: 'AddCredit', entryId: `c-${name}`, amount: 1, reference: name, note: null, now },
          reserve(name, 1),
          settle(name, units(1)),
          release(name, 'x'),
          refund(name, 'r1', 1),
          refund(`f-${name}`, name, 1, { settledCharge: 1 }),
        ];
        for (const command of commands) {
          const onFolded = answer(command, folded);
          expect(answer(command, snapshot), `${command.type} ${name}`).to.deep.equal(onFolded);
          expect(onFolded, `${command.type} ${name}`).not.to.be.oneOf(['credit_reference_conflict', 'reservation_exists', 'reservation_closed', 'refund_exists']);
        }
      }
    });
  }
});
