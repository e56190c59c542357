import type { ModelEntry } from '../billing/catalog';
import { authOf, endpointOf, type GatewayContext } from '../http/context';
import { ApiError } from '../http/errors';
import { upstreamToApiError } from '../http/upstream-errors';
import { UpstreamError } from '../upstreams/errors';
import type { SubmitOutcome, TaskEngine } from './engine';
import { taskStream, type Callback } from './events';
import { idempotencyOf } from './idempotency';
import { decodeRow, type TaskKindCodec } from './kind';
import { acceptedRow, failedRow, type TaskRow } from './view-row';

/**
 * The one way a task is created, whatever its kind: check the request, take the rate limit,
 * claim the Idempotency-Key, reserve the estimate and record the task (TaskEngine.create), submit
 * it inline or leave it to the submit job, answer. What differs between kinds is data: each kind's
 * CreationPolicy (listed in docs/tasks.md), plus its own checks and its answer's shape.
 */

/** How one kind's creation behaves where kinds differ. Every member is declared by every kind. */
export interface CreationPolicy {
  /** The endpoint that creates tasks of the kind. */
  readonly endpoint: string;
  /**
   * Where the caller's per-key rate limit is taken: `after_checks`, once the request passed every
   * check (a refused request costs nothing); `before_outside_checks`, before the checks that call
   * out (minutes: the HEAD of the file's URL), which the limit then also protects.
   */
  readonly rateLimit: 'after_checks' | 'before_outside_checks';
  /**
   * `inline`: the creator submits to the provider before answering, to answer with its verdict
   * (the submit job is the safety net, TASK_INLINE_SUBMIT_GRACE_MS later). `background`: the submit
   * job submits at once and the answer does not wait for the provider.
   */
  readonly submission: 'inline' | 'background';
  /**
   * Inline only (null for background): a provider that cannot be reached. `leave_queued`: the
   * answer is the queued task and the submit job retries; `fail_and_answer_502`: the task fails
   * (its reservation is released) and the answer is the provider error (502).
   */
  readonly whenUnreachable: 'leave_queued' | 'fail_and_answer_502' | null;
  /**
   * Inline only (null for background): a provider that refuses the task. The task fails with the
   * provider's code either way; `answer_the_task` answers as for any created task (the failure is
   * on the task), `answer_400` answers 400 with the provider's code, naming `refusedParam`.
   */
  readonly whenRefused: 'answer_the_task' | 'answer_400' | null;
  /** The member a 400 for a refusal names (answer_400 only, else null). */
  readonly refusedParam: string | null;
  /** The HTTP status of the creation answer. */
  readonly status: 200 | 202;
}

/** What a kind's checks settle: everything TaskEngine.create records. */
export interface TaskDraft<Request> {
  /** The catalog's entry the estimate was priced by: recorded with the task, it prices the task when billed. */
  readonly model: ModelEntry;
  readonly request: Request;
  readonly estimate: number;
  readonly callback: Callback | null;
}

/** The task a creation made (or an earlier one an idempotent replay returns). */
export interface CreatedTask<Request> {
  readonly row: TaskRow;
  readonly request: Request;
  readonly replayed: boolean;
  /** The provider's id of the task, once it took it (inline submission, or an earlier request). */
  readonly upstreamId: string | null;
}

/** One kind's part in the creation flow: its policy, its checks and the shape of its answer. */
export interface TaskCreation<Checked, Request> {
  readonly kind: TaskKindCodec<Request, unknown, unknown>;
  readonly policy: CreationPolicy;
  /** The checks that need nothing outside the gateway (body, model, the caller's own data). */
  check(ctx: GatewayContext): Promise<Checked>;
  /** The rest of the draft, with the checks that call out; a kind with none returns `checked` (see `nothingOutside`). */
  complete(checked: Checked, ctx: GatewayContext): Promise<TaskDraft<Request>>;
  answer(created: CreatedTask<Request>, ctx: GatewayContext): Promise<Record<string, unknown>> | Record<string, unknown>;
}

/** `complete` of a kind whose checks all run before (no outside call). */
export async function nothingOutside<Request>(draft: TaskDraft<Request>): Promise<TaskDraft<Request>> {
  return draft;
}

