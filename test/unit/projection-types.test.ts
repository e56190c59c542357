import { expect } from 'chai';
import type { PoolClient } from 'pg';
import type { AccountEvent } from '../../src/domain/account/events';
import type { RecordedEvent } from '../../src/eventstore/port';
import { applyEvents } from '../../src/projections-runtime/consumer';
import { defineProjection } from '../../src/projections-runtime/define';
import type { TaskEvent } from '../../src/tasks/events';

/**
 * A projection's handled types and its handler are checked by the compiler: the `@ts-expect-error`
 * lines below are type errors, and `tsc --noEmit` (part of npm test) fails if one stops being one.
 */
const shape = { name: 'typed', tables: [], ddl: '' };
const noTx = {} as PoolClient;
const recorded = (type: string, data: unknown, revision = 0): RecordedEvent => ({
  id: `e${revision}`,
  streamId: 'account-a',
  revision,
  type,
  data,
  metadata: {},
  position: { major: 1n, minor: BigInt(revision) },
  recordedAt: new Date(0),
});

describe('typed projections', () => {
  it('hands the handler only its own types, with their data typed', async () => {
    const seen: string[] = [];
    const credits = defineProjection<AccountEvent>()({
      ...shape,
      handles: ['CreditAdded', 'ChargeRefunded'],
      async apply(_tx, event) {
        switch (event.type) {
          case 'CreditAdded':
            seen.push(`credit ${event.data.amount} ${event.data.reference}`);
            return;
          case 'ChargeRefunded':
            seen.push(`refund ${event.data.amount} of ${event.data.reservationId}`);
            return;
          // @ts-expect-error: a type the projection does not handle cannot be a case of its handler
          case 'FundsReserved':
            return;
        }
      },
    });
    expect([...credits.eventTypes]).to.deep.equal(['CreditAdded', 'ChargeRefunded']);
    await applyEvents(credits, noTx, [
      recorded('AccountOpened', { accountId: 'a', name: 'A', openedAt: '' }, 0),
      recorded('CreditAdded', { entryId: 'c', amount: 5, reference: 'r', note: null, at: '' }, 1),
      recorded('FundsReserved', { reservationId: 'x', amount: 1 }, 2),
      recorded('ChargeRefunded', { refundId: 'f', reservationId: 'x', amount: 1, reason: '', context: null, at: '' }, 3),
    ]);
    expect(seen).to.deep.equal(['credit 5 r', 'refund 1 of x']);
  });

  it('folds a batch of its own types only, in log order', async () => {
    const revisions: number[] = [];
    const batch = defineProjection<TaskEvent>()({
      ...shape,
      handles: ['TaskSucceeded', 'TaskFailed'],
      async applyBatch(_tx, events) {
        for (const event of events) revisions.push(event.type === 'TaskFailed' ? -event.revision : event.revision);
      },
    });
    await applyEvents(batch, noTx, [recorded('TaskSucceeded', { at: '' }, 1), recorded('TaskSubmitted', {}, 2), recorded('TaskFailed', { error: { code: 'x', message: 'y' }, at: '' }, 3)]);
    expect(revisions).to.deep.equal([1, -3]);
  });
});

/** Type-level only (never called): each line marked is a compile error, checked by `tsc --noEmit`. */
export function refusedAtCompileTime(): void {
  defineProjection<AccountEvent>()({
    ...shape,
    // @ts-expect-error: not an account event
    handles: ['CreditAdded', 'TaskSubmitted'],
    async apply() {},
  });
  defineProjection<AccountEvent>()({
    ...shape,
    handles: ['CreditAdded'],
    async apply(_tx, event) {
      // @ts-expect-error: CreditAdded has no reservationId
      void event.data.reservationId;
    },
  });
}
