import { expect } from 'chai';
import { taskDecider, type TaskCommand, type TaskState } from '../../src/tasks/decider';
import type { TaskEvent } from '../../src/tasks/events';

const now = '2026-01-01T00:00:00.000Z';

function run(state: TaskState, command: TaskCommand): { state: TaskState; events: TaskEvent[] } {
  const events = taskDecider.decide(command, state);
  return { state: events.reduce(taskDecider.evolve, state), events };
}

function submitted(): TaskState {
  let s = taskDecider.initialState();
  s = run(s, {
    type: 'Submit',
    data: { taskId: 't1', kind: 'minutes', accountId: 'a1', model: 'service-minutes', request: {}, reservationId: 'r1', estimate: 10, callback: null, idempotencyKey: null, at: now },
  }).state;
  return run(s, { type: 'AcceptUpstream', upstreamId: 'u1', now }).state;
}

const stageDone = (outcome: 'succeeded' | 'failed'): TaskCommand => ({
  type: 'CompleteStage',
  stage: 'summary',
  outcome,
  result: { report: { ok: outcome }, summary_status: outcome },
  usage: { flash_input_tokens: 5 },
  error: outcome === 'failed' ? { code: 'summary_timeout', message: 'late' } : null,
  now,
});

describe('task decider: a stage after the upstream (minutes summaries)', () => {
  it('keeps a task running after its upstream succeeded with a stage, also once archived', () => {
    let s = submitted();
    const up = run(s, { type: 'UpstreamSucceed', result: { transcript: 1 }, usage: { duration_ms: 9 }, artifacts: [], succeedNow: true, stage: 'summary', now });
    expect(up.events.map((e) => e.type)).to.deep.equal(['TaskUpstreamSucceeded']);
    s = up.state;
    expect(s).to.include({ status: 'running', pendingStage: 'summary' });
    const archived = run(s, { type: 'RecordArchive', artifacts: [], now });
    expect(archived.events.map((e) => e.type)).to.deep.equal(['TaskArtifactsArchived']);
    expect(archived.state.status).to.equal('running');
  });

  it('finishes with the stage, merging its result and usage; only the first outcome counts', () => {
    let s = run(submitted(), { type: 'UpstreamSucceed', result: { transcript: 1 }, usage: { duration_ms: 9 }, artifacts: [], succeedNow: true, stage: 'summary', now }).state;
    const done = run(s, stageDone('succeeded'));
    expect(done.events.map((e) => e.type)).to.deep.equal(['TaskStageCompleted', 'TaskSucceeded']);
    s = done.state;
    expect(s).to.include({ status: 'succeeded', pendingStage: null });
    expect(s.result).to.deep.equal({ transcript: 1, report: { ok: 'succeeded' }, summary_status: 'succeeded' });
    expect(s.usage).to.deep.equal({ duration_ms: 9, flash_input_tokens: 5 });
    expect(run(s, stageDone('failed')).events, 'a late timeout is a no-op').to.deep.equal([]);
  });

  it('records each step of the pending stage once, keeps them until the stage ends, and ignores steps of no pending stage', () => {
    const step = (n: number): TaskCommand => ({ type: 'RecordStageStep', stage: 'summary', step: n, result: { report: n }, usage: { flash_input_tokens: n }, now });
    expect(run(submitted(), step(0)).events, 'no stage pending yet').to.deep.equal([]);
    let s = run(submitted(), { type: 'UpstreamSucceed', result: { transcript: 1 }, usage: { duration_ms: 9 }, artifacts: [], succeedNow: true, stage: 'summary', now }).state;
    const first = run(s, step(0));
    expect(first.events.map((e) => e.type)).to.deep.equal(['TaskStageStepCompleted']);
    s = first.state;
    expect(run(s, step(0)).events, 'a step recorded again (a retried part) is a no-op').to.deep.equal([]);
    s = run(s, step(1)).state;
    expect(s.stageSteps).to.deep.equal([
      { step: 0, result: { report: 0 }, usage: { flash_input_tokens: 0 } },
      { step: 1, result: { report: 1 }, usage: { flash_input_tokens: 1 } },
    ]);
    expect(s.status, 'steps do not finish the task').to.equal('running');
    s = run(s, stageDone('succeeded')).state;
    expect(s.stageSteps).to.deep.equal([]);
    expect(run(s, step(2)).events, 'the stage is over').to.deep.equal([]);
  });

  it('fails with the stage, keeping what the upstream produced', () => {
    const s = run(submitted(), { type: 'UpstreamSucceed', result: { transcript: 1 }, usage: { duration_ms: 9 }, artifacts: [], succeedNow: true, stage: 'summary', now }).state;
    const failed = run(s, stageDone('failed'));
    expect(failed.events.map((e) => e.type)).to.deep.equal(['TaskStageCompleted', 'TaskFailed']);
    expect(failed.state).to.include({ status: 'failed', upstreamSucceeded: true });
    expect(failed.state.error).to.deep.equal({ code: 'summary_timeout', message: 'late' });
    expect(failed.state.result).to.deep.include({ transcript: 1 });
    expect(run(failed.state, stageDone('succeeded')).events).to.deep.equal([]);
  });

  it('ignores a stage that is not pending, and leaves tasks without stages as they were', () => {
    const s = submitted();
    expect(run(s, stageDone('succeeded')).events).to.deep.equal([]);
    const plain = run(s, { type: 'UpstreamSucceed', result: {}, usage: {}, artifacts: [], succeedNow: true, now });
    expect(plain.events.map((e) => e.type)).to.deep.equal(['TaskUpstreamSucceeded', 'TaskSucceeded']);
  });
});
