import type { PoolClient } from 'pg';
import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection, type Recorded } from '../src/projections-runtime/define';
import { prepared } from '../src/db/prepared';
import { accountIdOfStream, upcastAccountEvent, type AccountEvent } from '../src/domain/account/events';
import { unitsOf } from '../src/billing/money';
import { bulkValue, insertRows, rowsFrom, type BulkColumn } from '../src/projections-runtime/bulk';

/**
 * The operator's request log: one line per reserved call (a synchronous request or a task), with
 * its fate: open, settled (what was charged, its units and the channel that served its main call)
 * or released (and why), and what was refunded of it since. A refused request reserves nothing and
 * has no line. Key and account names are joined when read (src/read/request-log.ts), so a renamed
 * key shows its new name on old lines; the rows hold only what the account's events say.
 *
 * Beside it, `actor_spend`: what each actor (an API key id, or `admin`, `system`, `unknown`) of an
 * account was charged over its life, less what was refunded of those charges: the operator's list
 * of every key (src/read/all-keys.ts) shows a key's. It lives here, not in `api_keys`, because a
 * change to `api_keys`' DDL drops and refolds the table that authenticates every request
 * (projections-runtime/tables.ts), refusing keys until it has refolded the log.
 */
export const requestLogProjection: Projection = defineProjection<AccountEvent>()({
  name: 'request_log',
  tables: ['request_log', 'actor_spend'],
  ddl: `
    CREATE TABLE request_log (
      reservation_id text PRIMARY KEY,
      account_id text NOT NULL,
      actor text NOT NULL,
      model text NOT NULL,
      endpoint text NOT NULL,
      ref_kind text NOT NULL,
      ref text NOT NULL,
      reserved bigint NOT NULL,
      outcome text NOT NULL,
      amount bigint,
      refunded bigint NOT NULL,
      channel text,
      units jsonb,
      reason text,
      reserved_at timestamptz NOT NULL,
      closed_at timestamptz
    );
    CREATE INDEX request_log_at ON request_log (reserved_at, reservation_id);
    CREATE INDEX request_log_account_at ON request_log (account_id, reserved_at, reservation_id);
    -- What a task's charges are, and what of them was refunded (the task list's billing).
    CREATE INDEX request_log_account_ref ON request_log (account_id, ref);
    -- Keyed by the pair: the actors 'admin' and 'system' act on every account.
    CREATE TABLE actor_spend (
      account_id text NOT NULL,
      actor text NOT NULL,
      spent bigint NOT NULL,
      PRIMARY KEY (account_id, actor)
    );`,
  handles: ['FundsReserved', 'ReservationSettled', 'ReservationReleased', 'ChargeRefunded'],
  async applyBatch(tx, events) {
    const changes = new LogChanges();
    for (const event of events) changes.add(upcastAccountEvent(event));
    await changes.write(tx);
  },
});

/** How a reservation ended: settled (with what it cost and who served it) or released (and why). */
interface Closing {
  outcome: 'settled' | 'released';
  amount: number | null;
  channel: string | null;
  units: Record<string, number> | null;
  reason: string | null;
  closedAt: string;
}

interface Line {
  reservationId: string;
  accountId: string;
  actor: string;
  model: string;
  endpoint: string;
  refKind: string;
  ref: string;
  reserved: number;
  outcome: 'open' | Closing['outcome'];
  amount: number | null;
  refunded: number;
  channel: string | null;
  units: Record<string, number> | null;
  reason: string | null;
  reservedAt: string;
  closedAt: string | null;
}

const LINE_COLUMNS: readonly BulkColumn[] = [
  ['reservation_id', 'text'], ['account_id', 'text'], ['actor', 'text'], ['model', 'text'], ['endpoint', 'text'], ['ref_kind', 'text'], ['ref', 'text'],
  ['reserved', 'bigint'], ['outcome', 'text'], ['amount', 'bigint'], ['refunded', 'bigint'], ['channel', 'text'], ['units', 'jsonb'], ['reason', 'text'],
  ['reserved_at', 'timestamptz'], ['closed_at', 'timestamptz'],
];

const CLOSING_COLUMNS: readonly BulkColumn[] = [
  ['reservation_id', 'text'], ['outcome', 'text'], ['amount', 'bigint'], ['channel', 'text'], ['units', 'jsonb'], ['reason', 'text'], ['closed_at', 'timestamptz'],
];

/**
 * A batch's changes, gathered in log order and written set-wise: a reservation opened in the batch
 * is inserted in its final state; one opened earlier gets at most one closing and one summed refund.
 */
class LogChanges {
  private readonly opened = new Map<string, Line>();
  private readonly closings = new Map<string, Closing>();
  private readonly refunds = new Map<string, number>();
  /** What the batch charged (settled, less refunded) per reservation, to add to its actor's spend. */
  private readonly charged = new Map<string, number>();

