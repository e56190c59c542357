import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import { prepared } from '../src/db/prepared';
import { accountIdOfStream, type AccountEvent } from '../src/domain/account/events';

/**
 * One row per account: the running totals behind `available` and `frozen`. `available` is stored
 * (not computed in the query) so that the audit can compare it with a replay of the log.
 */
export const balancesProjection: Projection = defineProjection<AccountEvent>()({
  name: 'balances',
  tables: ['balances'],
  ddl: `
    CREATE TABLE balances (
      account_id text PRIMARY KEY,
      credited bigint NOT NULL DEFAULT 0,
      settled bigint NOT NULL DEFAULT 0,
      refunded bigint NOT NULL DEFAULT 0,
      frozen bigint NOT NULL DEFAULT 0,
      available bigint NOT NULL DEFAULT 0,
      revision bigint NOT NULL
    );`,
  handles: ['AccountOpened', 'CreditAdded', 'FundsReserved', 'ReservationSettled', 'ReservationReleased', 'ChargeRefunded'],
  async applyBatch(tx, events) {
    // The totals are sums, so a batch folds into one change per account: a new row for an account
    // opened in the batch, an increment for one opened before it.
    const changes = new Map<string, Totals & { opened: boolean }>();
    for (const event of events) {
      const accountId = accountIdOfStream(event.streamId);
      if (event.type === 'AccountOpened') {
        changes.set(accountId, { opened: true, credited: 0, settled: 0, refunded: 0, frozen: 0, revision: event.revision });
        continue;
      }
      const totals = changes.get(accountId) ?? { opened: false, credited: 0, settled: 0, refunded: 0, frozen: 0, revision: event.revision };
      changes.set(accountId, totals);
      totals.revision = event.revision;
      switch (event.type) {
        case 'CreditAdded':
          totals.credited += event.data.amount;
          break;
        case 'FundsReserved':
          totals.frozen += event.data.amount;
          break;
        case 'ReservationSettled':
          totals.frozen -= event.data.reservedAmount;
          totals.settled += event.data.amount;
          break;
        case 'ReservationReleased':
          totals.frozen -= event.data.amount;
          break;
        case 'ChargeRefunded':
          totals.refunded += event.data.amount;
          break;
      }
    }
    const opened = [...changes].filter(([, t]) => t.opened);
    const updated = [...changes].filter(([, t]) => !t.opened);
    const columns = (rows: [string, Totals][]) => [
      rows.map(([id]) => id),
      rows.map(([, t]) => t.credited),
      rows.map(([, t]) => t.settled),
      rows.map(([, t]) => t.refunded),
      rows.map(([, t]) => t.frozen),
      rows.map(([, t]) => t.revision),
    ];
    const deltas = 'unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[]) AS d(account_id, credited, settled, refunded, frozen, revision)';
    if (opened.length > 0) {
      await tx.query(
        prepared(
          `INSERT INTO balances (account_id, credited, settled, refunded, frozen, available, revision)
           SELECT account_id, credited, settled, refunded, frozen, credited - settled + refunded - frozen, revision FROM ${deltas}`,
          columns(opened),
        ),
      );
    }
    if (updated.length > 0) {
      await tx.query(
        prepared(
          `UPDATE balances b SET
             credited = b.credited + d.credited, settled = b.settled + d.settled, refunded = b.refunded + d.refunded, frozen = b.frozen + d.frozen,
             available = b.available + d.credited - d.settled + d.refunded - d.frozen, revision = d.revision
           FROM ${deltas} WHERE b.account_id = d.account_id`,
          columns(updated),
        ),
      );
    }
  },
});

interface Totals {
  credited: number;
  settled: number;
  refunded: number;
  frozen: number;
  revision: number;
}
