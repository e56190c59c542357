import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config';
import { DomainError } from '../../src/domain/decider';
import { finishedDeliveryId, MAX_WEBHOOK_ATTEMPTS, taskDecider, type TaskCommand, type TaskState } from '../../src/tasks/decider';
import type { TaskEvent } from '../../src/tasks/events';

/** The task decider on its own: no database, no clock (time comes in the commands). */

const now = '2026-01-01T00:00:00.000Z';

function run(state: TaskState, command: TaskCommand): { state: TaskState; events: TaskEvent[] } {
  const events = taskDecider.decide(command, state);
  return { state: events.reduce(taskDecider.evolve, state), events };
}

function runAll(state: TaskState, commands: TaskCommand[]): TaskState {
  return commands.reduce((s, c) => run(s, c).state, state);
}

function refused(command: TaskCommand, state: TaskState): string {
  try {
    taskDecider.decide(command, state);
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return (err as DomainError).code;
  }
  throw new Error('command was accepted');
}

/** A video task accepted by its upstream, with a callback when asked. */
function accepted(callback = false): TaskState {
  return runAll(taskDecider.initialState(), [
    {
      type: 'Submit',
      data: {
        taskId: 'vid_1',
        kind: 'video',
        accountId: 'acc_1',
        model: 'video-ref-2.0',
        request: {},
        reservationId: 'res_1',
        estimate: 100,
        callback: callback ? { url: 'https://hooks.example/cb', signed: true } : null,
        idempotencyKey: null,
        at: now,
      },
    },
    { type: 'AcceptUpstream', upstreamId: 'up_1', now },
  ]);
}

const progress = (upstreamStatus: string, value: number | null = null): TaskCommand => ({ type: 'Progress', upstreamStatus, progress: value, now });
const succeedUpstream: TaskCommand = { type: 'UpstreamSucceed', result: { url: 'x' }, usage: { duration_seconds: 5 }, artifacts: [], succeedNow: true, now };
const attempt = (n: number, ok: boolean, deliveryId = finishedDeliveryId('vid_1')): TaskCommand => ({
  type: 'RecordAttempt',
  deliveryId,
  attempt: n,
  ok,
  statusCode: ok ? 200 : 500,
  error: ok ? null : 'HTTP 500',
  durationMs: 3,
  now,
});
const types = (events: TaskEvent[]) => events.map((e) => e.type);

