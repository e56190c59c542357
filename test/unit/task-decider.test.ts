import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config';
import { finishedDeliveryId, MAX_WEBHOOK_ATTEMPTS, taskDecider, type TaskCommand } from '../../src/tasks/decider';
import type { TaskEvent } from '../../src/tasks/events';
import { DeciderSpecification } from '../support/decider-specification';

/** The task decider as given events / when command / then events: no database, no clock (time comes in the commands). */
const given = DeciderSpecification.for(taskDecider);

const now = '2026-01-01T00:00:00.000Z';
const delivery = finishedDeliveryId('vid_1');

// Events.
const submittedData = (callback: boolean) => ({
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
});
const submitted = (callback = false): TaskEvent => ({ type: 'TaskSubmitted', data: submittedData(callback) });
const upstreamAccepted: TaskEvent = { type: 'TaskUpstreamAccepted', data: { upstreamId: 'up_1', at: now } };
/** A video task accepted by its upstream, with a callback when asked. */
const accepted = (callback = false): TaskEvent[] => [submitted(callback), upstreamAccepted];
const progressed = (upstreamStatus: string, progress: number | null = null): TaskEvent => ({ type: 'TaskProgressed', data: { upstreamStatus, progress, at: now } });
const upstreamSucceeded: TaskEvent = { type: 'TaskUpstreamSucceeded', data: { result: { url: 'x' }, usage: { duration_seconds: 5 }, artifacts: [], at: now } };
const succeeded: TaskEvent = { type: 'TaskSucceeded', data: { at: now } };
const failed = (code: string): TaskEvent => ({ type: 'TaskFailed', data: { error: { code, message: 'late' }, at: now } });
const deliveryRequested = (deliveryId = delivery, reason: 'finished' | 'redeliver' = 'finished'): TaskEvent => ({ type: 'WebhookDeliveryRequested', data: { deliveryId, reason, at: now } });
const attempted = (n: number, ok: boolean): TaskEvent => ({
  type: 'WebhookAttempted',
  data: { deliveryId: delivery, attempt: n, ok, statusCode: ok ? 200 : 500, error: ok ? null : 'HTTP 500', durationMs: 3, at: now },
});
/** A task with a callback that succeeded and asked for its delivery. */
const finishedWithCallback: TaskEvent[] = [...accepted(true), upstreamSucceeded, succeeded, deliveryRequested()];

// Commands.
const progress = (upstreamStatus: string, value: number | null = null): TaskCommand => ({ type: 'Progress', upstreamStatus, progress: value, now });
const succeedUpstream: TaskCommand = { type: 'UpstreamSucceed', result: { url: 'x' }, usage: { duration_seconds: 5 }, artifacts: [], succeedNow: true, now };
const fail = (code: string): TaskCommand => ({ type: 'Fail', error: { code, message: 'late' }, now });
const attempt = (n: number, ok: boolean): Extract<TaskCommand, { type: 'RecordAttempt' }> => ({
  type: 'RecordAttempt',
  deliveryId: delivery,
  attempt: n,
  ok,
  statusCode: ok ? 200 : 500,
  error: ok ? null : 'HTTP 500',
  durationMs: 3,
  now,
});

