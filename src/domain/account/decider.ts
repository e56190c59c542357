import { recomputePricing, type Pricing } from '../../billing/money';
import { DEFAULT_TIME_ZONE, isTimeZone } from '../../accounts/calendar';
import { DomainError, type Decider } from '../decider';
import { entryOf, hasEntry, withEntry } from '../records';
import { EMPTY_SHARDED_RECORD, shardedEntry, shardedValues, withoutShardedEntry, withShardedEntry, type ShardedRecord } from '../sharded-record';
import { withChanges } from '../with-changes';
import { chargeContextOf, upcastAccountEvent, type AccountEvent, type ChargeChannels, type ChargeContext, type KeySettings, type ReservationPurpose, type VideoUrlMode } from './events';
import { NO_SPEND, rezoned, spentInPeriod, wideningOf, withCharge, type KeyLimits, type KeySpend } from './key-limits';

/**
 * The prepaid ledger of one account, modelled on two-phase transfers: a reservation freezes
 * funds (pending), then exactly one closing event either settles it by actual usage (post) or
 * releases it (void). Amounts are integers in minor units (1 = 0.000001 CNY).
 *
 * available = credited - settled - frozen + refunded. Only a settlement above its reservation
 * (an overrun) can take `available` below zero; a reservation never does.
 */
export interface OpenReservation {
  readonly amount: number;
  readonly purpose: ReservationPurpose;
  readonly expiresAt: string;
}

export type ClosedOutcome =
  | { readonly kind: 'settled'; readonly amount: number; readonly reservedAmount: number; readonly refunded: number }
  | { readonly kind: 'released'; readonly amount: number; readonly reason: string };

/** How a closed reservation is remembered; what was refunded of it lives in refundedByReservation. */
type RememberedOutcome = { readonly kind: 'settled'; readonly amount: number; readonly reservedAmount: number } | Extract<ClosedOutcome, { kind: 'released' }>;

export interface AccountState {
  readonly exists: boolean;
  readonly accountId: string;
  readonly name: string;
  readonly credited: number;
  readonly settled: number;
  readonly refunded: number;
  readonly frozen: number;
  /** Sharded: a busy account holds many, and every reservation and close changes one (sharded-record.ts). */
  readonly open: ShardedRecord<OpenReservation>;
  /**
   * Outcomes of the most recently closed reservations, so that a repeated settle or release can
   * answer with the first outcome. Bounded to keep the state (and its snapshots) small: safety does
   * not depend on it, since only an open reservation can ever close. Kept as two generations of
   * up to RECENT_GENERATION entries: a close copies only the young generation, and when it is full
   * the old one is dropped whole, so folding a long stream costs no per-event deletes or shifts.
   */
  readonly recentlyClosed: Readonly<Record<string, RememberedOutcome>>;
  readonly previouslyClosed: Readonly<Record<string, RememberedOutcome>>;
  /**
   * What has been refunded of each reservation ever refunded, and each refund by its reference
   * (a repeated refund is a no-op). They grow with refunds only, which are rare.
   */
  readonly refundedByReservation: Readonly<Record<string, number>>;
  readonly refunds: Readonly<Record<string, { readonly reservationId: string; readonly amount: number }>>;
  /** Credit references seen, so that a repeated top-up is a no-op. */
  readonly credits: Readonly<Record<string, { readonly entryId: string; readonly amount: number }>>;
  readonly keys: Readonly<Record<string, KeyState>>;
  readonly webhookSecret: string | null;
  readonly timezone: string;
}

export interface KeyState {
  readonly revoked: boolean;
  readonly limits: KeyLimits;
  readonly spend: KeySpend;
}

/** The key acting on keys from the account's own API (null: the operator), and the rate it runs at without one of its own. */
export type ActingKey = { readonly keyId: string; readonly gatewayRatePerMinute: number } | null;

/**
 * A generation's size. Every close copies the young generation, so this is a cost per request: at
 * 128, these copies and their garbage were about 13% of the gateway's CPU for a chat request on a
 * busy account (bench hotpath, 64 connections). A close older than both generations still answers
 * with its first outcome, from the ledger view (the accounts service), one query later.
 */
export const RECENT_GENERATION = 32;

/** The outcome of a recently closed reservation, from either generation. */
export function closedOutcomeOf(state: AccountState, reservationId: string): ClosedOutcome | undefined {
  const outcome = entryOf(state.recentlyClosed, reservationId) ?? entryOf(state.previouslyClosed, reservationId);
  if (outcome?.kind !== 'settled') return outcome;
  return { kind: 'settled', amount: outcome.amount, reservedAmount: outcome.reservedAmount, refunded: entryOf(state.refundedByReservation, reservationId) ?? 0 };
}