describe('task decider', () => {
  describe('upstream acceptance', () => {
    it('records the details the acceptance tells the client (a verification URL), and none when there are none', () => {
      const submitted = runAll(taskDecider.initialState(), [{ type: 'Submit', data: { taskId: 'avs_1', kind: 'asset_session', accountId: 'acc_1', model: 'asset-verification', request: {}, reservationId: 'res_1', estimate: 100, callback: null, idempotencyKey: null, at: now } }]);
      const withDetails = run(submitted, { type: 'AcceptUpstream', upstreamId: 'up_1', details: { verification_url: 'https://verify.example/t' }, now });
      expect(withDetails.events).to.deep.equal([{ type: 'TaskUpstreamAccepted', data: { upstreamId: 'up_1', details: { verification_url: 'https://verify.example/t' }, at: now } }]);
      expect(withDetails.state.upstreamId).to.equal('up_1');
      expect(run(submitted, { type: 'AcceptUpstream', upstreamId: 'up_1', now }).events).to.deep.equal([{ type: 'TaskUpstreamAccepted', data: { upstreamId: 'up_1', at: now } }]);
      expect(run(withDetails.state, { type: 'AcceptUpstream', upstreamId: 'up_1', details: { verification_url: 'https://verify.example/t' }, now }).events).to.deep.equal([]);
    });
  });

  describe('progress reports', () => {
    it('records the first report of the upstream', () => {
      const { events, state } = run(accepted(), progress('queued'));
      expect(events).to.deep.equal([{ type: 'TaskProgressed', data: { upstreamStatus: 'queued', progress: null, at: now } }]);
      expect(state).to.include({ status: 'queued', upstreamStatus: 'queued', progress: null });
    });

    it('records nothing when a poll reports the same status and progress again', () => {
      let state = run(accepted(), progress('running', 0.25)).state;
      for (let i = 0; i < 5; i++) {
        const again = run(state, progress('running', 0.25));
        expect(again.events, `repeat ${i + 1}`).to.deep.equal([]);
        state = again.state;
      }
      expect(state).to.include({ status: 'running', upstreamStatus: 'running', progress: 0.25 });
    });

    it('records one event when the status changes', () => {
      const state = run(accepted(), progress('queued')).state;
      const { events, state: next } = run(state, progress('running'));
      expect(events).to.deep.equal([{ type: 'TaskProgressed', data: { upstreamStatus: 'running', progress: null, at: now } }]);
      expect(next).to.include({ status: 'running', upstreamStatus: 'running' });
    });

    it('records one event when only the progress changes', () => {
      const state = run(accepted(), progress('running', 0.25)).state;
      const { events, state: next } = run(state, progress('running', 0.5));
      expect(types(events)).to.deep.equal(['TaskProgressed']);
      expect(events[0]!.data).to.include({ upstreamStatus: 'running', progress: 0.5 });
      expect(next.progress).to.equal(0.5);
      expect(run(next, progress('running', null)).events, 'progress going back to unknown is a change too').to.have.length(1);
    });

    it('a task never goes back from running to queued', () => {
      const state = runAll(accepted(), [progress('running'), progress('queued')]);
      expect(state).to.include({ status: 'running', upstreamStatus: 'queued' });
    });

    it('records no progress once the upstream succeeded or the task finished', () => {
      const up = run(accepted(), { ...succeedUpstream, succeedNow: false });
      expect(up.state.upstreamStatus).to.equal('succeeded');
      expect(run(up.state, progress('running', 0.9)).events).to.deep.equal([]);
      const failed = run(accepted(), { type: 'Fail', error: { code: 'timeout', message: 'late' }, now }).state;
      expect(run(failed, progress('running')).events).to.deep.equal([]);
    });
  });

  describe('billing', () => {
    it('refuses to bill a task that has not finished', () => {
      expect(refused({ type: 'RecordBilling', outcome: 'settled', amount: 100, now }, accepted())).to.equal('task_not_finished');
    });

    it('bills a finished task once: a second settle or release is a no-op', () => {
      const succeeded = run(accepted(), succeedUpstream).state;
      expect(succeeded.status).to.equal('succeeded');
      const billed = run(succeeded, { type: 'RecordBilling', outcome: 'settled', amount: 80, now });
      expect(billed.events).to.deep.equal([{ type: 'TaskBilled', data: { reservationId: 'res_1', outcome: 'settled', amount: 80, at: now } }]);
      expect(billed.state.billed).to.equal(true);
      expect(run(billed.state, { type: 'RecordBilling', outcome: 'settled', amount: 80, now }).events, 'the same settlement again').to.deep.equal([]);
      expect(run(billed.state, { type: 'RecordBilling', outcome: 'released', amount: 0, now }).events, 'a release after the settlement').to.deep.equal([]);
    });

    it('succeeds once: a second upstream success is a no-op', () => {
      const succeeded = run(accepted(), succeedUpstream);
      expect(types(succeeded.events)).to.deep.equal(['TaskUpstreamSucceeded', 'TaskSucceeded']);
      expect(run(succeeded.state, succeedUpstream).events).to.deep.equal([]);
      expect(run(succeeded.state, { type: 'Fail', error: { code: 'late', message: 'late' }, now }).events).to.deep.equal([]);
    });
  });

  describe('webhook deliveries', () => {
    const finished = () => run(accepted(true), succeedUpstream);

    it('requests the callback of a task that finishes with one', () => {
      const { events } = finished();
      expect(types(events)).to.deep.equal(['TaskUpstreamSucceeded', 'TaskSucceeded', 'WebhookDeliveryRequested']);
      expect(events[2]!.data).to.include({ deliveryId: finishedDeliveryId('vid_1'), reason: 'finished' });
    });

    it('drops a delivery after its last failed attempt, and records nothing after that', () => {
      let state = finished().state;
      for (let n = 1; n < MAX_WEBHOOK_ATTEMPTS; n++) {
        const failed = run(state, attempt(n, false));
        expect(types(failed.events), `attempt ${n}`).to.deep.equal(['WebhookAttempted']);
        state = failed.state;
      }
      expect(state.deliveries[finishedDeliveryId('vid_1')]).to.deep.equal({ attempts: MAX_WEBHOOK_ATTEMPTS - 1, state: 'pending' });
      const last = run(state, attempt(MAX_WEBHOOK_ATTEMPTS, false));
      expect(types(last.events)).to.deep.equal(['WebhookAttempted', 'WebhookDropped']);
      expect(last.events[1]!.data).to.include({ deliveryId: finishedDeliveryId('vid_1'), attempts: MAX_WEBHOOK_ATTEMPTS });
      expect(last.state.deliveries[finishedDeliveryId('vid_1')]).to.deep.equal({ attempts: MAX_WEBHOOK_ATTEMPTS, state: 'dropped' });
      expect(run(last.state, attempt(MAX_WEBHOOK_ATTEMPTS + 1, true)).events, 'an attempt after the drop').to.deep.equal([]);
    });

    it('delivers on a 2xx and ignores a repeat of an attempt already recorded', () => {
      let state = finished().state;
      state = run(state, attempt(1, false)).state;
      expect(run(state, attempt(1, true)).events, 'attempt 1 again (a worker that crashed after sending)').to.deep.equal([]);
      expect(run(state, attempt(3, true)).events, 'an attempt out of order').to.deep.equal([]);
      const ok = run(state, attempt(2, true));
      expect(types(ok.events)).to.deep.equal(['WebhookAttempted']);
      expect(ok.state.deliveries[finishedDeliveryId('vid_1')]).to.deep.equal({ attempts: 2, state: 'delivered' });
      expect(run(ok.state, attempt(3, false)).events, 'an attempt after the delivery').to.deep.equal([]);
    });

    it('redelivers a finished task as a new delivery, once per delivery id', () => {
      const state = finished().state;
      const redeliver: TaskCommand = { type: 'RequestRedelivery', deliveryId: 'dlv_vid_1_1', now };
      const first = run(state, redeliver);
      expect(types(first.events)).to.deep.equal(['WebhookDeliveryRequested']);
      expect(run(first.state, redeliver).events).to.deep.equal([]);
      expect(refused(redeliver, accepted(true))).to.equal('task_not_finished');
      expect(refused(redeliver, run(accepted(false), succeedUpstream).state)).to.equal('no_callback');
    });
  });
});

