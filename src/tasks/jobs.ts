import { request } from 'undici';
import { extensionFor } from '../files/content-types';
import type { Job, JobOutcome } from '../jobs/queue';
import { UpstreamError } from '../upstreams/channel';
import { isTerminal } from './decider';
import type { AccountService } from '../accounts/service';
import type { FileStore } from '../files/store';
import type { UrlSigner } from '../files/signed-urls';
import type { Logger } from '../log';
import type { WebhookSender } from '../webhooks/deliver';
import type { TaskEngine } from './engine';
import type { ArchivedArtifact } from './events';
import { JOB } from './process-manager';

/** How often a transient upstream failure (submit, poll) or an archive download is retried before the task gives up. */
const MAX_TRANSIENT_ATTEMPTS = 8;
const MAX_ARCHIVE_ATTEMPTS = 5;

const done: JobOutcome = { done: true };

/** How many polls of a task's upstream came before this one (0 for the first). */
function pollsOf(job: Job): number {
  const polls = Number(job.payload.polls ?? 0);
  return Number.isSafeInteger(polls) && polls > 0 ? polls : 0;
}

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

/**
 * The side effects of the task engine, one handler per job kind. Each loads the task, does
 * nothing if its effect is already recorded (so a re-run after a crash is harmless), performs
 * the effect and records the outcome as an event.
 */