export type AccountCommand =
  | { type: 'OpenAccount'; accountId: string; name: string; now: string }
  | { type: 'AddCredit'; entryId: string; amount: number; reference: string; note: string | null; now: string }
  | { type: 'Reserve'; reservationId: string; amount: number; purpose: ReservationPurpose; expiresAt: string; now: string }
  | { type: 'Settle'; reservationId: string; pricing: Pricing; usage: Record<string, unknown>; served?: ChargeChannels; now: string }
  | { type: 'Release'; reservationId: string; reason: string; now: string }
  | {
      type: 'Refund';
      refundId: string;
      reservationId: string;
      amount: number;
      reason: string;
      /**
       * The settled charge of a reservation closed too long ago for the state to remember it, as
       * the caller found it in the log's ledger view (a settlement never changes once recorded).
       * Ignored for a recently closed one.
       */
      settledCharge?: number;
      /** Why the refunded charge was made, as the ledger view of its reservation tells. */
      context: ChargeContext;
      now: string;
    }
  | { type: 'IssueApiKey'; keyId: string; keyHash: string; keyPrefix: string; settings: KeySettings; by: ActingKey; now: string }
  | { type: 'ChangeApiKey'; keyId: string; settings: KeySettings; by: ActingKey; now: string }
  | { type: 'RevokeApiKey'; keyId: string; by?: ActingKey; now: string }
  | { type: 'RegenerateApiKeySecret'; keyId: string; keyHash: string; keyPrefix: string; by: ActingKey; now: string }
  | { type: 'RotateWebhookSecret'; secret: string; now: string }
  | { type: 'ChangeSettings'; defaultVideoUrlMode: VideoUrlMode; now: string }
  | { type: 'ChangeTimeZone'; timezone: string; now: string };

export function available(state: AccountState): number {
  return state.credited - state.settled - state.frozen + state.refunded;
}

function initialState(): AccountState {
  return {
    exists: false,
    accountId: '',
    name: '',
    credited: 0,
    settled: 0,
    refunded: 0,
    frozen: 0,
    open: EMPTY_SHARDED_RECORD,
    recentlyClosed: {},
    previouslyClosed: {},
    refundedByReservation: {},
    refunds: {},
    credits: {},
    keys: {},
    webhookSecret: null,
    timezone: DEFAULT_TIME_ZONE,
  };
}

function requireAmount(amount: number, allowZero: boolean): void {
  if (!Number.isSafeInteger(amount) || amount < 0 || (!allowZero && amount === 0)) {
    throw new DomainError('invalid_amount', `amount must be a ${allowZero ? 'non-negative' : 'positive'} integer of minor units`);
  }
}

