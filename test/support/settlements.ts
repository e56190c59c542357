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
  /** The channel that served the charge's main call, and every channel when its calls went to more than one (ChargeChannels). */
  readonly channel?: string;
  readonly channels?: readonly string[];
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

/** The settlement of a task's reservation, once its billing has closed it (a release fails the wait). */
export async function taskSettlement(gw: TestGateway, taskStream: string): Promise<RecordedSettlement> {
  const submitted = (await gw.store.readStream(taskStream)).find((e) => e.type === 'TaskSubmitted');
  if (!submitted) throw new Error(`no task ${taskStream}`);
  const { accountId, reservationId } = submitted.data as { accountId: string; reservationId: string };
  return waitFor(`the settlement of ${taskStream}`, async () => {
    const close = (await gw.store.readStream(accountStream(accountId))).find(
      (e) => (e.type === 'ReservationSettled' || e.type === 'ReservationReleased') && (e.data as { reservationId?: string }).reservationId === reservationId,
    );
    if (close?.type === 'ReservationReleased') throw new Error(`the reservation was released: ${JSON.stringify(close.data)}`);
    return close ? (close.data as RecordedSettlement) : null;
  });
}
