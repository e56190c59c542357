import type { Pricing } from '../../billing/money';
import { withChanges } from '../with-changes';

/** Why money is frozen: the stream whose outcome settles or releases it. */
export interface ReservationPurpose {
  /** `task`: an asynchronous task stream; `request`: one synchronous HTTP request. */
  readonly kind: 'task' | 'request';
  /** The stream that owns the outcome (a task stream), or the request id. */
  readonly ref: string;
  /** Model or capability, for the ledger's reader. */
  readonly description: string;
  /** Who asked: the API key id, `admin` or `system`; `unknown` on reservations recorded before this was kept. */
  readonly actor: string;
  /** The catalog model the money is for (the description, on reservations recorded before this was kept). */
  readonly model: string;
  /** The route that asked, e.g. `POST /v1/chat/completions`; `unknown` on reservations recorded before this was kept. */
  readonly endpoint: string;
}

/**
 * The upstream channels that served a charge (docs/auditing.md, "The channel that served"): the
 * operator's own names, never shown to the account's owner. Absent on charges that no channel
 * served (a screening answered from the cache alone) and on settlements recorded before they were kept.
 */
export interface ChargeChannels {
  /** The channel that served the charge's main call (the request's one call, the task's upstream work, a screening's writer). */
  readonly channel?: string;
  /** Every channel that served a call the charge covers, sorted; only when they are more than one. */
  readonly channels?: readonly string[];
}

/**
 * Why money moved, on every event that closes or refunds a reservation: copied from the
 * reservation, so each settlement, release and refund can be read alone. `null` on events recorded
 * before this was kept (their reservation's purpose says the same).
 */
export interface ChargeContext {
  readonly actor: string;
  readonly model: string;
  readonly endpoint: string;
  /** `request` (its id in `ref`) or `task` (its stream in `ref`). */
  readonly kind: 'task' | 'request';
  readonly ref: string;
}

export function chargeContextOf(purpose: ReservationPurpose): ChargeContext {
  return { actor: purpose.actor, model: purpose.model, endpoint: purpose.endpoint, kind: purpose.kind, ref: purpose.ref };
}

export type AccountEvent =
  | { type: 'AccountOpened'; data: { accountId: string; name: string; openedAt: string } }
  | { type: 'CreditAdded'; data: { entryId: string; amount: number; reference: string; note: string | null; at: string } }
  | {
      type: 'FundsReserved';
      data: { reservationId: string; amount: number; purpose: ReservationPurpose; expiresAt: string; at: string };
    }
  | {
      type: 'ReservationSettled';
      data: {
        reservationId: string;
        /** What the account is charged: the actual usage, rounded once. */
        amount: number;
        reservedAmount: number;
        /** amount - reservedAmount when usage exceeded the reservation, else 0. */
        overrun: number;
        usage: Record<string, unknown>;
        context: ChargeContext | null;
        /** The units and unit prices the amount was computed from (see billing/money); null on settlements recorded before this was kept. */
        pricing: Pricing | null;
        at: string;
      } & ChargeChannels;
    }
  | { type: 'ReservationReleased'; data: { reservationId: string; amount: number; reason: string; context: ChargeContext | null; at: string } }
  | { type: 'ChargeRefunded'; data: { refundId: string; reservationId: string; amount: number; reason: string; context: ChargeContext | null; at: string } }
  | { type: 'ApiKeyIssued'; data: { keyId: string; keyHash: string; keyPrefix: string; at: string } & KeySettings }
  | { type: 'ApiKeyChanged'; data: { keyId: string; at: string } & KeySettings }
  | { type: 'ApiKeyRevoked'; data: { keyId: string; at: string } }
  /**
   * A key's secret replaced in place: the same key id, limits and spend; only `keyHash` (never the
   * secret) and `keyPrefix` change, and the previous secret stops at once (see accounts/key-cache).
   */
  | { type: 'ApiKeySecretRegenerated'; data: { keyId: string; keyHash: string; keyPrefix: string; at: string } }
  | { type: 'WebhookSecretRotated'; data: { secret: string; at: string } }
  | { type: 'AccountSettingsChanged'; data: { defaultVideoUrlMode: VideoUrlMode; at: string } }
  /** The zone statement months and usage days are counted in (IANA name); see accounts/calendar. */
  | { type: 'AccountTimeZoneChanged'; data: { timezone: string; at: string } };

