/** Why money is frozen: the stream whose outcome settles or releases it. */
export interface ReservationPurpose {
  /** `task`: an asynchronous task stream; `request`: one synchronous HTTP request. */
  readonly kind: 'task' | 'request';
  /** The stream that owns the outcome (a task stream), or the request id. */
  readonly ref: string;
  /** Model or capability, for the ledger's reader. */
  readonly description: string;
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
        at: string;
      };
    }
  | { type: 'ReservationReleased'; data: { reservationId: string; amount: number; reason: string; at: string } }
  | { type: 'ChargeRefunded'; data: { refundId: string; reservationId: string; amount: number; reason: string; at: string } }
  | {
      type: 'ApiKeyIssued';
      data: { keyId: string; name: string | null; keyHash: string; keyPrefix: string; allowedModels: string[] | null; at: string };
    }
  | { type: 'ApiKeyRevoked'; data: { keyId: string; at: string } }
  | { type: 'WebhookSecretRotated'; data: { secret: string; at: string } }
  | { type: 'AccountSettingsChanged'; data: { defaultVideoUrlMode: VideoUrlMode; at: string } };

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
  'ApiKeyRevoked',
  'WebhookSecretRotated',
  'AccountSettingsChanged',
];

export function accountStream(accountId: string): string {
  return `account-${accountId}`;
}

export function accountIdOfStream(streamId: string): string {
  return streamId.slice('account-'.length);
}
