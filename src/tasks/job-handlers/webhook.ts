import { causedBy, done, streamOf, type TaskJobDeps, type TaskJobEngine, type TaskJobHandler } from './common';

/** One attempt of one webhook delivery of a finished task, signed with the account's secret in force now; records the attempt. */
export function webhookJob(engine: TaskJobEngine, deps: Pick<TaskJobDeps, 'accounts' | 'signer' | 'webhooks'>): TaskJobHandler {
  return async (job) => {
    const stream = streamOf(job);
    const deliveryId = String(job.payload.deliveryId);
    const attempt = Number(job.payload.attempt);
    const task = await engine.load(stream);
    const delivery = task.deliveries[deliveryId];
    if (!task.callback || !delivery || delivery.state !== 'pending' || delivery.attempts >= attempt) return done;
    const kind = engine.kind(task.kind);
    const body = JSON.stringify({
      task_id: task.taskId,
      status: task.status,
      model: task.model,
      ...(task.status === 'succeeded' ? kind.webhookFields(task, deps.signer) : { error: task.error ?? { code: 'task_failed', message: 'the task failed' } }),
      created_at: task.createdAt,
      finished_at: task.finishedAt,
    });
    // The secret in force now: a rotation applies to the very next attempt.
    const secret = task.callback.signed ? await deps.accounts.webhookSecret(task.accountId) : null;
    const result = await deps.webhooks.send(task.callback.url, body, secret);
    await engine.run(stream, { type: 'RecordAttempt', deliveryId, attempt, ...result, now: engine.now() }, causedBy(job));
    return done;
  };
}