  add(event: Recorded<AccountEvent>): void {
    switch (event.type) {
      case 'FundsReserved': {
        const d = event.data;
        const p = d.purpose;
        this.opened.set(d.reservationId, {
          reservationId: d.reservationId,
          accountId: accountIdOfStream(event.streamId),
          actor: p.actor,
          model: p.model,
          endpoint: p.endpoint,
          refKind: p.kind,
          ref: p.ref,
          reserved: d.amount,
          outcome: 'open',
          amount: null,
          refunded: 0,
          channel: null,
          units: null,
          reason: null,
          reservedAt: d.at,
          closedAt: null,
        });
        return;
      }
      case 'ReservationSettled': {
        const d = event.data;
        this.charge(d.reservationId, d.amount);
        return this.close(d.reservationId, { outcome: 'settled', amount: d.amount, channel: d.channel ?? null, units: unitsOf(d.pricing), reason: null, closedAt: d.at });
      }
      case 'ReservationReleased': {
        const d = event.data;
        return this.close(d.reservationId, { outcome: 'released', amount: null, channel: null, units: null, reason: d.reason, closedAt: d.at });
      }
      case 'ChargeRefunded': {
        const d = event.data;
        this.charge(d.reservationId, -d.amount);
        const opened = this.opened.get(d.reservationId);
        if (opened) opened.refunded += d.amount;
        else this.refunds.set(d.reservationId, (this.refunds.get(d.reservationId) ?? 0) + d.amount);
        return;
      }
      default:
        return;
    }
  }

  private charge(reservationId: string, amount: number): void {
    this.charged.set(reservationId, (this.charged.get(reservationId) ?? 0) + amount);
  }

  private close(reservationId: string, closing: Closing): void {
    const opened = this.opened.get(reservationId);
    if (!opened) {
      this.closings.set(reservationId, closing);
      return;
    }
    opened.outcome = closing.outcome;
    opened.amount = closing.amount;
    opened.channel = closing.channel;
    opened.units = closing.units;
    opened.reason = closing.reason;
    opened.closedAt = closing.closedAt;
  }

  async write(tx: PoolClient): Promise<void> {
    await insertRows(
      tx,
      'request_log',
      LINE_COLUMNS,
      [...this.opened.values()].map((l) => ({
        reservation_id: l.reservationId,
        account_id: l.accountId,
        actor: l.actor,
        model: l.model,
        endpoint: l.endpoint,
        ref_kind: l.refKind,
        ref: l.ref,
        reserved: l.reserved,
        outcome: l.outcome,
        amount: l.amount,
        refunded: l.refunded,
        channel: l.channel,
        units: l.units,
        reason: l.reason,
        reserved_at: l.reservedAt,
        closed_at: l.closedAt,
      })),
    );
    if (this.closings.size > 0) {
      const { from, params } = rowsFrom(
        CLOSING_COLUMNS,
        [...this.closings].map(([reservationId, c]) => ({
          reservation_id: reservationId,
          outcome: c.outcome,
          amount: c.amount,
          channel: c.channel,
          units: c.units,
          reason: c.reason,
          closed_at: c.closedAt,
        })),
      );
      const set = CLOSING_COLUMNS.slice(1).map((column) => `${column[0]} = ${bulkValue(column)}`);
      await tx.query(prepared(`UPDATE request_log l SET ${set.join(', ')} FROM ${from} WHERE l.reservation_id = r.reservation_id`, params));
    }
    if (this.refunds.size > 0) {
      const refunds = [...this.refunds];
      await tx.query(
        prepared(
          `UPDATE request_log l SET refunded = l.refunded + c.amount
           FROM unnest($1::text[], $2::bigint[]) AS c(reservation_id, amount) WHERE l.reservation_id = c.reservation_id`,
          [refunds.map(([id]) => id), refunds.map(([, amount]) => amount)],
        ),
      );
    }
    await this.writeSpend(tx);
  }

  /**
   * Adds the batch's charges to their actors' spend, the actor being the one of the charge's line
   * (written above). A charge netting to zero still writes its actor's row, so the rows do not
   * depend on where the log was cut into batches.
   */
  private async writeSpend(tx: PoolClient): Promise<void> {
    if (this.charged.size === 0) return;
    const charged = [...this.charged];
    await tx.query(
      prepared(
        `INSERT INTO actor_spend (account_id, actor, spent)
         SELECT l.account_id, l.actor, sum(c.amount)
         FROM unnest($1::text[], $2::bigint[]) AS c(reservation_id, amount) JOIN request_log l ON l.reservation_id = c.reservation_id
         GROUP BY l.account_id, l.actor
         ON CONFLICT (account_id, actor) DO UPDATE SET spent = actor_spend.spent + EXCLUDED.spent`,
        [charged.map(([id]) => id), charged.map(([, amount]) => amount)],
      ),
    );
  }
}
