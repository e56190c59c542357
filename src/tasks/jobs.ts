import { archiveJob } from './job-handlers/archive';
import { billJob } from './job-handlers/bill';
import type { TaskJobDeps, TaskJobEngine, TaskJobHandler } from './job-handlers/common';
import { pollJob } from './job-handlers/poll';
import { submitJob } from './job-handlers/submit';
import { webhookJob } from './job-handlers/webhook';
import { JOB } from './process-manager';

export type { TaskJobDeps, TaskJobEngine } from './job-handlers/common';

/**
 * The side effects of the task engine, one handler per job kind (each in its own module under
 * job-handlers/). Each loads the task, does nothing if its effect is already recorded (so a re-run
 * after a crash is harmless), performs the effect and records the outcome as an event.
 */
export function taskJobHandlers(engine: TaskJobEngine, deps: TaskJobDeps): Record<string, TaskJobHandler> {
  return {
    [JOB.submit]: submitJob(engine),
    [JOB.poll]: pollJob(engine, deps),
    [JOB.archive]: archiveJob(engine, deps),
    [JOB.bill]: billJob(engine, deps),
    [JOB.webhook]: webhookJob(engine, deps),
  };
}