describe('task decider', () => {
  describe('submission', () => {
    it('records a submission once, and nothing on a task that was never submitted', () => {
      given([]).when({ type: 'Submit', data: submittedData(false) }).then([submitted()]);
      given([submitted()]).when({ type: 'Submit', data: submittedData(false) }).thenThrows('task_exists');
      given([]).when(progress('queued')).thenThrows('task_not_found');
    });
  });

  describe('upstream acceptance', () => {
    it('records the details the acceptance tells the client (a verification URL), and none when there are none', () => {
      const details = { verification_url: 'https://verify.example/t' };
      given([submitted()]).when({ type: 'AcceptUpstream', upstreamId: 'up_1', details, now }).then([{ type: 'TaskUpstreamAccepted', data: { upstreamId: 'up_1', details, at: now } }]);
      given([submitted()]).when({ type: 'AcceptUpstream', upstreamId: 'up_1', now }).then([upstreamAccepted]);
      given([submitted(), { type: 'TaskUpstreamAccepted', data: { upstreamId: 'up_1', details, at: now } }])
        .when({ type: 'AcceptUpstream', upstreamId: 'up_1', details, now })
        .thenNothingHappened();
    });

    it('records the upstream id of a task cancelled while its submission was in flight, and of no other finished task', () => {
      const cancelled: TaskEvent = { type: 'TaskCancelled', data: { reason: 'client', at: now } };
      given([submitted(), cancelled]).when({ type: 'AcceptUpstream', upstreamId: 'up_1', now }).then([upstreamAccepted]);
      given([submitted(), failed('boom')]).when({ type: 'AcceptUpstream', upstreamId: 'up_1', now }).thenNothingHappened();
    });
  });

  describe('progress reports', () => {
    it('records the first report of the upstream', () => {
      given(accepted()).when(progress('queued')).then([progressed('queued')]);
    });

    it('records nothing when a poll reports the same status and progress again', () => {
      // However often it is polled, the stream keeps the one report.
      given([...accepted(), progressed('running', 0.25)]).when(progress('running', 0.25)).thenNothingHappened();
      given([...accepted(), progressed('queued')]).when(progress('queued')).thenNothingHappened();
    });

    it('records one event when the status changes', () => {
      given([...accepted(), progressed('queued')]).when(progress('running')).then([progressed('running')]);
    });

    it('records one event when only the progress changes, going back to unknown included', () => {
      given([...accepted(), progressed('running', 0.25)]).when(progress('running', 0.5)).then([progressed('running', 0.5)]);
      given([...accepted(), progressed('running', 0.25), progressed('running', 0.5)]).when(progress('running', null)).then([progressed('running', null)]);
    });

    it('records no progress once the upstream succeeded or the task finished', () => {
      given([...accepted(), upstreamSucceeded]).when(progress('running', 0.9)).thenNothingHappened();
      given([...accepted(), failed('timeout')]).when(progress('running')).thenNothingHappened();
    });
  });

  describe('outcomes', () => {
    it('succeeds with the upstream when nothing else is awaited', () => {
      given(accepted()).when(succeedUpstream).then([upstreamSucceeded, succeeded]);
      given(accepted()).when({ ...succeedUpstream, succeedNow: false }).then([upstreamSucceeded]);
    });

    it('succeeds once: a second upstream success or a late failure is a no-op', () => {
      given([...accepted(), upstreamSucceeded, succeeded]).when(succeedUpstream).thenNothingHappened();
      given([...accepted(), upstreamSucceeded, succeeded]).when(fail('late')).thenNothingHappened();
    });

    it('succeeds with its archive when it waited for one (video_url_mode tos), and archives once', () => {
      const archive = [{ name: 'video', key: 'k', bytes: 1, sha256: 's', contentType: 'video/mp4' }];
      const archived: TaskEvent = { type: 'TaskArtifactsArchived', data: { artifacts: archive, at: now } };
      given([...accepted(), upstreamSucceeded]).when({ type: 'RecordArchive', artifacts: archive, now }).then([archived, succeeded]);
      given([...accepted(), upstreamSucceeded, succeeded]).when({ type: 'RecordArchive', artifacts: archive, now }).then([archived]);
      given([...accepted(), upstreamSucceeded, archived, succeeded]).when({ type: 'RecordArchive', artifacts: archive, now }).thenNothingHappened();
      given(accepted()).when({ type: 'RecordArchive', artifacts: archive, now }).thenNothingHappened();
      given([...accepted(), upstreamSucceeded, archived]).when({ type: 'RecordArchiveFailure', message: 'gone', now }).thenNothingHappened();
      given([...accepted(), upstreamSucceeded]).when({ type: 'RecordArchiveFailure', message: 'gone', now }).then([{ type: 'TaskArchiveFailed', data: { message: 'gone', at: now } }]);
    });

    it('cancels an unfinished task and refuses to cancel a finished one', () => {
      given(accepted()).when({ type: 'Cancel', reason: 'client', now }).then([{ type: 'TaskCancelled', data: { reason: 'client', at: now } }]);
      given([...accepted(), upstreamSucceeded, succeeded]).when({ type: 'Cancel', reason: 'client', now }).thenThrows('task_finished');
      // Done at the provider, its files still being archived: finished as far as cancelling goes.
      given([...accepted(), upstreamSucceeded]).when({ type: 'Cancel', reason: 'client', now }).thenThrows('task_finished');
    });
  });

  describe('billing', () => {
    it('refuses to bill a task that has not finished', () => {
      given(accepted()).when({ type: 'RecordBilling', outcome: 'settled', amount: 100, now }).thenThrows('task_not_finished');
    });

    it('bills a finished task once: a second settle or release is a no-op', () => {
      const done = [...accepted(), upstreamSucceeded, succeeded];
      const billed: TaskEvent = { type: 'TaskBilled', data: { reservationId: 'res_1', outcome: 'settled', amount: 80, at: now } };
      given(done).when({ type: 'RecordBilling', outcome: 'settled', amount: 80, now }).then([billed]);
      given([...done, billed]).when({ type: 'RecordBilling', outcome: 'settled', amount: 80, now }).thenNothingHappened();
      given([...done, billed]).when({ type: 'RecordBilling', outcome: 'released', amount: 0, now }).thenNothingHappened();
    });
  });

  describe('the channels that served', () => {
    const fold = (events: TaskEvent[]) => events.reduce(taskDecider.evolve, taskDecider.initialState());
    const step = (n: number, channels?: string[]): TaskEvent => ({
      type: 'TaskStageStepCompleted',
      data: { stage: 'summary', step: n, result: {}, usage: {}, ...(channels ? { channels } : {}), at: now },
    });

    it('records the channels that made a result at poll time on the upstream success, and none when there are none', () => {
      const made = { type: 'UpstreamSucceed' as const, result: {}, usage: {}, artifacts: [], succeedNow: false, now };
      given([submitted()]).when({ ...made, channels: ['images-second'] }).then([{ type: 'TaskUpstreamSucceeded', data: { result: {}, usage: {}, artifacts: [], channels: ['images-second'], at: now } }]);
      given([submitted()]).when({ ...made, channels: [] }).then([{ type: 'TaskUpstreamSucceeded', data: { result: {}, usage: {}, artifacts: [], at: now } }]);
    });

    it('records the channels of a stage step', () => {
      const stageAwaited: TaskEvent = { type: 'TaskUpstreamSucceeded', data: { result: {}, usage: {}, artifacts: [], stage: 'summary', at: now } };
      given([...accepted(), stageAwaited])
        .when({ type: 'RecordStageStep', stage: 'summary', step: 0, result: {}, usage: {}, channels: ['chat-a'], now })
        .then([step(0, ['chat-a'])]);
    });

    it('folds every channel that served, in order of first use: the one that accepted the task, then its steps and stage', () => {
      const acceptedOn: TaskEvent = { type: 'TaskUpstreamAccepted', data: { upstreamId: 'up_1', channel: 'asr-b', at: now } };
      const stageAwaited: TaskEvent = { type: 'TaskUpstreamSucceeded', data: { result: {}, usage: {}, artifacts: [], stage: 'summary', at: now } };
      const completed: TaskEvent = {
        type: 'TaskStageCompleted',
        data: { stage: 'summary', outcome: 'failed', result: {}, usage: {}, error: null, channels: ['chat-b'], at: now },
      };
      const state = fold([submitted(), acceptedOn, stageAwaited, step(0, ['chat-a']), step(1, ['chat-a']), completed]);
      expect([state.upstreamChannel, state.servedBy]).to.deep.equal(['asr-b', ['asr-b', 'chat-a', 'chat-b']]);
      expect(fold(accepted()).servedBy, 'a task recorded before channels were').to.deep.equal([]);
    });
  });

  describe('webhook deliveries', () => {
    it('requests the callback of a task that finishes with one, successfully or not', () => {
      given(accepted(true)).when(succeedUpstream).then([upstreamSucceeded, succeeded, deliveryRequested()]);
      given(accepted(true)).when(fail('boom')).then([failed('boom'), deliveryRequested()]);
      given(accepted(false)).when(fail('boom')).then([failed('boom')]);
    });

    it('drops a delivery after its last failed attempt, and records nothing after that', () => {
      const failedAttempts = (count: number) => Array.from({ length: count }, (_, i) => attempted(i + 1, false));
      for (let n = 1; n < MAX_WEBHOOK_ATTEMPTS; n++) given([...finishedWithCallback, ...failedAttempts(n - 1)]).when(attempt(n, false)).then([attempted(n, false)]);
      const beforeLast = [...finishedWithCallback, ...failedAttempts(MAX_WEBHOOK_ATTEMPTS - 1)];
      given(beforeLast)
        .when(attempt(MAX_WEBHOOK_ATTEMPTS, false))
        .then([attempted(MAX_WEBHOOK_ATTEMPTS, false), { type: 'WebhookDropped', data: { deliveryId: delivery, attempts: MAX_WEBHOOK_ATTEMPTS, at: now } }]);
      const droppedEvent: TaskEvent = { type: 'WebhookDropped', data: { deliveryId: delivery, attempts: MAX_WEBHOOK_ATTEMPTS, at: now } };
      const dropped = [...beforeLast, attempted(MAX_WEBHOOK_ATTEMPTS, false), droppedEvent];
      given(dropped).when(attempt(MAX_WEBHOOK_ATTEMPTS + 1, true)).thenNothingHappened();
    });

    it('delivers on a 2xx and ignores a repeat of an attempt already recorded, one out of order, and any after the delivery', () => {
      const oneFailed = [...finishedWithCallback, attempted(1, false)];
      given(oneFailed).when(attempt(1, true)).thenNothingHappened();
      given(oneFailed).when(attempt(3, true)).thenNothingHappened();
      given(oneFailed).when(attempt(2, true)).then([attempted(2, true)]);
      given([...oneFailed, attempted(2, true)]).when(attempt(3, false)).thenNothingHappened();
    });

    it('records the signature headers an attempt sent', () => {
      given(finishedWithCallback)
        .when({ ...attempt(1, true), timestamp: 1_767_225_600, signature: 'v1=abc' })
        .then([
          {
            type: 'WebhookAttempted',
            data: { deliveryId: delivery, attempt: 1, ok: true, statusCode: 200, error: null, durationMs: 3, timestamp: 1_767_225_600, signature: 'v1=abc', at: now },
          },
        ]);
    });

    it('redelivers a finished task as a new delivery, once per delivery id', () => {
      const redeliver: TaskCommand = { type: 'RequestRedelivery', deliveryId: 'dlv_vid_1_1', now };
      given(finishedWithCallback).when(redeliver).then([deliveryRequested('dlv_vid_1_1', 'redeliver')]);
      given([...finishedWithCallback, deliveryRequested('dlv_vid_1_1', 'redeliver')]).when(redeliver).thenNothingHappened();
      given(accepted(true)).when(redeliver).thenThrows('task_not_finished');
      given([...accepted(false), upstreamSucceeded, succeeded]).when(redeliver).thenThrows('no_callback');
    });
  });

  describe('the state (no event shows it)', () => {
    it('never goes back from running to queued, while keeping the upstream\'s own word', () => {
      const state = [...accepted(), progressed('running'), progressed('queued')].reduce(taskDecider.evolve, taskDecider.initialState());
      expect(state).to.include({ status: 'running', upstreamStatus: 'queued' });
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