function decide(command: AccountCommand, state: AccountState): AccountEvent[] {
  if (command.type === 'OpenAccount') {
    if (state.exists) throw new DomainError('account_exists', `account ${command.accountId} already exists`);
    return [{ type: 'AccountOpened', data: { accountId: command.accountId, name: command.name, openedAt: command.now } }];
  }
  if (!state.exists) throw new DomainError('account_not_found', 'account not found');

  switch (command.type) {
    case 'AddCredit': {
      requireAmount(command.amount, false);
      const seen = entryOf(state.credits, command.reference);
      if (seen) {
        if (seen.amount !== command.amount) {
          throw new DomainError('credit_reference_conflict', `reference ${command.reference} was already used for a credit of ${seen.amount}`);
        }
        return [];
      }
      return [
        {
          type: 'CreditAdded',
          data: { entryId: command.entryId, amount: command.amount, reference: command.reference, note: command.note, at: command.now },
        },
      ];
    }
    case 'Reserve': {
      requireAmount(command.amount, true);
      const existing = shardedEntry(state.open, command.reservationId);
      if (existing) {
        if (existing.amount === command.amount) return [];
        throw new DomainError('reservation_exists', `reservation ${command.reservationId} exists with another amount`);
      }
      if (closedOutcomeOf(state, command.reservationId)) {
        throw new DomainError('reservation_closed', `reservation ${command.reservationId} is already closed`);
      }
      refuseOverKeyBudget(state, command.purpose.actor, command.amount, command.now);
      if (available(state) < command.amount) {
        throw new DomainError('insufficient_balance', 'insufficient balance for this request', {
          required: command.amount,
          available: available(state),
        });
      }
      return [
        {
          type: 'FundsReserved',
          data: {
            reservationId: command.reservationId,
            amount: command.amount,
            purpose: command.purpose,
            expiresAt: command.expiresAt,
            at: command.now,
          },
        },
      ];
    }
    case 'Settle': {
      const amount = command.pricing.amount;
      requireAmount(amount, true);
      if (recomputed(command.pricing) !== amount) throw new DomainError('invalid_pricing', `a charge of ${amount} does not follow from its units and unit prices`);
      const reservation = openOrNoOp(state, command.reservationId);
      if (!reservation) return [];
      return [
        {
          type: 'ReservationSettled',
          data: {
            reservationId: command.reservationId,
            amount,
            reservedAmount: reservation.amount,
            overrun: Math.max(0, amount - reservation.amount),
            usage: command.usage,
            context: chargeContextOf(reservation.purpose),
            pricing: command.pricing,
            at: command.now,
            ...command.served,
          },
        },
      ];
    }
    case 'Release': {
      const reservation = openOrNoOp(state, command.reservationId);
      if (!reservation) return [];
      return [
        {
          type: 'ReservationReleased',
          data: { reservationId: command.reservationId, amount: reservation.amount, reason: command.reason, context: chargeContextOf(reservation.purpose), at: command.now },
        },
      ];
    }
    case 'Refund': {
      requireAmount(command.amount, false);
      const earlier = entryOf(state.refunds, command.refundId);
      if (earlier) {
        if (earlier.reservationId === command.reservationId && earlier.amount === command.amount) return [];
        throw new DomainError('refund_reference_conflict', `refund ${command.refundId} was already made for ${earlier.amount} of reservation ${earlier.reservationId}`);
      }
      const remembered = closedOutcomeOf(state, command.reservationId);
      const charged = remembered ? (remembered.kind === 'settled' ? remembered.amount : null) : (command.settledCharge ?? null);
      if (charged === null || (remembered === undefined && shardedEntry(state.open, command.reservationId))) {
        throw new DomainError('refund_not_allowed', `reservation ${command.reservationId} has no settled charge to refund`);
      }
      const refundable = charged - (entryOf(state.refundedByReservation, command.reservationId) ?? 0);
      if (command.amount > refundable) throw new DomainError('refund_exceeds_charge', `at most ${refundable} can be refunded`);
      return [
        {
          type: 'ChargeRefunded',
          data: { refundId: command.refundId, reservationId: command.reservationId, amount: command.amount, reason: command.reason, context: command.context, at: command.now },
        },
      ];
    }
    case 'IssueApiKey':
      refuseWidening(state, command.by, command.settings);
      refuse(budgetedRefusal(state, command.by, 'a key with a budget cannot create keys: their spend would not count against its budget'));
      return [{ type: 'ApiKeyIssued', data: { keyId: command.keyId, keyHash: command.keyHash, keyPrefix: command.keyPrefix, ...command.settings, at: command.now } }];
    case 'ChangeApiKey': {
      const key = liveKey(state, command.keyId);
      refuseWidening(state, command.by, key.limits);
      refuseWidening(state, command.by, command.settings);
      return [{ type: 'ApiKeyChanged', data: { keyId: command.keyId, ...command.settings, at: command.now } }];
    }
    case 'RevokeApiKey': {
      const key = entryOf(state.keys, command.keyId);
      if (!key) throw new DomainError('key_not_found', `key ${command.keyId} not found`);
      if (key.revoked) return [];
      refuseWidening(state, command.by ?? null, key.limits);
      return [{ type: 'ApiKeyRevoked', data: { keyId: command.keyId, at: command.now } }];
    }
    case 'RegenerateApiKeySecret': {
      // Only a live key, and (from the account's own API) only one the acting key may reach: its new secret hands the key over.
      refuse(reachRefusal(state, command.by, command.keyId));
      return [{ type: 'ApiKeySecretRegenerated', data: { keyId: command.keyId, keyHash: command.keyHash, keyPrefix: command.keyPrefix, at: command.now } }];
    }
    case 'RotateWebhookSecret':
      return [{ type: 'WebhookSecretRotated', data: { secret: command.secret, at: command.now } }];
    case 'ChangeSettings':
      return [{ type: 'AccountSettingsChanged', data: { defaultVideoUrlMode: command.defaultVideoUrlMode, at: command.now } }];
    case 'ChangeTimeZone':
      if (!isTimeZone(command.timezone)) throw new DomainError('invalid_timezone', `${command.timezone} is not an IANA time zone`);
      return state.timezone === command.timezone ? [] : [{ type: 'AccountTimeZoneChanged', data: { timezone: command.timezone, at: command.now } }];
  }
}

