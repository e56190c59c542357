import { priceLine, pricingOf, type Pricing } from '../../billing/money';
import { chargeChannels } from '../../billing/serving-channels';
import type { Logger } from '../../log';
import { isTerminal, type TaskState } from '../decider';
import type { EngineKind } from '../kind';
import { causedBy, done, streamOf, type TaskJobDeps, type TaskJobEngine, type TaskJobHandler } from './common';

/**
 * Closes a finished task's reservation: settles what its kind charges (a succeeded task, or a
 * failed one that owes for work it completed), naming the channels that served it, else releases
 * it; records the billing.
 */
export function billJob(engine: TaskJobEngine, deps: Pick<TaskJobDeps, 'accounts' | 'logger'>): TaskJobHandler {
  return async (job) => {
    const stream = streamOf(job);
    const task = await engine.load(stream);
    if (task.billed || !isTerminal(task.status)) return done;
    const charge = chargeOf(engine.kind(task.kind), task, deps.logger);
    if (charge) {
      // The task's main call is the one its provider accepted (else, for work made at poll time, the
      // first that served); a task recorded before channels were settles without one.
      const served = chargeChannels(task.upstreamChannel, task.servedBy);
      const outcome = await deps.accounts.settle(task.accountId, task.reservationId, charge.pricing, charge.usage, causedBy(job), served);
      await engine.run(stream, { type: 'RecordBilling', outcome: outcome.kind, amount: outcome.amount, now: engine.now() }, causedBy(job));
    } else {
      const outcome = await deps.accounts.release(task.accountId, task.reservationId, task.error?.code ?? task.status, causedBy(job));
      await engine.run(stream, { type: 'RecordBilling', outcome: outcome.kind, amount: outcome.kind === 'settled' ? outcome.amount : 0, now: engine.now() }, causedBy(job));
    }
    return done;
  };
}

/**
 * What a finished task owes by its kind, or null to release it. A failed task may still owe for
 * work it completed (a transcription whose summary failed). Pricing reads only the task and the
 * catalog, so a charge that cannot be priced (a provider's report no price reads, a model gone
 * from the catalog) would fail the same way on every retry and keep the reservation frozen for
 * good. Then a succeeded task settles its estimate, what its owner agreed to at submission, and a
 * failed one is released; the settlement's usage says so, and the log says why.
 */
function chargeOf(kind: Pick<EngineKind, 'settlement' | 'failureSettlement'>, task: TaskState, logger: Logger): { pricing: Pricing; usage: Record<string, unknown> } | null {
  if (task.status !== 'succeeded' && task.status !== 'failed') return null;
  try {
    return task.status === 'succeeded' ? kind.settlement(task) : kind.failureSettlement(task);
  } catch (err) {
    logger.error({ err, taskId: task.taskId, kind: task.kind, status: task.status }, 'a finished task cannot be priced; a succeeded one is settled at its estimate, a failed one released');
    if (task.status === 'failed') return null;
    return {
      pricing: pricingOf(priceLine({ estimate: 1 }, { estimate: task.estimate })),
      // The reason stays in the log: the usage is the client's to read, and an error's text is not.
      usage: { model: task.model, priced_by: 'estimate' },
    };
  }
}
