import type { RecordedEvent } from '../src/eventstore/port';
import type { Projection } from '../src/projections-runtime/consumer';
import { accountIdOfStream, type AccountEvent } from '../src/domain/account/events';

/**
 * One row per account: the running totals behind `available` and `frozen`. `available` is stored
 * (not computed in the query) so that the audit can compare it with a replay of the log.
 */
export const balancesProjection: Projection = {
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
  eventTypes: new Set(['AccountOpened', 'CreditAdded', 'FundsReserved', 'ReservationSettled', 'ReservationReleased', 'ChargeRefunded']),
  async apply(tx, raw) {
    const event = raw as RecordedEvent & AccountEvent;
    const accountId = accountIdOfStream(raw.streamId);
    const delta = { credited: 0, settled: 0, refunded: 0, frozen: 0 };
    switch (event.type) {
      case 'AccountOpened':
        await tx.query('INSERT INTO balances (account_id, revision) VALUES ($1, $2)', [accountId, raw.revision]);
        return;
      case 'CreditAdded':
        delta.credited = event.data.amount;
        break;
      case 'FundsReserved':
        delta.frozen = event.data.amount;
        break;
      case 'ReservationSettled':
        delta.frozen = -event.data.reservedAmount;
        delta.settled = event.data.amount;
        break;
      case 'ReservationReleased':
        delta.frozen = -event.data.amount;
        break;
      case 'ChargeRefunded':
        delta.refunded = event.data.amount;
        break;
      default:
        return;
    }
    await tx.query(
      `UPDATE balances SET
         credited = credited + $2, settled = settled + $3, refunded = refunded + $4, frozen = frozen + $5,
         available = available + $2 - $3 + $4 - $5, revision = $6
       WHERE account_id = $1`,
      [accountId, delta.credited, delta.settled, delta.refunded, delta.frozen, raw.revision],
    );
  },
};
