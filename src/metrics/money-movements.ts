import type { AccountState } from '../domain/account/decider';
import type { AccountEvent } from '../domain/account/events';
import { shardedEntry } from '../domain/sharded-record';
import type { GatewayMetrics } from './gateway-metrics';

/** What refunds and credits are labelled with: no model is known at that point (the ledger has it). */
const NO_MODEL = 'none';

/**
 * Counts the money an account command moved, by model: the model of a settlement or release is
 * that of its reservation, read from the state the command was decided on.
 */
export function countMoneyMovements(metrics: GatewayMetrics): (events: readonly AccountEvent[], decidedOn: AccountState) => void {
  return (events, decidedOn) => {
    for (const event of events) {
      switch (event.type) {
        case 'CreditAdded':
          metrics.countMoney('credited', NO_MODEL, event.data.amount);
          break;
        case 'FundsReserved':
          metrics.countMoney('reserved', event.data.purpose.description, event.data.amount);
          break;
        case 'ReservationSettled':
          metrics.countMoney('settled', shardedEntry(decidedOn.open, event.data.reservationId)?.purpose.description ?? NO_MODEL, event.data.amount);
          break;
        case 'ReservationReleased':
          metrics.countMoney('released', shardedEntry(decidedOn.open, event.data.reservationId)?.purpose.description ?? NO_MODEL, event.data.amount);
          break;
        case 'ChargeRefunded':
          metrics.countMoney('refunded', NO_MODEL, event.data.amount);
          break;
        default:
          break;
      }
    }
  };
}
