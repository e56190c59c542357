import type { AccountService } from '../../accounts/service';
import type { FileStore } from '../../files/store';
import type { UrlSigner } from '../../files/signed-urls';
import type { Job, JobOutcome } from '../../jobs/queue';
import type { Logger } from '../../log';
import { isCredentialRefusal, UpstreamError } from '../../upstreams/errors';
import type { WebhookSender } from '../../webhooks/deliver';
import type { TaskEngine } from '../engine';

/** What the job handlers use besides the engine itself. */
export interface TaskJobDeps {
  readonly logger: Logger;
  readonly clock: () => Date;
  readonly taskTimeoutMs: number;
  readonly accounts: Pick<AccountService, 'settle' | 'release' | 'webhookSecret'>;
  readonly files: Pick<FileStore, 'put'>;
  readonly signer: UrlSigner;
  readonly webhooks: Pick<WebhookSender, 'send'>;
}

/** The engine's operations the job handlers drive. */
export type TaskJobEngine = Pick<TaskEngine, 'run' | 'load' | 'kind' | 'now' | 'submitOnce'>;

export type TaskJobHandler = (job: Job) => Promise<JobOutcome>;

/** How often a transient upstream failure (submit, poll) is retried before the task gives up. */
export const MAX_TRANSIENT_ATTEMPTS = 8;

export const done: JobOutcome = { done: true };

/** The task stream a job works on. */
export function streamOf(job: Job): string {
  return String(job.payload.stream);
}

/** The metadata of the events a job records: caused by this job. */
export function causedBy(job: Job): { causationId: string } {
  return { causationId: `job:${job.kind}:${job.key}` };
}

/**
 * A transient upstream failure: thrown again (the queue retries the job) until the last attempt,
 * which fails the task with `code`. Anything else is thrown as it is.
 */
export async function failTransient(engine: TaskJobEngine, job: Job, err: unknown, code: string): Promise<JobOutcome> {
  if (!(err instanceof UpstreamError) || job.attempts < MAX_TRANSIENT_ATTEMPTS) throw err;
  await engine.run(streamOf(job), { type: 'Fail', error: { code: isCredentialRefusal(err) ? 'upstream_auth_failed' : code, message: err.message }, now: engine.now() }, causedBy(job));
  return done;
}
