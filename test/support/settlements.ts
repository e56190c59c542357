import { accountStream } from '../../src/domain/account/events';
import type { TestGateway } from './gateway';
import { waitFor } from './wait';

/** A settlement as the account's log holds it. */
export interface RecordedSettlement {
  readonly amount: number;
  readonly reservedAmount: number;
  readonly overrun: number;
  readonly usage: Record<string, unknown>;
  readonly pricing: { readonly amount: number; readonly lines: readonly { readonly units: Record<string, number>; readonly amount: number }[] };
}

/** What the account's latest reservation reserved and, once it is settled, its settlement (a release fails the wait). */
export async function latestSettlement(gw: TestGateway, accountId: string): Promise<{ reserved: number; settled: RecordedSettlement }> {
  return waitFor('the latest reservation to be settled', async () => {
    const events = await gw.store.readStream(accountStream(accountId));
    const reservation = events.filter((e) => e.type === 'FundsReserved').pop();
    const close = events.filter((e) => e.type === 'ReservationSettled' || e.type === 'ReservationReleased').pop();
    const reservationId = (reservation?.data as { reservationId?: string } | undefined)?.reservationId;
    if (!reservation || !close || (close.data as { reservationId?: string }).reservationId !== reservationId) return null;
    if (close.type === 'ReservationReleased') throw new Error(`the reservation was released: ${JSON.stringify(close.data)}`);
    return { reserved: (reservation.data as { amount: number }).amount, settled: close.data as RecordedSettlement };
  });
}
