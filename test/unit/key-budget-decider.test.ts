import { expect } from 'chai';
import { accountDecider, type AccountCommand, type AccountState } from '../../src/domain/account/decider';
import { upcastAccountEvent, type AccountEvent, type KeySettings, type ReservationPurpose } from '../../src/domain/account/events';
import { budgetPeriodOf } from '../../src/domain/account/key-limits';
import { DomainError } from '../../src/domain/decider';

/** Key budgets, limits and the widening rule, as given events / when command / then events or error. */
describe('account decider: keys', () => {
  const t0 = '2026-03-10T03:00:00.000Z'; // 11:00 in Shanghai
  const unlimited: KeySettings = { name: null, allowedModels: null, budget: null, expiresAt: null, rateLimitPerMinute: null };

  function given(events: AccountEvent[]): AccountState {
    return events.reduce(accountDecider.evolve, accountDecider.initialState());
  }
  function when(state: AccountState, command: AccountCommand): AccountEvent[] | string {
    try {
      return accountDecider.decide(command, state);
    } catch (err) {
      expect(err).to.be.instanceOf(DomainError);
      return (err as DomainError).code;
    }
  }

  const opened: AccountEvent[] = [
    { type: 'AccountOpened', data: { accountId: 'a', name: 'A', openedAt: t0 } },
    { type: 'CreditAdded', data: { entryId: 'c', amount: 1_000, reference: 'r', note: null, at: t0 } },
  ];
  const issued = (keyId: string, settings: Partial<KeySettings>): AccountEvent => ({
    type: 'ApiKeyIssued',
    data: { keyId, keyHash: `h-${keyId}`, keyPrefix: 'tr-x', ...unlimited, ...settings, at: t0 },
  });
  const purposeOf = (actor: string, ref: string): ReservationPurpose => ({ kind: 'request', ref, description: 'chat', actor, model: 'chat', endpoint: 'POST /v1/chat/completions' });
  const reserved = (id: string, actor: string, amount: number, at = t0): AccountEvent => ({
    type: 'FundsReserved',
    data: { reservationId: id, amount, purpose: purposeOf(actor, id), expiresAt: at, at },
  });
  const settled = (id: string, actor: string, amount: number, at = t0): AccountEvent => ({
    type: 'ReservationSettled',
    data: { reservationId: id, amount, reservedAmount: amount, overrun: 0, usage: {}, context: { actor, model: 'chat', endpoint: 'POST /v1/chat/completions', kind: 'request', ref: id }, pricing: null, at },
  });
  const reserve = (id: string, actor: string, amount: number, now = t0): AccountCommand => ({ type: 'Reserve', reservationId: id, amount, purpose: purposeOf(actor, id), expiresAt: now, now });

  it('counts settled charges and open reservations of the key against its budget', () => {
    const state = given([...opened, issued('k1', { budget: { amount: 10, period: 'total' } }), reserved('r1', 'k1', 4), settled('r1', 'k1', 4), reserved('r2', 'k1', 3)]);
    expect(when(state, reserve('r3', 'k1', 3))).to.deep.equal([{ type: 'FundsReserved', data: { reservationId: 'r3', amount: 3, purpose: purposeOf('k1', 'r3'), expiresAt: t0, at: t0 } }]);
    expect(when(state, reserve('r3', 'k1', 4))).to.equal('key_budget_exceeded');
    // Another key of the account, and the operator, are not bound by k1's budget.
    expect(when(given([...opened, issued('k1', { budget: { amount: 1, period: 'total' } }), issued('k2', {})]), reserve('r', 'k2', 5))).to.have.length(1);
    expect(when(state, reserve('r3', 'admin', 100))).to.have.length(1);
  });

  it('starts a day budget afresh at midnight in Shanghai, and keeps the month counting', () => {
    const day = given([...opened, issued('k1', { budget: { amount: 10, period: 'day' } }), reserved('r1', 'k1', 10), settled('r1', 'k1', 10)]);
    expect(when(day, reserve('r2', 'k1', 1, '2026-03-10T15:59:59.000Z'))).to.equal('key_budget_exceeded');
    expect(when(day, reserve('r2', 'k1', 10, '2026-03-10T16:00:00.000Z'))).to.have.length(1);
    const month = given([...opened, issued('k1', { budget: { amount: 10, period: 'day' } }), reserved('r1', 'k1', 10), settled('r1', 'k1', 10), { type: 'ApiKeyChanged', data: { keyId: 'k1', ...unlimited, budget: { amount: 15, period: 'month' }, at: t0 } }]);
    expect(when(month, reserve('r2', 'k1', 6, '2026-03-20T00:00:00.000Z'))).to.equal('key_budget_exceeded');
    expect(when(month, reserve('r2', 'k1', 15, '2026-03-31T16:00:00.000Z'))).to.have.length(1);
  });

  it('keeps a day budget spent when the account changes its time zone (the spend moves to the new zone\'s day)', () => {
    const spent = given([...opened, issued('k1', { budget: { amount: 10, period: 'day' } }), reserved('r1', 'k1', 10), settled('r1', 'k1', 10)]);
    // 11:00 in Shanghai is already the next day in Kiritimati (UTC+14) and still the same one in Pago Pago (UTC-11).
    for (const zone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago']) {
      const moved = accountDecider.evolve(spent, { type: 'AccountTimeZoneChanged', data: { timezone: zone, at: t0 } });
      expect(when(moved, reserve('r2', 'k1', 1)), zone).to.equal('key_budget_exceeded');
      const back = accountDecider.evolve(moved, { type: 'AccountTimeZoneChanged', data: { timezone: 'Asia/Shanghai', at: t0 } });
      expect(when(back, reserve('r2', 'k1', 1)), `${zone} and back`).to.equal('key_budget_exceeded');
    }
  });

  it('computes periods in the given zone', () => {
    expect(budgetPeriodOf('2026-03-31T16:00:00.000Z', 'month', 'Asia/Shanghai')).to.equal('2026-04');
    expect(budgetPeriodOf('2026-03-31T16:00:00.000Z', 'day', 'UTC')).to.equal('2026-03-31');
    expect(budgetPeriodOf('2026-03-31T16:00:00.000Z', 'total', 'UTC')).to.equal('total');
  });

  it('reads keys issued before limits existed as unlimited', () => {
    const old = { type: 'ApiKeyIssued', data: { keyId: 'k0', name: null, keyHash: 'h', keyPrefix: 'tr-x', allowedModels: ['chat'], at: t0 } } as unknown as AccountEvent;
    expect(upcastAccountEvent(old).data).to.deep.equal({ keyId: 'k0', name: null, keyHash: 'h', keyPrefix: 'tr-x', allowedModels: ['chat'], budget: null, expiresAt: null, rateLimitPerMinute: null, at: t0 });
    expect(when(given([...opened, old]), reserve('r', 'k0', 900))).to.have.length(1);
  });

  describe('a key managing keys', () => {
    const parent = issued('p', { allowedModels: ['chat', 'image'], budget: { amount: 100, period: 'month' }, expiresAt: '2026-06-01T00:00:00.000Z', rateLimitPerMinute: 30 });
    const state = given([...opened, parent, issued('wide', {})]);
    const by = { keyId: 'p', gatewayRatePerMinute: 600 };
    const narrow: KeySettings = { name: 'n', allowedModels: ['chat'], budget: { amount: 50, period: 'total' }, expiresAt: '2026-05-01T00:00:00.000Z', rateLimitPerMinute: 10 };
    const issue = (settings: KeySettings): AccountCommand => ({ type: 'IssueApiKey', keyId: 'c', keyHash: 'hc', keyPrefix: 'tr-c', settings, by, now: t0 });

    it('creates a key within itself', () => {
      const unbudgeted = given([...opened, issued('p', { allowedModels: ['chat', 'image'], expiresAt: '2026-06-01T00:00:00.000Z', rateLimitPerMinute: 30 })]);
      expect(when(unbudgeted, issue(narrow))).to.deep.equal([{ type: 'ApiKeyIssued', data: { keyId: 'c', keyHash: 'hc', keyPrefix: 'tr-c', ...narrow, at: t0 } }]);
    });

    it('creates no key when it has a budget itself, however narrow the new key (its spend would escape the budget)', () => {
      expect(when(state, issue(narrow))).to.equal('key_scope_exceeded');
    });

    it('never creates a key beyond itself', () => {
      for (const wider of [
        { allowedModels: ['chat', 'video'] },
        { allowedModels: null },
        { budget: { amount: 101, period: 'month' as const } },
        { budget: { amount: 10, period: 'day' as const } },
        { budget: null },
        { expiresAt: '2026-06-02T00:00:00.000Z' },
        { expiresAt: null },
        { rateLimitPerMinute: 31 },
        { rateLimitPerMinute: null },
      ]) {
        expect(when(state, issue({ ...narrow, ...wider })), JSON.stringify(wider)).to.equal('key_scope_exceeded');
      }
    });

    it('neither widens nor touches a key wider than itself, and revokes keys within itself', () => {
      const withChild = given([...opened, parent, issued('wide', {}), issued('c', narrow)]);
      expect(when(withChild, { type: 'ChangeApiKey', keyId: 'c', settings: { ...narrow, rateLimitPerMinute: 31 }, by, now: t0 })).to.equal('key_scope_exceeded');
      expect(when(withChild, { type: 'ChangeApiKey', keyId: 'c', settings: { ...narrow, rateLimitPerMinute: 30 }, by, now: t0 })).to.deep.equal([
        { type: 'ApiKeyChanged', data: { keyId: 'c', ...narrow, rateLimitPerMinute: 30, at: t0 } },
      ]);
      expect(when(withChild, { type: 'ChangeApiKey', keyId: 'wide', settings: narrow, by, now: t0 })).to.equal('key_scope_exceeded');
      expect(when(withChild, { type: 'RevokeApiKey', keyId: 'wide', by, now: t0 })).to.equal('key_scope_exceeded');
      expect(when(withChild, { type: 'RevokeApiKey', keyId: 'c', by, now: t0 })).to.deep.equal([{ type: 'ApiKeyRevoked', data: { keyId: 'c', at: t0 } }]);
      // The operator is not bound by the rule.
      expect(when(withChild, { type: 'ChangeApiKey', keyId: 'c', settings: unlimited, by: null, now: t0 })).to.have.length(1);
    });

    it('a revoked key manages nothing', () => {
      const revoked = given([...opened, parent, { type: 'ApiKeyRevoked', data: { keyId: 'p', at: t0 } }]);
      expect(when(revoked, issue(narrow))).to.equal('key_not_found');
    });
  });
});
