import { expect } from 'chai';
import { accountDecider, type AccountCommand } from '../../src/domain/account/decider';
import { upcastAccountEvent, type AccountEvent, type KeySettings, type ReservationPurpose } from '../../src/domain/account/events';
import { budgetPeriodOf } from '../../src/domain/account/key-limits';
import { DeciderSpecification } from '../support/decider-specification';

/** Key budgets, limits and the widening rule, as given events / when command / then events or error. */
describe('account decider: keys', () => {
  const t0 = '2026-03-10T03:00:00.000Z'; // 11:00 in Shanghai
  const unlimited: KeySettings = { name: null, allowedModels: null, budget: null, expiresAt: null, rateLimitPerMinute: null, tokensPerMinute: null };

  const given = DeciderSpecification.for(accountDecider);

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
  /** The FundsReserved that `reserve` with the same arguments decides. */
  const reservedBy = (id: string, actor: string, amount: number, now = t0): AccountEvent => ({
    type: 'FundsReserved',
    data: { reservationId: id, amount, purpose: purposeOf(actor, id), expiresAt: now, at: now },
  });

  it('counts settled charges and open reservations of the key against its budget', () => {
    const history = [...opened, issued('k1', { budget: { amount: 10, period: 'total' } }), reserved('r1', 'k1', 4), settled('r1', 'k1', 4), reserved('r2', 'k1', 3)];
    given(history).when(reserve('r3', 'k1', 3)).then([reservedBy('r3', 'k1', 3)]);
    given(history).when(reserve('r3', 'k1', 4)).thenThrows('key_budget_exceeded', { budget: 10, period: 'total', spent: 7, required: 4 });
    // Another key of the account, and the operator, are not bound by k1's budget.
    given([...opened, issued('k1', { budget: { amount: 1, period: 'total' } }), issued('k2', {})]).when(reserve('r', 'k2', 5)).then([reservedBy('r', 'k2', 5)]);
    given(history).when(reserve('r3', 'admin', 100)).then([reservedBy('r3', 'admin', 100)]);
  });

  it('starts a day budget afresh at midnight in Shanghai, and keeps the month counting', () => {
    const day = [...opened, issued('k1', { budget: { amount: 10, period: 'day' } }), reserved('r1', 'k1', 10), settled('r1', 'k1', 10)];
    given(day).when(reserve('r2', 'k1', 1, '2026-03-10T15:59:59.000Z')).thenThrows('key_budget_exceeded');
    given(day).when(reserve('r2', 'k1', 10, '2026-03-10T16:00:00.000Z')).then([reservedBy('r2', 'k1', 10, '2026-03-10T16:00:00.000Z')]);
    const month: AccountEvent[] = [...day, { type: 'ApiKeyChanged', data: { keyId: 'k1', ...unlimited, budget: { amount: 15, period: 'month' }, at: t0 } }];
    given(month).when(reserve('r2', 'k1', 6, '2026-03-20T00:00:00.000Z')).thenThrows('key_budget_exceeded', { spent: 10 });
    given(month).when(reserve('r2', 'k1', 15, '2026-03-31T16:00:00.000Z')).then([reservedBy('r2', 'k1', 15, '2026-03-31T16:00:00.000Z')]);
  });

  it('keeps a day budget spent when the account changes its time zone (the spend moves to the new zone\'s day)', () => {
    const spent = [...opened, issued('k1', { budget: { amount: 10, period: 'day' } }), reserved('r1', 'k1', 10), settled('r1', 'k1', 10)];
    // 11:00 in Shanghai is already the next day in Kiritimati (UTC+14) and still the same one in Pago Pago (UTC-11).
    for (const zone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago']) {
      const moved: AccountEvent[] = [...spent, { type: 'AccountTimeZoneChanged', data: { timezone: zone, at: t0 } }];
      given(moved).when(reserve('r2', 'k1', 1)).thenThrows('key_budget_exceeded');
      given([...moved, { type: 'AccountTimeZoneChanged', data: { timezone: 'Asia/Shanghai', at: t0 } }]).when(reserve('r2', 'k1', 1)).thenThrows('key_budget_exceeded');
    }
  });

  it('computes periods in the given zone', () => {
    expect(budgetPeriodOf('2026-03-31T16:00:00.000Z', 'month', 'Asia/Shanghai')).to.equal('2026-04');
    expect(budgetPeriodOf('2026-03-31T16:00:00.000Z', 'day', 'UTC')).to.equal('2026-03-31');
    expect(budgetPeriodOf('2026-03-31T16:00:00.000Z', 'total', 'UTC')).to.equal('total');
  });

  it('reads keys issued before limits existed as unlimited', () => {
    const old = { type: 'ApiKeyIssued', data: { keyId: 'k0', name: null, keyHash: 'h', keyPrefix: 'tr-x', allowedModels: ['chat'], at: t0 } } as AccountEvent;
    expect(upcastAccountEvent(old).data).to.deep.equal({ keyId: 'k0', name: null, keyHash: 'h', keyPrefix: 'tr-x', allowedModels: ['chat'], budget: null, expiresAt: null, rateLimitPerMinute: null, tokensPerMinute: null, at: t0 });
    given([...opened, old]).when(reserve('r', 'k0', 900)).then([reservedBy('r', 'k0', 900)]);
  });

  it('reads key changes recorded before token limits as without one', () => {
    const old = { type: 'ApiKeyChanged', data: { keyId: 'k0', name: null, allowedModels: null, budget: null, expiresAt: null, rateLimitPerMinute: 5, at: t0 } } as unknown as AccountEvent;
    expect(upcastAccountEvent(old).data).to.deep.equal({ keyId: 'k0', name: null, allowedModels: null, budget: null, expiresAt: null, rateLimitPerMinute: 5, tokensPerMinute: null, at: t0 });
  });

  describe('a key managing keys', () => {
    const parent = issued('p', { allowedModels: ['chat', 'image'], budget: { amount: 100, period: 'month' }, expiresAt: '2026-06-01T00:00:00.000Z', rateLimitPerMinute: 30, tokensPerMinute: 5_000 });
    const history = [...opened, parent, issued('wide', {})];
    const by = { keyId: 'p', gatewayRatePerMinute: 600 };
    const narrow: KeySettings = { name: 'n', allowedModels: ['chat'], budget: { amount: 50, period: 'total' }, expiresAt: '2026-05-01T00:00:00.000Z', rateLimitPerMinute: 10, tokensPerMinute: 4_000 };
    const issue = (settings: KeySettings): AccountCommand => ({ type: 'IssueApiKey', keyId: 'c', keyHash: 'hc', keyPrefix: 'tr-c', settings, by, now: t0 });

    it('creates a key within itself', () => {
      const unbudgeted = [...opened, issued('p', { allowedModels: ['chat', 'image'], expiresAt: '2026-06-01T00:00:00.000Z', rateLimitPerMinute: 30, tokensPerMinute: 5_000 })];
      given(unbudgeted).when(issue(narrow)).then([{ type: 'ApiKeyIssued', data: { keyId: 'c', keyHash: 'hc', keyPrefix: 'tr-c', ...narrow, at: t0 } }]);
    });

    it('creates no key when it has a budget itself, however narrow the new key (its spend would escape the budget)', () => {
      given(history).when(issue(narrow)).thenThrows('key_scope_exceeded');
    });

    it('never creates a key beyond itself', () => {
      const unbudgeted = [...opened, issued('p', { allowedModels: ['chat', 'image'], budget: null, expiresAt: '2026-06-01T00:00:00.000Z', rateLimitPerMinute: 30, tokensPerMinute: 5_000 })];
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
        { tokensPerMinute: 5_001 },
        { tokensPerMinute: null },
      ]) {
        given(history).when(issue({ ...narrow, ...wider })).thenThrows('key_scope_exceeded');
        // Refused for the widening itself, not only for the acting key's budget.
        if (!('budget' in wider)) given(unbudgeted).when(issue({ ...narrow, ...wider })).thenThrows('key_scope_exceeded');
      }
    });

    it('neither widens nor touches a key wider than itself, and revokes keys within itself', () => {
      const withChild = [...history, issued('c', narrow)];
      given(withChild).when({ type: 'ChangeApiKey', keyId: 'c', settings: { ...narrow, rateLimitPerMinute: 31 }, by, now: t0 }).thenThrows('key_scope_exceeded');
      given(withChild)
        .when({ type: 'ChangeApiKey', keyId: 'c', settings: { ...narrow, rateLimitPerMinute: 30 }, by, now: t0 })
        .then([{ type: 'ApiKeyChanged', data: { keyId: 'c', ...narrow, rateLimitPerMinute: 30, at: t0 } }]);
      given(withChild).when({ type: 'ChangeApiKey', keyId: 'wide', settings: narrow, by, now: t0 }).thenThrows('key_scope_exceeded');
      given(withChild).when({ type: 'RevokeApiKey', keyId: 'wide', by, now: t0 }).thenThrows('key_scope_exceeded');
      given(withChild).when({ type: 'RevokeApiKey', keyId: 'c', by, now: t0 }).then([{ type: 'ApiKeyRevoked', data: { keyId: 'c', at: t0 } }]);
      // The operator is not bound by the rule.
      given(withChild).when({ type: 'ChangeApiKey', keyId: 'c', settings: unlimited, by: null, now: t0 }).then([{ type: 'ApiKeyChanged', data: { keyId: 'c', ...unlimited, at: t0 } }]);
    });

    it('a revoked key manages nothing, and a revoked key cannot be changed', () => {
      const revoked: AccountEvent[] = [...opened, parent, { type: 'ApiKeyRevoked', data: { keyId: 'p', at: t0 } }];
      given(revoked).when(issue(narrow)).thenThrows('key_not_found');
      given(revoked).when({ type: 'ChangeApiKey', keyId: 'p', settings: unlimited, by: null, now: t0 }).thenThrows('key_not_found');
    });
  });
});