export interface TaskCreationDeps {
  readonly tasks: Pick<TaskEngine, 'create' | 'submitOnce' | 'run' | 'now'>;
  readonly rateLimiter: { take(key: string, ownRate: number | null): Promise<void> };
}

export async function createTask<Checked, Request>(deps: TaskCreationDeps, ctx: GatewayContext, creation: TaskCreation<Checked, Request>): Promise<void> {
  const { kind, policy } = creation;
  const auth = authOf(ctx);
  const takeRateLimit = () => deps.rateLimiter.take(auth.keyId, auth.rateLimitPerMinute);
  const checked = await creation.check(ctx);
  if (policy.rateLimit === 'before_outside_checks') await takeRateLimit();
  const draft = await creation.complete(checked, ctx);
  if (policy.rateLimit === 'after_checks') await takeRateLimit();
  const { row, replayed } = await deps.tasks.create({
    kind,
    accountId: auth.accountId,
    actor: auth.keyId,
    endpoint: endpointOf(ctx),
    model: draft.model,
    request: draft.request,
    estimate: draft.estimate,
    callback: draft.callback,
    idempotency: idempotencyOf(ctx),
    requestId: ctx.state.requestId,
    submitsInline: policy.submission === 'inline',
  });
  if (replayed) ctx.set('idempotent-replayed', 'true');
  const submitted = !replayed && policy.submission === 'inline' ? await submitInline(deps, ctx, kind.kind, row, policy) : row;
  const answer = await creation.answer({ row: submitted, request: decodeRow(kind, submitted).request, replayed, upstreamId: submitted.upstream_id }, ctx);
  ctx.status = policy.status;
  ctx.body = answer;
}

/**
 * Hands a new task to its provider inside the request; answers the task as that left it (with the
 * provider's id once it took the task). The task is recorded by now, so whatever fails here
 * besides the provider's own verdict (the database going away) answers the queued task: its
 * client must learn its id, and the submit job carries on from the record.
 */
async function submitInline(deps: TaskCreationDeps, ctx: GatewayContext, kind: string, row: TaskRow, policy: CreationPolicy): Promise<TaskRow> {
  const stream = taskStream(kind, row.task_id);
  const meta = { requestId: ctx.state.requestId };
  let submitted: SubmitOutcome;
  try {
    submitted = await deps.tasks.submitOnce(stream, meta);
  } catch (err) {
    if (err instanceof UpstreamError && policy.whenUnreachable === 'fail_and_answer_502' && (await failedUnreachable(deps, ctx, stream, err))) {
      throw upstreamToApiError(err);
    }
    if (err instanceof UpstreamError) ctx.state.logger.warn({ err, stream }, 'provider unreachable at creation; the submit job retries');
    else ctx.state.logger.error({ err, stream }, 'inline submission failed after the task was recorded; answering the queued task, the submit job retries');
    return row;
  }
  if (submitted.outcome === 'rejected' && policy.whenRefused === 'answer_400') {
    throw new ApiError(400, submitted.error.code, submitted.error.message, { param: policy.refusedParam });
  }
  if (submitted.outcome === 'accepted' && submitted.accepted) return acceptedRow(row, submitted.accepted);
  if (submitted.outcome === 'rejected' && submitted.failed) return failedRow(row, submitted.failed);
  return row;
}

/**
 * Nothing is left pending: the task fails now and its reservation is released. False when that
 * cannot be recorded either: the task stays queued for the submit job, and its client gets it.
 */
async function failedUnreachable(deps: TaskCreationDeps, ctx: GatewayContext, stream: string, err: UpstreamError): Promise<boolean> {
  try {
    await deps.tasks.run(stream, { type: 'Fail', error: { code: 'upstream_unavailable', message: err.message }, now: deps.tasks.now() }, { requestId: ctx.state.requestId });
    return true;
  } catch (failErr) {
    ctx.state.logger.error({ err: failErr, stream }, 'could not fail a task whose provider was unreachable at creation; answering the queued task, the submit job retries');
    return false;
  }
}