export function taskJobHandlers(engine: TaskJobEngine, deps: TaskJobDeps): Record<string, (job: Job) => Promise<JobOutcome>> {
  const streamOf = (job: Job): string => job.payload.stream as string;
  const meta = (job: Job) => ({ causationId: `job:${job.kind}:${job.key}` });

  async function failTransient(job: Job, err: unknown, code: string): Promise<JobOutcome> {
    if (!(err instanceof UpstreamError) || job.attempts < MAX_TRANSIENT_ATTEMPTS) throw err;
    await engine.run(streamOf(job), { type: 'Fail', error: { code, message: err.message }, now: engine.now() }, meta(job));
    return done;
  }

  return {
    async [JOB.submit](job) {
      try {
        await engine.submitOnce(streamOf(job), meta(job));
      } catch (err) {
        return failTransient(job, err, 'upstream_unavailable');
      }
      return done;
    },

    async [JOB.poll](job) {
      const task = await engine.load(streamOf(job));
      // A cancelled task's next poll tells the upstream to stop instead (when the kind can).
      if (task.status === 'cancelled' && task.upstreamId && !task.upstreamSucceeded) {
        const kind = engine.kind(task.kind);
        try {
          await kind.cancelUpstream?.(task);
        } catch (err) {
          if (err instanceof UpstreamError && job.attempts < MAX_TRANSIENT_ATTEMPTS) throw err;
          deps.logger.warn({ err, stream: streamOf(job) }, 'could not cancel the upstream task');
        }
        return done;
      }
      if (isTerminal(task.status) || task.upstreamSucceeded) return done;
      const kind = engine.kind(task.kind);
      if (deps.clock().getTime() - Date.parse(task.createdAt) > deps.taskTimeoutMs) {
        await engine.run(streamOf(job), { type: 'Fail', error: { code: 'timeout', message: 'the upstream did not finish the task in time' }, now: engine.now() }, meta(job));
        return done;
      }
      let outcome;
      try {
        outcome = await kind.poll(task);
      } catch (err) {
        return failTransient(job, err, 'upstream_unavailable');
      }
      if (outcome.state === 'pending') {
        // Records a change of the upstream's status or progress (the decider drops a repeat).
        await engine.run(streamOf(job), { type: 'Progress', upstreamStatus: outcome.upstreamStatus, progress: outcome.progress ?? null, now: engine.now() }, meta(job));
        // The count of polls so far rides in the job's payload, so the backoff grows from poll to
        // poll (and survives a restart): the next poll waits kind.pollDelayMs(polls).
        const polls = pollsOf(job) + 1;
        return { retryAt: new Date(Date.now() + kind.pollDelayMs(polls)), payload: { ...job.payload, polls } };
      }
      if (outcome.state === 'failed') {
        await engine.run(streamOf(job), { type: 'Fail', error: outcome.error, now: engine.now() }, meta(job));
        return done;
      }
      await engine.run(
        streamOf(job),
        {
          type: 'UpstreamSucceed',
          result: outcome.result,
          usage: outcome.usage,
          artifacts: outcome.artifacts,
          succeedNow: kind.succeedsBeforeArchive(task),
          stage: outcome.stage ?? null,
          now: engine.now(),
        },
        meta(job),
      );
      return done;
    },

    async [JOB.archive](job) {
      const task = await engine.load(streamOf(job));
      if (task.archived || task.status === 'failed' || task.status === 'cancelled') return done;
      try {
        const archived: ArchivedArtifact[] = [];
        for (const artifact of task.artifacts) {
          const res = await request(artifact.sourceUrl, { method: 'GET', headersTimeout: 30_000, bodyTimeout: 60_000 });
          if (res.statusCode !== 200) {
            await res.body.dump();
            throw new Error(`download of ${artifact.name} answered HTTP ${res.statusCode}`);
          }
          const declared = Number(res.headers['content-length'] ?? NaN);
          const contentType = String(res.headers['content-type'] ?? artifact.contentType ?? 'application/octet-stream');
          const stored = await deps.files.put(`tasks/${task.kind}/${task.taskId}/${artifact.name}${extensionFor(contentType)}`, res.body);
          // Verified: the bytes arrived whole (as many as announced) and are not empty.
          if (stored.bytes === 0 || (Number.isFinite(declared) && declared !== stored.bytes)) throw new Error(`download of ${artifact.name} was incomplete`);
          archived.push({ name: artifact.name, key: stored.key, bytes: stored.bytes, sha256: stored.sha256, contentType });
        }
        await engine.run(streamOf(job), { type: 'RecordArchive', artifacts: archived, now: engine.now() }, meta(job));
        return done;
      } catch (err) {
        if (job.attempts < MAX_ARCHIVE_ATTEMPTS) throw err;
        const message = `archiving failed: ${(err as Error).message}`;
        await engine.run(streamOf(job), { type: 'RecordArchiveFailure', message, now: engine.now() }, meta(job));
        // A task that succeeds only with its archive cannot succeed now.
        if (task.status !== 'succeeded') await engine.run(streamOf(job), { type: 'Fail', error: { code: 'archive_failed', message }, now: engine.now() }, meta(job));
        return done;
      }
    },

    async [JOB.bill](job) {
      const task = await engine.load(streamOf(job));
      if (task.billed || !isTerminal(task.status)) return done;
      const accounts = deps.accounts;
      const kind = engine.kind(task.kind);
      // A failed task may still owe for work it completed (e.g. a transcription whose summary failed).
      const charge = task.status === 'succeeded' ? kind.settlement(task) : task.status === 'failed' ? (kind.failureSettlement?.(task) ?? null) : null;
      if (charge) {
        const outcome = await accounts.settle(task.accountId, task.reservationId, charge.pricing, charge.usage, meta(job));
        await engine.run(streamOf(job), { type: 'RecordBilling', outcome: outcome.kind, amount: outcome.amount, now: engine.now() }, meta(job));
      } else {
        const outcome = await accounts.release(task.accountId, task.reservationId, task.error?.code ?? task.status, meta(job));
        await engine.run(streamOf(job), { type: 'RecordBilling', outcome: outcome.kind, amount: outcome.kind === 'settled' ? outcome.amount : 0, now: engine.now() }, meta(job));
      }
      return done;
    },

    async [JOB.webhook](job) {
      const stream = streamOf(job);
      const deliveryId = job.payload.deliveryId as string;
      const attempt = Number(job.payload.attempt);
      const task = await engine.load(stream);
      const delivery = task.deliveries[deliveryId];
      if (!task.callback || !delivery || delivery.state !== 'pending' || delivery.attempts >= attempt) return done;
      const kind = engine.kind(task.kind);
      const body = JSON.stringify({
        task_id: task.taskId,
        status: task.status,
        model: task.model,
        ...(task.status === 'succeeded' ? (kind.webhookFields?.(task, deps.signer) ?? {}) : { error: task.error ?? { code: 'task_failed', message: 'the task failed' } }),
        created_at: task.createdAt,
        finished_at: task.finishedAt,
      });
      // The secret in force now: a rotation applies to the very next attempt.
      const secret = task.callback.signed ? await deps.accounts.webhookSecret(task.accountId) : null;
      const result = await deps.webhooks.send(task.callback.url, body, secret);
      await engine.run(stream, { type: 'RecordAttempt', deliveryId, attempt, ...result, now: engine.now() }, meta(job));
      return done;
    },
  };
}
