import { causedBy, done, failTransient, streamOf, type TaskJobEngine, type TaskJobHandler } from './common';

/** Submits a recorded task to its provider (a no-op once submitted or finished; see TaskEngine.submitOnce). */
export function submitJob(engine: TaskJobEngine): TaskJobHandler {
  return async (job) => {
    try {
      await engine.submitOnce(streamOf(job), causedBy(job));
    } catch (err) {
      return failTransient(engine, job, err, 'upstream_unavailable');
    }
    return done;
  };
}
