import { isTerminal } from '../decider';
import { causedBy, done, streamOf, type TaskJobDeps, type TaskJobEngine, type TaskJobHandler } from './common';

/**
 * Closes a finished task's reservation: settles what its kind charges (a succeeded task, or a
 * failed one that owes for work it completed), else releases it; records the billing.
 */
export function billJob(engine: TaskJobEngine, deps: Pick<TaskJobDeps, 'accounts'>): TaskJobHandler {
  return async (job) => {
    const stream = streamOf(job);
    const task = await engine.load(stream);
    if (task.billed || !isTerminal(task.status)) return done;
    const kind = engine.kind(task.kind);
    // A failed task may still owe for work it completed (e.g. a transcription whose summary failed).
    const charge = task.status === 'succeeded' ? kind.settlement(task) : task.status === 'failed' ? kind.failureSettlement(task) : null;
    if (charge) {
      const outcome = await deps.accounts.settle(task.accountId, task.reservationId, charge.pricing, charge.usage, causedBy(job));
      await engine.run(stream, { type: 'RecordBilling', outcome: outcome.kind, amount: outcome.amount, now: engine.now() }, causedBy(job));
    } else {
      const outcome = await deps.accounts.release(task.accountId, task.reservationId, task.error?.code ?? task.status, causedBy(job));
      await engine.run(stream, { type: 'RecordBilling', outcome: outcome.kind, amount: outcome.kind === 'settled' ? outcome.amount : 0, now: engine.now() }, causedBy(job));
    }
    return done;
  };
}