function recomputed(pricing: Pricing): number | null {
  try {
    return recomputePricing(pricing);
  } catch {
    return null;
  }
}

function liveKey(state: AccountState, keyId: string): KeyState {
  const key = entryOf(state.keys, keyId);
  if (!key || key.revoked) throw new DomainError('key_not_found', `key ${keyId} not found`);
  return key;
}

/** A key managing keys acts only on keys no wider than itself, and makes none wider. */
function refuseWidening(state: AccountState, by: ActingKey, limits: KeyLimits): void {
  refuse(wideningRefusal(state, by, limits));
}

function wideningRefusal(state: AccountState, by: ActingKey, limits: KeyLimits): DomainError | null {
  if (by === null) return null;
  const widening = wideningOf(limitsOf(limits), liveKey(state, by.keyId).limits, by.gatewayRatePerMinute);
  return widening ? new DomainError('key_scope_exceeded', `a key cannot create or widen a key beyond itself: ${widening}`) : null;
}

/**
 * A key with a budget issues no keys, and reaches no key but itself: another key's spend would not
 * count against its budget, so N such keys would spend N budgets. The operator (or an unbudgeted
 * key) issues them.
 */
function budgetedRefusal(state: AccountState, by: ActingKey, message: string): DomainError | null {
  return by !== null && liveKey(state, by.keyId).limits.budget !== null ? new DomainError('key_scope_exceeded', message) : null;
}

/**
 * Why `by` may not reach the key `keyId` (null when it may): take over its secret by regenerating
 * it, or spend through it in the dashboard's playground. The operator reaches any live key; a key
 * reaches itself, and another key only when that one is no wider than itself and it has no budget.
 * The issuing rules (wideningOf, budgetedRefusal), so reaching a key gives no more than issuing one.
 */
export function reachRefusal(state: AccountState, by: ActingKey, keyId: string): DomainError | null {
  const key = entryOf(state.keys, keyId);
  if (!key || key.revoked) return new DomainError('key_not_found', `key ${keyId} not found`);
  if (by === null || by.keyId === keyId) return null;
  return (
    budgetedRefusal(state, by, "a key with a budget cannot use or regenerate another key: that key's spend would not count against its budget") ??
    wideningRefusal(state, by, key.limits)
  );
}

function refuse(refusal: DomainError | null): void {
  if (refusal) throw refusal;
}

/**
 * A key's spend in its budget period counts what was settled in the period and every open
 * reservation it made; decided on the same stream as the balance, so concurrent requests cannot
 * both pass.
 */
function refuseOverKeyBudget(state: AccountState, actor: string, amount: number, now: string): void {
  const key = entryOf(state.keys, actor);
  const budget = key?.limits.budget;
  if (!key || !budget) return;
  let spent = spentInPeriod(key.spend, budget.period, now, state.timezone);
  for (const reservation of shardedValues(state.open)) if (reservation.purpose.actor === actor) spent += reservation.amount;
  if (spent + amount > budget.amount) {
    throw new DomainError('key_budget_exceeded', `this request would exceed the key's budget of ${budget.amount} per ${budget.period}`, {
      budget: budget.amount,
      period: budget.period,
      spent,
      required: amount,
    });
  }
}

function limitsOf(settings: KeyLimits): KeyLimits {
  return { allowedModels: settings.allowedModels, budget: settings.budget, expiresAt: settings.expiresAt, rateLimitPerMinute: settings.rateLimitPerMinute, tokensPerMinute: settings.tokensPerMinute };
}

/** The open reservation, or null when it closed recently (a repeated close is a no-op). */
function openOrNoOp(state: AccountState, reservationId: string): OpenReservation | null {
  const reservation = shardedEntry(state.open, reservationId);
  if (reservation) return reservation;
  if (closedOutcomeOf(state, reservationId)) return null;
  throw new DomainError('reservation_not_found', `reservation ${reservationId} is not open`);
}

function withClosed(state: AccountState, reservationId: string, outcome: RememberedOutcome): Pick<AccountState, 'recentlyClosed' | 'previouslyClosed' | 'open'> {
  return { open: withoutShardedEntry(state.open, reservationId), ...withOutcome(state, reservationId, outcome) };
}

/** Records (or replaces) a closed outcome in the young generation, rolling generations when it is full. */
function withOutcome(state: AccountState, reservationId: string, outcome: RememberedOutcome): Pick<AccountState, 'recentlyClosed' | 'previouslyClosed'> {
  if (hasEntry(state.recentlyClosed, reservationId) || Object.keys(state.recentlyClosed).length < RECENT_GENERATION) {
    return { recentlyClosed: withEntry(state.recentlyClosed, reservationId, outcome), previouslyClosed: state.previouslyClosed };
  }
  return { recentlyClosed: { [reservationId]: outcome }, previouslyClosed: state.recentlyClosed };
}

