import type { PoolClient } from 'pg';
import type { RecordedEvent } from '../src/eventstore/port';
import type { Projection } from '../src/projections-runtime/consumer';
import { accountIdOfStream, type AccountEvent } from '../src/domain/account/events';

/**
 * The statement a finance reader audits: one entry per money event with its effect on
 * `available` and `frozen` and the balance after it, plus one row per reservation with its fate.
 */
export const ledgerProjection: Projection = {
  name: 'ledger',
  tables: ['ledger_entries', 'reservations'],
  ddl: `
    CREATE TABLE ledger_entries (
      account_id text NOT NULL,
      revision bigint NOT NULL,
      event_id uuid NOT NULL,
      entry_type text NOT NULL,
      amount bigint NOT NULL,
      available_delta bigint NOT NULL,
      frozen_delta bigint NOT NULL,
      available_after bigint NOT NULL,
      frozen_after bigint NOT NULL,
      reservation_id text,
      reference text,
      description text,
      details jsonb NOT NULL,
      at timestamptz NOT NULL,
      PRIMARY KEY (account_id, revision)
    );
    CREATE TABLE reservations (
      reservation_id text PRIMARY KEY,
      account_id text NOT NULL,
      amount bigint NOT NULL,
      status text NOT NULL,
      purpose_kind text NOT NULL,
      purpose_ref text NOT NULL,
      description text NOT NULL,
      reserved_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      closed_at timestamptz,
      settled_amount bigint,
      refunded_amount bigint NOT NULL DEFAULT 0,
      close_reason text
    );
    CREATE INDEX reservations_open ON reservations (expires_at) WHERE status = 'open';
    CREATE INDEX reservations_account ON reservations (account_id, reserved_at);`,
  eventTypes: new Set(['CreditAdded', 'FundsReserved', 'ReservationSettled', 'ReservationReleased', 'ChargeRefunded']),
  async apply(tx, raw) {
    const event = raw as RecordedEvent & AccountEvent;
    const accountId = accountIdOfStream(raw.streamId);
    switch (event.type) {
      case 'CreditAdded':
        return entry(tx, raw, accountId, {
          type: 'credit',
          amount: event.data.amount,
          available: event.data.amount,
          frozen: 0,
          reference: event.data.reference,
          description: event.data.note,
          at: event.data.at,
        });
      case 'FundsReserved': {
        const d = event.data;
        await tx.query(
          `INSERT INTO reservations (reservation_id, account_id, amount, status, purpose_kind, purpose_ref, description, reserved_at, expires_at)
           VALUES ($1, $2, $3, 'open', $4, $5, $6, $7, $8)`,
          [d.reservationId, accountId, d.amount, d.purpose.kind, d.purpose.ref, d.purpose.description, d.at, d.expiresAt],
        );
        return entry(tx, raw, accountId, {
          type: 'reservation',
          amount: d.amount,
          available: -d.amount,
          frozen: d.amount,
          reservationId: d.reservationId,
          description: d.purpose.description,
          at: d.at,
        });
      }
      case 'ReservationSettled': {
        const d = event.data;
        await tx.query(
          `UPDATE reservations SET status = 'settled', settled_amount = $2, closed_at = $3 WHERE reservation_id = $1`,
          [d.reservationId, d.amount, d.at],
        );
        return entry(tx, raw, accountId, {
          type: 'settlement',
          amount: d.amount,
          available: d.reservedAmount - d.amount,
          frozen: -d.reservedAmount,
          reservationId: d.reservationId,
          description: d.overrun > 0 ? `overrun of ${d.overrun}` : null,
          at: d.at,
        });
      }
      case 'ReservationReleased': {
        const d = event.data;
        await tx.query(
          `UPDATE reservations SET status = 'released', closed_at = $2, close_reason = $3 WHERE reservation_id = $1`,
          [d.reservationId, d.at, d.reason],
        );
        return entry(tx, raw, accountId, {
          type: 'release',
          amount: d.amount,
          available: d.amount,
          frozen: -d.amount,
          reservationId: d.reservationId,
          description: d.reason,
          at: d.at,
        });
      }
      case 'ChargeRefunded': {
        const d = event.data;
        await tx.query('UPDATE reservations SET refunded_amount = refunded_amount + $2 WHERE reservation_id = $1', [d.reservationId, d.amount]);
        return entry(tx, raw, accountId, {
          type: 'refund',
          amount: d.amount,
          available: d.amount,
          frozen: 0,
          reservationId: d.reservationId,
          reference: d.refundId,
          description: d.reason,
          at: d.at,
        });
      }
      default:
        return;
    }
  },
};

interface EntryFields {
  type: string;
  amount: number;
  available: number;
  frozen: number;
  reservationId?: string;
  reference?: string;
  description: string | null;
  at: string;
}

async function entry(tx: PoolClient, raw: RecordedEvent, accountId: string, f: EntryFields): Promise<void> {
  await tx.query(
    `INSERT INTO ledger_entries (account_id, revision, event_id, entry_type, amount, available_delta, frozen_delta,
       available_after, frozen_after, reservation_id, reference, description, details, at)
     SELECT $1, $2, $3, $4, $5, $6, $7,
       coalesce(prev.available_after, 0) + $6, coalesce(prev.frozen_after, 0) + $7, $8, $9, $10, $11, $12
     FROM (SELECT 1) one
     LEFT JOIN LATERAL (
       SELECT available_after, frozen_after FROM ledger_entries WHERE account_id = $1 ORDER BY revision DESC LIMIT 1
     ) prev ON true`,
    [accountId, raw.revision, raw.id, f.type, f.amount, f.available, f.frozen, f.reservationId ?? null, f.reference ?? null, f.description, JSON.stringify(raw.data), f.at],
  );
}
