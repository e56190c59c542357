import type { Catalog, ModelEntry } from '../billing/catalog';
import type { Channel } from '../upstreams/channel';
import { isCredentialRefusal, UpstreamError } from '../upstreams/errors';
import type { Upstreams } from '../upstreams/registry';
import { isOutcomeUnknown } from '../upstreams/routing/failover';
import { PinnedChannelGoneError, type Router, type Served } from '../upstreams/routing/router';
import type { TaskState } from './decider';
import { TaskRejected, type Submitted } from './kind';

/**
 * What task kinds share in talking to a provider through their protocol's adapter: the task's
 * model and channel, the refusals that fail a task for good, the poll backoff and the model a task
 * is priced by.
 */

/** What a task kind's submit routes with (Router.attempt). */
export type TaskRouter = Pick<Router, 'attempt'>;

/** A task's model; a model gone from the catalog fails the task for good. */
function taskModel(catalog: Catalog, modelId: string): ModelEntry {
  const model = catalog.get(modelId);
  if (!model) throw new TaskRejected({ code: 'model_not_found', message: `model ${modelId} is no longer in the catalog` });
  return model;
}

/**
 * A task's model and the upstream channel it runs on: the channel that accepted it (only that one
 * knows the provider's task: polls and cancels go there), else, for a task accepted before
 * channels were recorded or one whose kind submits nothing upstream, the model's first channel.
 */
export function taskChannel(deps: { catalog: Catalog; upstreams: Upstreams }, task: Pick<TaskState, 'model' | 'upstreamChannel'>): { model: ModelEntry; channel: Channel } {
  const model = taskModel(deps.catalog, task.model);
  return { model, channel: deps.upstreams.channel(task.upstreamChannel ?? model.channel) };
}

/**
 * Submits a task on the model's channels as the router orders them, and names the channel that
 * accepted it. A refusal of the request fails the task for good (finalRefusals); no connection,
 * a 5xx naming the provider's error code (not a 502 or 504), a 429 or refused credentials fail
 * over to the next channel. A submit whose outcome is unknown (isOutcomeUnknown: a timeout, a
 * broken connection, a 502 or 504, a 5xx without the provider's error code) is never sent to
 * another channel: on a one-channel model it is thrown, and the submit job retries it on that
 * channel (with the same idempotency key where the protocol has one); on a model of several, where
 * a retry could be routed elsewhere, the task fails and its reservation is released.
 *
 * `only`: the channel holding provider state the task uses (an asset group, assets, a draft): the
 * task is submitted there or nowhere, and a submit whose outcome is unknown is retried there. A
 * channel no longer configured fails the task for good: no other provider account has that state.
 */
export async function submitOnChannels(
  deps: { catalog: Catalog; router: TaskRouter },
  task: Pick<TaskState, 'model'>,
  create: (model: ModelEntry, channel: Channel) => Promise<Submitted>,
  only?: string,
): Promise<Submitted> {
  const model = taskModel(deps.catalog, task.model);
  try {
    const { value, channel } = await deps.router.attempt(model, (ch) => finalRefusals(() => create(model, ch)), only === undefined ? { outcomeMatters: true } : { outcomeMatters: true, only });
    return { ...value, channel };
  } catch (err) {
    if (err instanceof PinnedChannelGoneError) throw new TaskRejected({ code: 'upstream_unavailable', message: err.message });
    if (only === undefined && model.channels.length > 1 && isOutcomeUnknown(err)) {
      throw new TaskRejected({ code: 'upstream_outcome_unknown', message: `the provider did not answer the submission (${(err as Error).message}); the task was not sent elsewhere` });
    }
    throw err;
  }
}

/**
 * A task's work made at poll time rather than by a provider's task (async images, podcasts), on
 * the model's channels as the router orders them, by the submission's rule: a failure before any
 * result (no connection, a 5xx, a 429, refused credentials) fails over to the next channel; one
 * whose outcome is unknown (a timeout or a broken connection once the request was written) is
 * never sent to another channel, and is the kind's to judge. Answers the result and the channel
 * that made it, which the task records for its settlement.
 */
export function routeTaskWork<T>(
  deps: { catalog: Catalog; router: TaskRouter },
  task: Pick<TaskState, 'model'>,
  work: (model: ModelEntry, channel: Channel) => Promise<T>,
  /** Aborts the work (a cancelled task): an abort is never a channel's failure. */
  signal?: AbortSignal,
): Promise<Served<T>> {
  const model = taskModel(deps.catalog, task.model);
  return deps.router.attempt(model, (channel) => work(model, channel), signal === undefined ? { outcomeMatters: true } : { outcomeMatters: true, signal });
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