/** A key's spending cap in minor units: over its whole life (`total`) or per calendar day or month. */
export interface KeyBudget {
  readonly amount: number;
  readonly period: 'total' | 'day' | 'month';
}

/** What a key may do; null fields mean "no limit of its own" (the gateway's rate, every model). */
export interface KeySettings {
  readonly name: string | null;
  readonly allowedModels: string[] | null;
  readonly budget: KeyBudget | null;
  readonly expiresAt: string | null;
  readonly rateLimitPerMinute: number | null;
  /** Tokens a minute the key's chat-like requests may use across the fleet (estimated at admission, corrected by usage); null: no such limit. */
  readonly tokensPerMinute: number | null;
}

/** How video results are delivered when a request does not say (see the README). */
export type VideoUrlMode = 'auto' | 'upstream' | 'tos';

export type AccountEventType = AccountEvent['type'];
export const ACCOUNT_EVENT_TYPES: readonly AccountEventType[] = [
  'AccountOpened',
  'CreditAdded',
  'FundsReserved',
  'ReservationSettled',
  'ReservationReleased',
  'ChargeRefunded',
  'ApiKeyIssued',
  'ApiKeyChanged',
  'ApiKeyRevoked',
  'ApiKeySecretRegenerated',
  'WebhookSecretRotated',
  'AccountSettingsChanged',
  'AccountTimeZoneChanged',
];

export function accountStream(accountId: string): string {
  return `account-${accountId}`;
}

export function accountIdOfStream(streamId: string): string {
  return streamId.slice('account-'.length);
}

/** The event with its data upcast (the data's type is the upcast's business, not the event's). */
function withData<E extends { data: unknown }>(event: E, data: unknown): E {
  return withChanges(event, { data } as Pick<E, 'data'>);
}

/**
 * Events as the log holds them may predate fields added since: this gives every account event the
 * current shape, without rewriting the log. Every reader of account events (the decider, the
 * projections) goes through it.
 */
export function upcastAccountEvent<E extends { type: string; data: unknown }>(event: E): E {
  switch (event.type) {
    case 'FundsReserved': {
      const data = event.data as { purpose: Partial<ReservationPurpose> & Pick<ReservationPurpose, 'kind' | 'ref' | 'description'> };
      const purpose = data.purpose;
      if (purpose.actor !== undefined && purpose.model !== undefined && purpose.endpoint !== undefined) return event;
      return withData(
        event,
        withChanges(data, { purpose: withChanges(purpose, { actor: purpose.actor ?? 'unknown', model: purpose.model ?? purpose.description, endpoint: purpose.endpoint ?? 'unknown' }) }),
      );
    }
    case 'ReservationSettled': {
      const data = event.data as { context?: ChargeContext | null; pricing?: Pricing | null };
      if (data.context !== undefined && data.pricing !== undefined) return event;
      return withData(event, withChanges(data, { context: data.context ?? null, pricing: data.pricing ?? null }));
    }
    case 'ReservationReleased':
    case 'ChargeRefunded': {
      const data = event.data as { context?: ChargeContext | null };
      return data.context === undefined ? withData(event, withChanges(data, { context: null })) : event;
    }
    case 'ApiKeyIssued': {
      // Keys issued before budgets, expiry, per-key rates and token limits had none of them.
      const data = event.data as Partial<KeySettings>;
      if (data.budget !== undefined && data.expiresAt !== undefined && data.rateLimitPerMinute !== undefined && data.tokensPerMinute !== undefined) return event;
      return withData(
        event,
        withChanges(data, { budget: data.budget ?? null, expiresAt: data.expiresAt ?? null, rateLimitPerMinute: data.rateLimitPerMinute ?? null, tokensPerMinute: data.tokensPerMinute ?? null }),
      );
    }
    case 'ApiKeyChanged': {
      // Changes recorded before token limits had none.
      const data = event.data as Partial<KeySettings>;
      return data.tokensPerMinute === undefined ? withData(event, withChanges(data, { tokensPerMinute: null })) : event;
    }
    default:
      return event;
  }
}
