import { scheduleJob } from '../jobs/queue';
import type { Consumer } from '../projections-runtime/consumer';
import { defineConsumer } from '../projections-runtime/define';
import { TASK_EVENT_TYPES, type TaskEvent } from './events';

export const JOB = {
  submit: 'task.submit',
  poll: 'task.poll',
  archive: 'task.archive',
  bill: 'task.bill',
  webhook: 'webhook.attempt',
} as const;

/**
 * Turns task events into due jobs, in the transaction that advances its checkpoint: every job
 * exists exactly when the event that causes it has been folded, and survives any restart. Due
 * times derive from event times, so a replay schedules the same timers.
 */
export function taskProcessManager(settings: { taskPollMs: number; webhookRetryDelaysMs: readonly number[] }): Consumer {
  return defineConsumer<TaskEvent>()({
    name: 'task-process-manager',
    handles: TASK_EVENT_TYPES,
    async apply(tx, event) {
      const stream = event.streamId;
      const at = new Date(event.data.at);
      switch (event.type) {
        case 'TaskSubmitted':
          return scheduleJob(tx, JOB.submit, stream, { stream }, event.data.submitAt ? new Date(event.data.submitAt) : at);
        case 'TaskUpstreamAccepted':
          return scheduleJob(tx, JOB.poll, stream, { stream, polls: 0 }, new Date(at.getTime() + settings.taskPollMs));
        case 'TaskUpstreamSucceeded':
          return scheduleJob(tx, JOB.archive, stream, { stream }, at);
        case 'TaskSucceeded':
        case 'TaskFailed':
        case 'TaskCancelled':
          return scheduleJob(tx, JOB.bill, stream, { stream }, at);
        case 'WebhookDeliveryRequested':
          return scheduleJob(tx, JOB.webhook, `${stream}:${event.data.deliveryId}:1`, { stream, deliveryId: event.data.deliveryId, attempt: 1 }, at);
        case 'WebhookAttempted': {
          const { ok, attempt, deliveryId } = event.data;
          const delay = settings.webhookRetryDelaysMs[attempt - 1];
          if (ok || delay === undefined) return;
          return scheduleJob(tx, JOB.webhook, `${stream}:${deliveryId}:${attempt + 1}`, { stream, deliveryId, attempt: attempt + 1 }, new Date(at.getTime() + delay));
        }
        default:
          return;
      }
    },
  });
}
