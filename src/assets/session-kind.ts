import type { Catalog } from '../billing/catalog';
import { objectCodec } from '../tasks/codec';
import type { CreationPolicy } from '../tasks/creation';
import type { KindRow, KindTask, TaskKind, TaskKindCodec, UpstreamPoll } from '../tasks/kind';
import { isRefusal, pollBackoff, pricingModel, submitOnChannels, taskChannel, type TaskRouter } from '../tasks/upstream-task';
import type { TaskRow } from '../tasks/view-row';
import type { Upstreams } from '../upstreams/registry';
import { createValidateSessionRequest, readValidateResult, readValidateSession, validateResultRequest } from '../upstreams/volcengine-openapi/ark-assets';
import { verificationPricing } from './model-type';
import { sessionExpiry, type SessionRequest } from './request';

export const SESSION_KIND = 'asset_session';

/** The error code of a session that ran out of time; it reads as status `expired`. */
export const SESSION_EXPIRED = 'session_expired';

export type SessionStatus = 'pending' | 'verified' | 'failed' | 'expired';

/** Sessions wait on a person, not a machine: polls back off to this, which bounds how late an expiry is seen. */
const MAX_POLL_DELAY_MS = 2_000;

/**
 * A real-person verification session on the provider's verification Actions
 * (CreateVisualValidateSession, GetVisualValidateResult by its token;
 * src/upstreams/volcengine-openapi/ark-assets.ts): the provider serves the one-time verification
 * page where the person consents and passes a liveness check, and then names the asset group
 * their images go to. On the task engine: `submit` opens the provider's session and records its
 * page as `verification_url`; the session succeeds (`verified`) or fails (`failed`: the provider
 * refused the result, or `expired` once its 30 minutes have passed by the gateway's clock while
 * the provider still waits). The fee is frozen
 * at creation and settled on verification; a failed or expired session releases it.
 */
/**
 * A session's result: the verification page's URL from the provider's acceptance (in the view's
 * row; see TaskKind.submit's `details`), then the provider's id of the verified group.
 */
export interface SessionResult {
  readonly verification_url?: string | null;
  readonly upstream_group_id?: string;
}

export interface SessionUsage {
  readonly sessions: number;
}

/**
 * Submitted inline, so the answer carries the verification_url. A provider out of reach leaves
 * the session pending without a URL for the submit job to retry (the client reads the session
 * until the URL appears); a refusal fails the session, which the answer shows.
 */
export const SESSION_CREATION: CreationPolicy = {
  endpoint: 'POST /v1/asset-groups/validate-session',
  rateLimit: 'after_checks',
  submission: 'inline',
  whenUnreachable: 'leave_queued',
  whenRefused: 'answer_the_task',
  refusedParam: null,
  status: 200,
};

export const SESSION_TASK: TaskKindCodec<SessionRequest, SessionResult, SessionUsage> = {
  kind: SESSION_KIND,
  idPrefix: 'avs',
  request: objectCodec<SessionRequest>('verification session request', { group_id: true, name: true, upstream_group_id: true }),
  result: objectCodec<SessionResult>('verification session result', {}),
  usage: objectCodec<SessionUsage>('verification session usage', { sessions: true }),
};

type SessionTask = KindTask<SessionRequest, SessionResult, SessionUsage>;

export function sessionKind(deps: { catalog: Catalog; upstreams: Upstreams; router: TaskRouter; clock: () => Date; pollMs: number }): TaskKind<SessionRequest, SessionResult, SessionUsage> {
  return {
    ...SESSION_TASK,

    async submit(task: SessionTask) {
      // The provider's session takes no group nor name: each verification names a group of its own.
      // A re-verification stays in the provider account holding the group (and its images).
      return submitOnChannels(
        deps,
        task,
        async (_model, channel) => {
          const session = readValidateSession(await channel.call(createValidateSessionRequest()), channel.name);
          return { upstreamId: session.token, details: { verification_url: session.pageUrl } };
        },
        task.request.upstream_channel,
      );
    },

    async poll(task: SessionTask): Promise<UpstreamPoll<SessionResult, SessionUsage>> {
      const { channel } = taskChannel(deps, task);
      const outcome = await channel
        .call(validateResultRequest(task.upstreamId!))
        .then((answer) => readValidateResult(answer, channel.name))
        .catch((err: unknown) => {
        // The provider refuses the result of a person who failed, declined or let the link expire.
        if (isRefusal(err)) return { state: 'refused' as const, error: { code: err.code ?? 'verification_failed', message: err.message } };
        throw err;
      });
      if (outcome.state === 'refused') return { state: 'failed', error: outcome.error };
      if (outcome.state === 'verified') return { state: 'succeeded', result: { upstream_group_id: outcome.groupId }, usage: { sessions: 1 }, artifacts: [] };
      if (deps.clock() >= sessionExpiry(task.createdAt)) {
        return { state: 'failed', error: { code: SESSION_EXPIRED, message: 'the verification link expired before the person completed it' } };
      }
      return { state: 'pending', upstreamStatus: 'queued' };
    },

    pollDelayMs: pollBackoff(deps.pollMs, MAX_POLL_DELAY_MS),

    succeedsBeforeArchive: () => true,

    settlement(task: SessionTask) {
      return { pricing: verificationPricing(pricingModel(deps.catalog, task)), usage: { model: task.model, session_id: task.taskId, sessions: 1 } };
    },

    render(row: KindRow<SessionRequest, SessionResult, SessionUsage>) {
      const r = row.request;
      const status = sessionStatus(row);
      return {
        id: row.task_id,
        object: 'asset_group.validation_session',
        group_id: r.group_id,
        status,
        // One-time and short-lived: shown only while the person can still use it.
        verification_url: status === 'pending' ? (row.result?.verification_url ?? null) : null,
        expires_at: sessionExpiry(row.created_at).toISOString(),
        error: status === 'failed' || status === 'expired' ? row.error : null,
        billing: {
          currency: 'CNY',
          reserved: Number(row.reserved_amount),
          status: row.billing_status,
          amount: row.billed_amount === null ? null : Number(row.billed_amount),
        },
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
        finished_at: row.finished_at?.toISOString() ?? null,
      };
    },
  };
}

export function sessionStatus(row: Pick<TaskRow, 'status' | 'error'>): SessionStatus {
  if (row.status === 'succeeded') return 'verified';
  if (row.status === 'failed' || row.status === 'cancelled') return row.error?.code === SESSION_EXPIRED ? 'expired' : 'failed';
  return 'pending';
}