function evolve(state: AccountState, stored: AccountEvent): AccountState {
  const event = upcastAccountEvent(stored);
  switch (event.type) {
    case 'AccountOpened':
      return withChanges(state, { exists: true, accountId: event.data.accountId, name: event.data.name });
    case 'CreditAdded':
      return withChanges(state, {
        credited: state.credited + event.data.amount,
        credits: withEntry(state.credits, event.data.reference, { entryId: event.data.entryId, amount: event.data.amount }),
      });
    case 'FundsReserved':
      return withChanges(state, {
        frozen: state.frozen + event.data.amount,
        open: withShardedEntry(state.open, event.data.reservationId, { amount: event.data.amount, purpose: event.data.purpose, expiresAt: event.data.expiresAt }),
      });
    case 'ReservationSettled':
      return withChanges(state, {
        keys: chargedToKey(state, event.data.context?.actor ?? shardedEntry(state.open, event.data.reservationId)?.purpose.actor, event.data.amount, event.data.at),
        ...withClosed(state, event.data.reservationId, { kind: 'settled', amount: event.data.amount, reservedAmount: event.data.reservedAmount }),
        frozen: state.frozen - event.data.reservedAmount,
        settled: state.settled + event.data.amount,
      });
    case 'ReservationReleased':
      return withChanges(state, {
        frozen: state.frozen - event.data.amount,
        ...withClosed(state, event.data.reservationId, { kind: 'released', amount: event.data.amount, reason: event.data.reason }),
      });
    case 'ChargeRefunded': {
      const d = event.data;
      return withChanges(state, {
        refunded: state.refunded + d.amount,
        refundedByReservation: withEntry(state.refundedByReservation, d.reservationId, (entryOf(state.refundedByReservation, d.reservationId) ?? 0) + d.amount),
        refunds: withEntry(state.refunds, d.refundId, { reservationId: d.reservationId, amount: d.amount }),
      });
    }
    case 'ApiKeyIssued':
      return withChanges(state, { keys: withEntry(state.keys, event.data.keyId, { revoked: false, limits: limitsOf(event.data), spend: NO_SPEND }) });
    case 'ApiKeyChanged': {
      const key = entryOf(state.keys, event.data.keyId);
      return key ? withChanges(state, { keys: withEntry(state.keys, event.data.keyId, withChanges(key, { limits: limitsOf(event.data) })) }) : state;
    }
    case 'ApiKeyRevoked': {
      const key = entryOf(state.keys, event.data.keyId);
      return key ? withChanges(state, { keys: withEntry(state.keys, event.data.keyId, withChanges(key, { revoked: true })) }) : state;
    }
    case 'ApiKeySecretRegenerated':
      // The key keeps its limits and its spend: only its secret (not part of this state) changed.
      return state;
    case 'WebhookSecretRotated':
      return withChanges(state, { webhookSecret: event.data.secret });
    case 'AccountSettingsChanged':
      return state;
    case 'AccountTimeZoneChanged':
      // The spend of the current day and month carries over to the new zone's day and month, so
      // changing zones never resets a key's budget.
      return withChanges(state, { timezone: event.data.timezone, keys: rezonedKeys(state.keys, event.data.at, state.timezone, event.data.timezone) });
  }
}

function rezonedKeys(keys: AccountState['keys'], at: string, from: string, to: string): AccountState['keys'] {
  // Without a prototype, as records.ts builds records: key ids added to `{}` would each make a hidden class.
  const moved = Object.create(null) as Record<string, AccountState['keys'][string]>;
  for (const [id, key] of Object.entries(keys)) moved[id] = withChanges(key, { spend: rezoned(key.spend, at, from, to) });
  return moved;
}

/** Keys' spend counters after a settlement by `actor` (a key of this account, or admin/system/unknown). */
function chargedToKey(state: AccountState, actor: string | undefined, amount: number, at: string): AccountState['keys'] {
  const key = actor === undefined ? undefined : entryOf(state.keys, actor);
  if (!key || amount === 0) return state.keys;
  return withEntry(state.keys, actor!, withChanges(key, { spend: withCharge(key.spend, at, amount, state.timezone) }));
}

export const accountDecider: Decider<AccountCommand, AccountEvent, AccountState> = {
  initialState,
  decide,
  evolve,
  // 7: `open` became a ShardedRecord.
  snapshotVersion: 7,
};
