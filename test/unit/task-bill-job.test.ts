import { expect } from 'chai';
import type { Pricing } from '../../src/billing/money';
import { createLogger } from '../../src/log';
import { taskDecider, type TaskCommand, type TaskState } from '../../src/tasks/decider';
import type { TaskEvent } from '../../src/tasks/events';
import { billJob } from '../../src/tasks/job-handlers/bill';
import type { TaskJobEngine } from '../../src/tasks/job-handlers/common';

const now = '2026-01-01T00:00:00.000Z';

/** A video task folded from its events: accepted (on `channel`, when it was recorded), then succeeded or failed upstream. */
function finishedTask(outcome: 'succeeded' | 'failed', channel?: string): TaskState {
  const events: TaskEvent[] = [
    { type: 'TaskSubmitted', data: { taskId: 'vid_1', kind: 'video', accountId: 'acc_1', model: 'video-gone', request: {}, reservationId: 'res_1', estimate: 1_600_000, callback: null, idempotencyKey: null, at: now } },
    { type: 'TaskUpstreamAccepted', data: { upstreamId: 'up_1', ...(channel === undefined ? {} : { channel }), at: now } },
    outcome === 'succeeded'
      ? { type: 'TaskSucceeded', data: { at: now } }
      : { type: 'TaskFailed', data: { error: { code: 'task_failed', message: 'the provider failed it' }, at: now } },
  ];
  return events.reduce(taskDecider.evolve, taskDecider.initialState());
}

/** The bill job on one task whose kind cannot price it, with what it asked of the accounts and the engine. */
async function billUnpriceable(task: TaskState) {
  const settled: { pricing: Pricing; usage: Record<string, unknown>; served: unknown }[] = [];
  const released: string[] = [];
  const recorded: TaskCommand[] = [];
  const cannotPrice = (): never => {
    throw new Error('model video-gone left the catalog; cannot price task vid_1');
  };
  const engine: TaskJobEngine = {
    load: async () => task,
    kind: () => ({ settlement: cannotPrice, failureSettlement: cannotPrice }) as never,
    run: async (_stream: string, command: TaskCommand) => {
      recorded.push(command);
      return [] as never;
    },
    now: () => now,
    submitOnce: async () => undefined as never,
  };
  const accounts = {
    settle: async (_account: string, _reservation: string, pricing: Pricing, usage: Record<string, unknown>, _metadata: unknown, served: unknown) => {
      settled.push({ pricing, usage, served });
      return { kind: 'settled' as const, amount: pricing.amount };
    },
    release: async (_account: string, _reservation: string, reason: string) => {
      released.push(reason);
      return { kind: 'released' as const, amount: 0 };
    },
    webhookSecret: async () => null,
  };
  const outcome = await billJob(engine, { accounts: accounts as never, logger: createLogger('silent') })({ id: 'j1', kind: 'task.bill', key: 'vid_1', payload: { stream: 'video-vid_1' }, attempts: 1 });
  return { outcome, settled, released, recorded };
}

describe('the bill job on a finished task its kind cannot price', () => {
  it('settles a succeeded task at its estimate, saying so, instead of failing on every retry', async () => {
    const { outcome, settled, released, recorded } = await billUnpriceable(finishedTask('succeeded'));
    expect(outcome).to.deep.equal({ done: true });
    expect(released).to.deep.equal([]);
    expect(settled).to.have.length(1);
    expect(settled[0]!.pricing).to.deep.equal({ amount: 1_600_000, lines: [{ units: { estimate: 1 }, unit_prices: { estimate: 1_600_000 }, per: 1, amount: 1_600_000 }] });
    expect(settled[0]!.usage).to.deep.equal({ model: 'video-gone', priced_by: 'estimate' });
    expect(settled[0]!.served, 'a task accepted before channels were recorded settles without one').to.deep.equal({});
    expect(recorded).to.deep.equal([{ type: 'RecordBilling', outcome: 'settled', amount: 1_600_000, now }]);
  });

  it('names the channel that accepted the task on its settlement', async () => {
    const { settled } = await billUnpriceable(finishedTask('succeeded', 'ark-second'));
    expect(settled.map((s) => s.served)).to.deep.equal([{ channel: 'ark-second' }]);
  });

  it('releases a failed task whose charge for completed work cannot be priced', async () => {
    const { outcome, settled, released, recorded } = await billUnpriceable(finishedTask('failed'));
    expect(outcome).to.deep.equal({ done: true });
    expect(settled).to.deep.equal([]);
    expect(released).to.deep.equal(['task_failed']);
    expect(recorded).to.deep.equal([{ type: 'RecordBilling', outcome: 'released', amount: 0, now }]);
  });
});
