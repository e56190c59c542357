import type { Catalog, ModelEntry } from '../billing/catalog';
import type { Channel } from '../upstreams/channel';
import { isCredentialRefusal, UpstreamError } from '../upstreams/errors';
import type { Upstreams } from '../upstreams/registry';
import type { TaskState } from './decider';
import { TaskRejected } from './kind';

/**
 * What task kinds share in talking to a provider through their protocol's adapter: the task's
 * model and channel, the refusals that fail a task for good, the poll backoff and the model a task
 * is priced by.
 */

/** A task's model and the upstream channel it runs on; a model gone from the catalog fails the task for good. */
export function taskChannel(deps: { catalog: Catalog; upstreams: Upstreams }, modelId: string): { model: ModelEntry; channel: Channel } {
  const model = deps.catalog.get(modelId);
  if (!model) throw new TaskRejected({ code: 'model_not_found', message: `model ${modelId} is no longer in the catalog` });
  return { model, channel: deps.upstreams.channel(model.channel) };
}

/**
 * The model that prices a finished task: as the catalog had it at submission, what its owner
 * agreed to; for a task recorded before that was kept, as the catalog has it now (a model gone
 * from it then cannot price the task).
 */
export function pricingModel(catalog: Catalog, task: Pick<TaskState, 'model' | 'taskId' | 'modelAtSubmission'>): ModelEntry {
  if (task.modelAtSubmission) return task.modelAtSubmission;
  const model = catalog.get(task.model);
  if (!model) throw new Error(`model ${task.model} left the catalog; cannot price task ${task.taskId}`);
  return model;
}

/**
 * A quantity a provider reported as the whole units it bills: rounded up, as providers bill
 * started units (5.04 seconds are 6); null when it is missing or not a positive finite number.
 */
export function startedUnits(reported: unknown): number | null {
  return typeof reported === 'number' && reported > 0 && Number.isFinite(reported) ? Math.ceil(reported) : null;
}

/**
 * The seconds a provider's reported duration bills (startedUnits), never more than `max`, the
 * longest the model takes (a report beyond it is the provider's error, not the client's to pay);
 * `fallback`, what the reservation froze, when the report gives none.
 */
export function billableSeconds(reported: unknown, fallback: number, max: number): number {
  const seconds = startedUnits(reported);
  return seconds === null ? fallback : Math.min(seconds, max);
}

/** Delay before the next poll: `pollMs`, doubled per earlier poll (at most 2^6 times), capped at `capMs`. */
export function pollBackoff(pollMs: number, capMs: number): (polls: number) => number {
  return (polls) => Math.min(pollMs * 2 ** Math.min(polls, 6), capMs);
}

/**
 * A provider call that creates something (its answer read by the protocol's adapter): a refusal
 * fails the task for good with the provider's code (rejectOn4xx); anything else is retried.
 */
export async function finalRefusals<T>(create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (err) {
    return rejectOn4xx(err);
  }
}

/**
 * A provider's refusal of a request (4xx other than 429): final, unlike anything else, which is
 * transient. A refusal of the gateway's own credentials is not one: the task waits, retried, for
 * the operator to mend the key.
 */
export function isRefusal(err: unknown): err is UpstreamError {
  return err instanceof UpstreamError && err.status >= 400 && err.status < 500 && err.status !== 429 && !isCredentialRefusal(err);
}

/**
 * Submission errors of a provider: its refusal fails the task for good with the provider's code;
 * anything else is transient and retried by the engine.
 */
function rejectOn4xx(err: unknown): never {
  if (isRefusal(err)) throw new TaskRejected({ code: err.code ?? 'upstream_rejected', message: err.message });
  throw err;
}

