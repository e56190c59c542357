import type { PoolClient } from 'pg';
import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection, type Recorded } from '../src/projections-runtime/define';
import { prepared } from '../src/db/prepared';
import { accountIdOfStream, chargeContextOf, upcastAccountEvent, type AccountEvent, type ChargeContext } from '../src/domain/account/events';
import type { Pricing } from '../src/billing/money';
import { bulkValue, insertRows, rowsFrom, type BulkColumn } from '../src/projections-runtime/bulk';

/**
 * The statement a finance reader audits: one entry per money event with its effect on
 * `available` and `frozen` and the balance after it, plus one row per reservation with its fate.
 * An entry names its event (`event_id`, unique in the log) instead of copying the event's data:
 * storing a jsonb copy was about a third of what PostgreSQL spent on a line, and the audit
 * compared it again.
 */
export const ledgerProjection: Projection = defineProjection<AccountEvent>()({
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
      actor text,
      model text,
      endpoint text,
      ref_kind text,
      ref text,
      pricing jsonb,
      at timestamptz NOT NULL,
      PRIMARY KEY (account_id, revision)
    );
    CREATE INDEX ledger_entries_at ON ledger_entries (account_id, at);
    CREATE TABLE reservations (
      reservation_id text PRIMARY KEY,
      account_id text NOT NULL,
      amount bigint NOT NULL,
      status text NOT NULL,
      purpose_kind text NOT NULL,
      purpose_ref text NOT NULL,
      description text NOT NULL,
      actor text NOT NULL,
      model text NOT NULL,
      endpoint text NOT NULL,
      reserved_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      closed_at timestamptz,
      settled_amount bigint,
      refunded_amount bigint NOT NULL DEFAULT 0,
      close_reason text
    );
    CREATE INDEX reservations_open ON reservations (expires_at) WHERE status = 'open';
    CREATE INDEX reservations_account ON reservations (account_id, reserved_at);`,
  handles: ['CreditAdded', 'FundsReserved', 'ReservationSettled', 'ReservationReleased', 'ChargeRefunded'],
  async applyBatch(tx, events) {
    const changes = new BatchChanges();
    for (const event of events) changes.add(upcastAccountEvent(event));
    await changes.write(tx);
  },
});

const LEDGER_ENTRY_COLUMNS: readonly BulkColumn[] = [
  ['account_id', 'text'], ['revision', 'bigint'], ['event_id', 'uuid'], ['entry_type', 'text'], ['amount', 'bigint'],
  ['available_delta', 'bigint'], ['frozen_delta', 'bigint'],
  ['reservation_id', 'text'], ['reference', 'text'], ['description', 'text'], ['actor', 'text'],
  ['model', 'text'], ['endpoint', 'text'], ['ref_kind', 'text'], ['ref', 'text'], ['pricing', 'jsonb'], ['at', 'timestamptz'],
];

const RESERVATION_COLUMNS: readonly BulkColumn[] = [
  ['reservation_id', 'text'], ['account_id', 'text'], ['amount', 'bigint'], ['status', 'text'], ['purpose_kind', 'text'],
  ['purpose_ref', 'text'], ['description', 'text'], ['actor', 'text'], ['model', 'text'], ['endpoint', 'text'],
  ['reserved_at', 'timestamptz'], ['expires_at', 'timestamptz'], ['closed_at', 'timestamptz'], ['settled_amount', 'bigint'],
  ['refunded_amount', 'bigint'], ['close_reason', 'text'],
];

/** One ledger line: what an event did to `available` and `frozen` (the running balances come later). */
interface Entry {
  accountId: string;
  revision: number;
  eventId: string;
  type: string;
  amount: number;
  available: number;
  frozen: number;
  reservationId: string | null;
  reference: string | null;
  description: string | null;
  context: ChargeContext | null;
  pricing: Pricing | null;
  at: string;
}

interface OpenedReservation {
  reservationId: string;
  accountId: string;
  amount: number;
  status: string;
  purposeKind: string;
  purposeRef: string;
  description: string;
  actor: string;
  model: string;
  endpoint: string;
  reservedAt: string;
  expiresAt: string;
  closedAt: string | null;
  settledAmount: number | null;
  refundedAmount: number;
  closeReason: string | null;
}

/** What an event's ledger line says beyond the event itself. */
type LineFields = Pick<Entry, 'type' | 'amount' | 'available' | 'frozen' | 'description' | 'at'> & {
  reservationId?: string;
  reference?: string;
  context?: ChargeContext | null;
  pricing?: Pricing | null;
};

interface Closing {
  status: 'settled' | 'released';
  settledAmount: number | null;
  closedAt: string;
  closeReason: string | null;
}

/**
 * What a batch of money events does to the two tables, gathered in log order and then written
 * set-wise. A reservation opened in the batch is inserted in its final state; one opened earlier
 * gets at most one closing update and one summed refund update.
 */
class BatchChanges {
  private readonly entries: Entry[] = [];
  private readonly opened = new Map<string, OpenedReservation>();
  private readonly closings = new Map<string, Closing>();
  private readonly refunds = new Map<string, number>();

  add(event: Recorded<AccountEvent>): void {
    const accountId = accountIdOfStream(event.streamId);
    switch (event.type) {
      case 'CreditAdded': {
        const d = event.data;
        return this.line(event, accountId, { type: 'credit', amount: d.amount, available: d.amount, frozen: 0, reference: d.reference, description: d.note, at: d.at });
      }
      case 'FundsReserved': {
        const d = event.data;
        this.opened.set(d.reservationId, {
          reservationId: d.reservationId,
          accountId,
          amount: d.amount,
          status: 'open',
          purposeKind: d.purpose.kind,
          purposeRef: d.purpose.ref,
          description: d.purpose.description,
          actor: d.purpose.actor,
          model: d.purpose.model,
          endpoint: d.purpose.endpoint,
          reservedAt: d.at,
          expiresAt: d.expiresAt,
          closedAt: null,
          settledAmount: null,
          refundedAmount: 0,
          closeReason: null,
        });
        return this.line(event, accountId, {
          type: 'reservation',
          amount: d.amount,
          available: -d.amount,
          frozen: d.amount,
          reservationId: d.reservationId,
          description: d.purpose.description,
          context: chargeContextOf(d.purpose),
          at: d.at,
        });
      }
      case 'ReservationSettled': {
        const d = event.data;
        this.close(d.reservationId, { status: 'settled', settledAmount: d.amount, closedAt: d.at, closeReason: null });
        return this.line(event, accountId, {
          type: 'settlement',
          amount: d.amount,
          available: d.reservedAmount - d.amount,
          frozen: -d.reservedAmount,
          reservationId: d.reservationId,
          description: d.overrun > 0 ? `overrun of ${d.overrun}` : null,
          context: d.context,
          pricing: d.pricing,
          at: d.at,
        });
      }
      case 'ReservationReleased': {
        const d = event.data;
        this.close(d.reservationId, { status: 'released', settledAmount: null, closedAt: d.at, closeReason: d.reason });
        return this.line(event, accountId, { type: 'release', amount: d.amount, available: d.amount, frozen: -d.amount, reservationId: d.reservationId, description: d.reason, context: d.context, at: d.at });
      }
      case 'ChargeRefunded': {
        const d = event.data;
        const opened = this.opened.get(d.reservationId);
        if (opened) opened.refundedAmount += d.amount;
        else this.refunds.set(d.reservationId, (this.refunds.get(d.reservationId) ?? 0) + d.amount);
        return this.line(event, accountId, { type: 'refund', amount: d.amount, available: d.amount, frozen: 0, reservationId: d.reservationId, reference: d.refundId, description: d.reason, context: d.context, at: d.at });
      }
      default:
        return;
    }
  }

  /** The event's ledger line. A method, not a closure made per event: tsx names every closure it makes (esbuild's keepNames), which turns each into a dictionary-mode object. */
  private line(event: Recorded<AccountEvent>, accountId: string, f: LineFields): void {
    this.entries.push({
      accountId,
      revision: event.revision,
      eventId: event.id,
      reservationId: f.reservationId ?? null,
      reference: f.reference ?? null,
      context: f.context ?? null,
      pricing: f.pricing ?? null,
      type: f.type,
      amount: f.amount,
      available: f.available,
      frozen: f.frozen,
      description: f.description,
      at: f.at,
    });
  }

  private close(reservationId: string, closing: Closing): void {
    const opened = this.opened.get(reservationId);
    if (!opened) {
      this.closings.set(reservationId, closing);
      return;
    }
    opened.status = closing.status;
    opened.closedAt = closing.closedAt;
    if (closing.closeReason !== null) opened.closeReason = closing.closeReason;
    if (closing.settledAmount !== null) opened.settledAmount = closing.settledAmount;
  }

  async write(tx: PoolClient): Promise<void> {
    await this.writeEntries(tx);
    await this.writeReservations(tx);
    await this.contextOfOldEntries(tx);
  }

  /** A close or refund recorded before events carried their context takes it from its reservation. */
  private async contextOfOldEntries(tx: PoolClient): Promise<void> {
    const old = this.entries.filter((e) => e.reservationId !== null && e.context === null);
    if (old.length === 0) return;
    await tx.query(
      prepared(
        `UPDATE ledger_entries e SET actor = r.actor, model = r.model, endpoint = r.endpoint, ref_kind = r.purpose_kind, ref = r.purpose_ref
         FROM unnest($1::text[], $2::bigint[]) AS o(account_id, revision), reservations r
         WHERE e.account_id = o.account_id AND e.revision = o.revision AND r.reservation_id = e.reservation_id`,
        [old.map((e) => e.accountId), old.map((e) => e.revision)],
      ),
    );
  }

  /**
   * Each line's balances after it: the account's last stored line plus the lines of this batch up
   * to it, a running sum the INSERT computes itself (one round trip, where reading the last lines
   * first was two).
   */
  private async writeEntries(tx: PoolClient): Promise<void> {
    if (this.entries.length === 0) return;
    const rows = this.entries.map((e) => ({
      account_id: e.accountId,
      revision: e.revision,
      event_id: e.eventId,
      entry_type: e.type,
      amount: e.amount,
      available_delta: e.available,
      frozen_delta: e.frozen,
      reservation_id: e.reservationId,
      reference: e.reference,
      description: e.description,
      actor: e.context?.actor ?? null,
      model: e.context?.model ?? null,
      endpoint: e.context?.endpoint ?? null,
      ref_kind: e.context?.kind ?? null,
      ref: e.context?.ref ?? null,
      pricing: e.pricing,
      at: e.at,
    }));
    const { from, params } = rowsFrom(LEDGER_ENTRY_COLUMNS, rows);
    await tx.query(
      prepared(
        `WITH r AS (SELECT * FROM ${from}),
           last AS (
             SELECT a.account_id, l.available_after, l.frozen_after FROM (SELECT DISTINCT account_id FROM r) a
             CROSS JOIN LATERAL (SELECT available_after, frozen_after FROM ledger_entries e WHERE e.account_id = a.account_id ORDER BY e.revision DESC LIMIT 1) l
           )
         INSERT INTO ledger_entries (${LEDGER_ENTRY_COLUMNS.map(([name]) => name).join(', ')}, available_after, frozen_after)
         SELECT ${LEDGER_ENTRY_COLUMNS.map(bulkValue).join(', ')},
           coalesce(last.available_after, 0) + sum(r.available_delta) OVER running,
           coalesce(last.frozen_after, 0) + sum(r.frozen_delta) OVER running
         FROM r LEFT JOIN last ON last.account_id = r.account_id
         WINDOW running AS (PARTITION BY r.account_id ORDER BY r.revision ROWS UNBOUNDED PRECEDING)`,
        params,
      ),
    );
  }

  private async writeReservations(tx: PoolClient): Promise<void> {
    const opened = [...this.opened.values()];
    await insertRows(
      tx,
      'reservations',
      RESERVATION_COLUMNS,
      opened.map((r) => ({
        reservation_id: r.reservationId,
        account_id: r.accountId,
        amount: r.amount,
        status: r.status,
        purpose_kind: r.purposeKind,
        purpose_ref: r.purposeRef,
        description: r.description,
        actor: r.actor,
        model: r.model,
        endpoint: r.endpoint,
        reserved_at: r.reservedAt,
        expires_at: r.expiresAt,
        closed_at: r.closedAt,
        settled_amount: r.settledAmount,
        refunded_amount: r.refundedAmount,
        close_reason: r.closeReason,
      })),
    );
    if (this.closings.size > 0) {
      const closings = [...this.closings];
      await tx.query(
        prepared(
          `UPDATE reservations r SET status = c.status, settled_amount = coalesce(c.settled_amount, r.settled_amount),
             closed_at = c.closed_at, close_reason = coalesce(c.close_reason, r.close_reason)
           FROM unnest($1::text[], $2::text[], $3::bigint[], $4::timestamptz[], $5::text[]) AS c(reservation_id, status, settled_amount, closed_at, close_reason)
           WHERE r.reservation_id = c.reservation_id`,
          [
            closings.map(([id]) => id),
            closings.map(([, c]) => c.status),
            closings.map(([, c]) => c.settledAmount),
            closings.map(([, c]) => c.closedAt),
            closings.map(([, c]) => c.closeReason),
          ],
        ),
      );
    }
    if (this.refunds.size > 0) {
      const refunds = [...this.refunds];
      await tx.query(
        prepared(
          `UPDATE reservations r SET refunded_amount = r.refunded_amount + c.amount
           FROM unnest($1::text[], $2::bigint[]) AS c(reservation_id, amount) WHERE r.reservation_id = c.reservation_id`,
          [refunds.map(([id]) => id), refunds.map(([, amount]) => amount)],
        ),
      );
    }
  }
}
