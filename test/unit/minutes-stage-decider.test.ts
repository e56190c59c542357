import { expect } from 'chai';
import { taskDecider, type TaskCommand } from '../../src/tasks/decider';
import type { TaskEvent } from '../../src/tasks/events';
import { DeciderSpecification } from '../support/decider-specification';

/** A stage after the upstream (minutes summaries), as given events / when command / then events. */
const given = DeciderSpecification.for(taskDecider);

const now = '2026-01-01T00:00:00.000Z';

const submitted: TaskEvent[] = [
  {
    type: 'TaskSubmitted',
    data: { taskId: 't1', kind: 'minutes', accountId: 'a1', model: 'service-minutes', request: {}, reservationId: 'r1', estimate: 10, callback: null, idempotencyKey: null, at: now },
  },
  { type: 'TaskUpstreamAccepted', data: { upstreamId: 'u1', at: now } },
];
const upstreamSucceedWithStage: TaskCommand = { type: 'UpstreamSucceed', result: { transcript: 1 }, usage: { duration_ms: 9 }, artifacts: [], succeedNow: true, stage: 'summary', now };
const upstreamSucceededWithStage: TaskEvent = { type: 'TaskUpstreamSucceeded', data: { result: { transcript: 1 }, usage: { duration_ms: 9 }, artifacts: [], stage: 'summary', at: now } };
/** The upstream succeeded; the summary stage is pending. */
const awaitingSummary = [...submitted, upstreamSucceededWithStage];

const stageDone = (outcome: 'succeeded' | 'failed'): Extract<TaskCommand, { type: 'CompleteStage' }> => ({
  type: 'CompleteStage',
  stage: 'summary',
  outcome,
  result: { report: { ok: outcome }, summary_status: outcome },
  usage: { flash_input_tokens: 5 },
  error: outcome === 'failed' ? { code: 'summary_timeout', message: 'late' } : null,
  now,
});
const stageCompleted = (outcome: 'succeeded' | 'failed'): TaskEvent => ({
  type: 'TaskStageCompleted',
  data: {
    stage: 'summary',
    outcome,
    result: { report: { ok: outcome }, summary_status: outcome },
    usage: { flash_input_tokens: 5 },
    error: outcome === 'failed' ? { code: 'summary_timeout', message: 'late' } : null,
    at: now,
  },
});
const step = (n: number): TaskCommand => ({ type: 'RecordStageStep', stage: 'summary', step: n, result: { report: n }, usage: { flash_input_tokens: n }, now });
const stepCompleted = (n: number): TaskEvent => ({ type: 'TaskStageStepCompleted', data: { stage: 'summary', step: n, result: { report: n }, usage: { flash_input_tokens: n }, at: now } });
const succeeded: TaskEvent = { type: 'TaskSucceeded', data: { at: now } };

describe('task decider: a stage after the upstream (minutes summaries)', () => {
  it('keeps a task running after its upstream succeeded with a stage, also once archived', () => {
    given(submitted).when(upstreamSucceedWithStage).then([upstreamSucceededWithStage]);
    const archive = { type: 'RecordArchive' as const, artifacts: [], now };
    given(awaitingSummary).when(archive).then([{ type: 'TaskArtifactsArchived', data: { artifacts: [], at: now } }]);
  });

  it('finishes with the stage; only the first outcome counts', () => {
    given(awaitingSummary).when(stageDone('succeeded')).then([stageCompleted('succeeded'), succeeded]);
    given([...awaitingSummary, stageCompleted('succeeded'), succeeded]).when(stageDone('failed')).thenNothingHappened();
  });

  it('fails with the stage, with the stage\'s error, and a late success is a no-op', () => {
    const failed: TaskEvent = { type: 'TaskFailed', data: { error: { code: 'summary_timeout', message: 'late' }, at: now } };
    given(awaitingSummary).when(stageDone('failed')).then([stageCompleted('failed'), failed]);
    given([...awaitingSummary, stageCompleted('failed'), failed]).when(stageDone('succeeded')).thenNothingHappened();
    // A failure that names no error gets the stage's own code.
    given(awaitingSummary)
      .when({ ...stageDone('failed'), error: null })
      .then([
        { type: 'TaskStageCompleted', data: { stage: 'summary', outcome: 'failed', result: { report: { ok: 'failed' }, summary_status: 'failed' }, usage: { flash_input_tokens: 5 }, error: null, at: now } },
        { type: 'TaskFailed', data: { error: { code: 'summary_failed', message: 'the summary stage failed' }, at: now } },
      ]);
  });

  it('records each step of the pending stage once, until the stage ends, and ignores steps of no pending stage', () => {
    given(submitted).when(step(0)).thenNothingHappened();
    given(awaitingSummary).when(step(0)).then([stepCompleted(0)]);
    given([...awaitingSummary, stepCompleted(0)]).when(step(0)).thenNothingHappened();
    given([...awaitingSummary, stepCompleted(0)]).when(step(1)).then([stepCompleted(1)]);
    // Steps do not finish the task: the stage's completion still does.
    given([...awaitingSummary, stepCompleted(0), stepCompleted(1)]).when(stageDone('succeeded')).then([stageCompleted('succeeded'), succeeded]);
    given([...awaitingSummary, stepCompleted(0), stepCompleted(1), stageCompleted('succeeded'), succeeded]).when(step(2)).thenNothingHappened();
  });

  it('ignores a stage that is not pending, and leaves tasks without stages as they were', () => {
    given(submitted).when(stageDone('succeeded')).thenNothingHappened();
    given(submitted)
      .when({ type: 'UpstreamSucceed', result: {}, usage: {}, artifacts: [], succeedNow: true, now })
      .then([{ type: 'TaskUpstreamSucceeded', data: { result: {}, usage: {}, artifacts: [], at: now } }, succeeded]);
  });

  describe('the state (what the stage leaves for its reader; no event shows it)', () => {
    const fold = (events: TaskEvent[]) => events.reduce(taskDecider.evolve, taskDecider.initialState());

    it('merges the stage\'s result and usage into the upstream\'s, keeping what the upstream produced on failure', () => {
      expect(fold([...awaitingSummary, stageCompleted('succeeded'), succeeded])).to.deep.include({
        status: 'succeeded',
        pendingStage: null,
        result: { transcript: 1, report: { ok: 'succeeded' }, summary_status: 'succeeded' },
        usage: { duration_ms: 9, flash_input_tokens: 5 },
      });
      const failed = fold([...awaitingSummary, stageCompleted('failed'), { type: 'TaskFailed', data: { error: { code: 'summary_timeout', message: 'late' }, at: now } }]);
      expect(failed).to.include({ status: 'failed', upstreamSucceeded: true });
      expect(failed.result).to.deep.include({ transcript: 1 });
    });

    it('keeps the recorded steps, for a restart to resume after them, until the stage ends', () => {
      expect(fold([...awaitingSummary, stepCompleted(0), stepCompleted(1)]).stageSteps).to.deep.equal([
        { step: 0, result: { report: 0 }, usage: { flash_input_tokens: 0 } },
        { step: 1, result: { report: 1 }, usage: { flash_input_tokens: 1 } },
      ]);
      expect(fold([...awaitingSummary, stepCompleted(0), stageCompleted('succeeded'), succeeded]).stageSteps).to.deep.equal([]);
    });
  });
});