describe('task engine configuration: the job lease outlasts a webhook attempt', () => {
  const refusal = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('the configuration was accepted');
  };

  it('accepts the defaults', () => {
    const config = loadConfig({});
    expect(config.jobLeaseMs).to.be.greaterThan(config.webhookTimeoutMs);
  });

  it('refuses a lease shorter than, equal to, or barely above the webhook timeout', () => {
    expect(refusal({ JOB_LEASE_MS: '5000' })).to.match(/JOB_LEASE_MS \(5000\) must exceed WEBHOOK_TIMEOUT_MS \(10000\)/);
    expect(refusal({ JOB_LEASE_MS: '10000' })).to.match(/at least 15000/);
    expect(refusal({ JOB_LEASE_MS: '10001' })).to.match(/sent again/);
    expect(refusal({ WEBHOOK_TIMEOUT_MS: '200000' }), 'a long webhook timeout with the default lease').to.match(/JOB_LEASE_MS \(120000\)/);
    expect(refusal({ JOB_LEASE_MS: '1400', WEBHOOK_TIMEOUT_MS: '1000' })).to.match(/at least 1500/);
  });

  it('accepts a lease that exceeds the webhook timeout by the margin', () => {
    expect(loadConfig({ JOB_LEASE_MS: '15000' }).jobLeaseMs).to.equal(15_000);
    expect(loadConfig({ JOB_LEASE_MS: '1500', WEBHOOK_TIMEOUT_MS: '1000' }).jobLeaseMs).to.equal(1500);
    expect(loadConfig({ JOB_LEASE_MS: '1000', WEBHOOK_TIMEOUT_MS: '300' }).jobLeaseMs).to.equal(1000);
  });
});
