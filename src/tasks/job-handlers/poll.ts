import type { Job } from '../../jobs/queue';
import { UpstreamError } from '../../upstreams/errors';
import { isTerminal } from '../decider';
import { TaskRejected } from '../kind';
import { causedBy, done, failTransient, MAX_TRANSIENT_ATTEMPTS, streamOf, type TaskJobDeps, type TaskJobEngine, type TaskJobHandler } from './common';

/** How many polls of a task's upstream came before this one (0 for the first). */
function pollsOf(job: Job): number {
  const polls = Number(job.payload.polls ?? 0);
  return Number.isSafeInteger(polls) && polls > 0 ? polls : 0;
}

/**
 * Asks the provider how a submitted task is doing and records what changed: progress (and polls
 * again later), failure, or success with the result and usage. A task older than the task timeout
 * fails instead; a cancelled task's next poll tells the provider to stop (when the kind can).
 */
export function pollJob(engine: TaskJobEngine, deps: Pick<TaskJobDeps, 'logger' | 'clock' | 'taskTimeoutMs'>): TaskJobHandler {
  return async (job) => {
    const stream = streamOf(job);
    const task = await engine.load(stream);
    if (task.status === 'cancelled' && task.upstreamId && !task.upstreamSucceeded) {
      try {
        await engine.kind(task.kind).cancelUpstream(task);
      } catch (err) {
        if (err instanceof UpstreamError && job.attempts < MAX_TRANSIENT_ATTEMPTS) throw err;
        deps.logger.warn({ err, stream }, 'could not cancel the upstream task');
      }
      return done;
    }
    if (isTerminal(task.status) || task.upstreamSucceeded) return done;
    const kind = engine.kind(task.kind);
    if (deps.clock().getTime() - Date.parse(task.createdAt) > deps.taskTimeoutMs) {
      await engine.run(stream, { type: 'Fail', error: { code: 'timeout', message: 'the upstream did not finish the task in time' }, now: engine.now() }, causedBy(job));
      return done;
    }
    let outcome;
    try {
      outcome = await kind.poll(task);
    } catch (err) {
      // A task its kind can no longer poll (its model left the catalog) fails for good, at once:
      // retried, it failed the same way until the task timeout, hours later.
      if (err instanceof TaskRejected) {
        await engine.run(stream, { type: 'Fail', error: err.error, now: engine.now() }, causedBy(job));
        return done;
      }
      return failTransient(engine, job, err, 'upstream_unavailable');
    }
    if (outcome.state === 'pending') {
      // The provider handed the work on to a task of its own (the decider drops a repeat).
      if (outcome.upstreamId !== undefined && outcome.upstreamId !== task.upstreamId) {
        await engine.run(stream, { type: 'AcceptUpstream', upstreamId: outcome.upstreamId, now: engine.now() }, causedBy(job));
      }
      // Records a change of the upstream's status or progress (the decider drops a repeat).
      await engine.run(stream, { type: 'Progress', upstreamStatus: outcome.upstreamStatus, progress: outcome.progress ?? null, now: engine.now() }, causedBy(job));
      // The count of polls so far rides in the job's payload, so the backoff grows from poll to
      // poll (and survives a restart): the next poll waits kind.pollDelayMs(polls).
      const polls = pollsOf(job) + 1;
      return { retryAt: new Date(Date.now() + kind.pollDelayMs(polls)), payload: { ...job.payload, polls } };
    }
    if (outcome.state === 'failed') {
      await engine.run(stream, { type: 'Fail', error: outcome.error, now: engine.now() }, causedBy(job));
      return done;
    }
    const { result, usage, artifacts, channels } = outcome;
    await engine.run(
      stream,
      {
        type: 'UpstreamSucceed',
        result,
        usage,
        artifacts,
        succeedNow: kind.succeedsBeforeArchive(task),
        stage: outcome.stage ?? null,
        ...(channels === undefined ? {} : { channels }),
        now: engine.now(),
      },
      causedBy(job),
    );
    return done;
  };
}
