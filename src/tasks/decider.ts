import type { ModelEntry } from '../billing/catalog';
import { DomainError, type Decider } from '../domain/decider';
import { withChanges } from '../domain/with-changes';
import type { ArchivedArtifact, Artifact, Callback, TaskError, TaskEvent, WebhookAttemptData } from './events';

export type TaskStatus = 'none' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface DeliveryState {
  readonly attempts: number;
  readonly state: 'pending' | 'delivered' | 'dropped';
}

export interface TaskState {
  readonly status: TaskStatus;
  readonly taskId: string;
  readonly kind: string;
  readonly accountId: string;
  readonly model: string;
  readonly request: Record<string, unknown>;
  readonly reservationId: string;
  /** What the reservation froze at submission. */
  readonly estimate: number;
  /** The model as the catalog had it at submission, which prices the task (null for tasks recorded before it was kept). */
  readonly modelAtSubmission: ModelEntry | null;
  readonly callback: Callback | null;
  readonly upstreamId: string | null;
  /** The channel the upstream accepted the task on (polls and cancels go there only); null before, and for tasks accepted before it was recorded. */
  readonly upstreamChannel: string | null;
  /**
   * Every channel that served the task's work, in order of first use: the one that accepted it,
   * and those that made a result or a stage's calls at poll time (async images, podcasts,
   * summaries). Its settlement names them (chargeChannels); empty on tasks recorded before.
   */
  readonly servedBy: readonly string[];
  /**
   * The upstream's status and progress as last recorded (TaskProgressed, or `succeeded` with
   * TaskUpstreamSucceeded); null until the first report. A poll that reports the same again
   * records nothing.
   */
  readonly upstreamStatus: string | null;
  readonly progress: number | null;
  readonly upstreamSucceeded: boolean;
  /** The kind's stage the task waits for after the upstream succeeded (e.g. `summary`), else null. */
  readonly pendingStage: string | null;
  /** Steps of the pending stage recorded so far (RecordStageStep), by step number. */
  readonly stageSteps: readonly StageStep[];
  readonly result: Record<string, unknown> | null;
  readonly usage: Record<string, unknown> | null;
  readonly artifacts: readonly Artifact[];
  readonly archived: readonly ArchivedArtifact[] | null;
  readonly error: TaskError | null;
  readonly billed: boolean;
  readonly deliveries: Readonly<Record<string, DeliveryState>>;
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

export interface StageStep {
  readonly step: number;
  readonly result: Record<string, unknown>;
  readonly usage: Record<string, unknown>;
}

export const MAX_WEBHOOK_ATTEMPTS = 4;

export type TaskCommand =
  | { type: 'Submit'; data: Extract<TaskEvent, { type: 'TaskSubmitted' }>['data'] }
  | { type: 'AcceptUpstream'; upstreamId: string; details?: Record<string, unknown>; channel?: string; now: string }
  | { type: 'Progress'; upstreamStatus: string; progress: number | null; now: string }
  /**
   * `succeedNow`: the task succeeds with the upstream result, before its files are archived.
   * `stage`: the task instead waits for that stage of its kind (CompleteStage) to finish.
   * `channels`: the channels that made the result at poll time (UpstreamPoll).
   */
  | {
      type: 'UpstreamSucceed';
      result: Record<string, unknown>;
      usage: Record<string, unknown>;
      artifacts: Artifact[];
      succeedNow: boolean;
      stage?: string | null;
      channels?: readonly string[];
      now: string;
    }
  /** Ends the pending stage: its result and usage are merged in and the task succeeds or fails. */
  | {
      type: 'CompleteStage';
      stage: string;
      outcome: 'succeeded' | 'failed';
      result: Record<string, unknown>;
      usage: Record<string, unknown>;
      error: TaskError | null;
      channels?: readonly string[];
      now: string;
    }
  /** Records one step of the pending stage; a step already recorded is a no-op. */
  | { type: 'RecordStageStep'; stage: string; step: number; result: Record<string, unknown>; usage: Record<string, unknown>; channels?: readonly string[]; now: string }
  | { type: 'RecordArchive'; artifacts: ArchivedArtifact[]; now: string }
  | { type: 'RecordArchiveFailure'; message: string; now: string }
  | { type: 'Fail'; error: TaskError; now: string }
  | { type: 'Cancel'; reason: string; now: string }
  | { type: 'RecordBilling'; outcome: 'settled' | 'released'; amount: number; now: string }
  | { type: 'RequestRedelivery'; deliveryId: string; now: string }
  | ({ type: 'RecordAttempt'; now: string } & Omit<WebhookAttemptData, 'at'>);

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['succeeded', 'failed', 'cancelled']);

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL.has(status);
}

function initialState(): TaskState {
  return {
    status: 'none',
    taskId: '',
    kind: '',
    accountId: '',
    model: '',
    request: {},
    reservationId: '',
    estimate: 0,
    modelAtSubmission: null,
    callback: null,
    upstreamId: null,
    upstreamChannel: null,
    servedBy: [],
    upstreamStatus: null,
    progress: null,
    upstreamSucceeded: false,
    pendingStage: null,
    stageSteps: [],
    result: null,
    usage: null,
    artifacts: [],
    archived: null,
    error: null,
    billed: false,
    deliveries: {},
    createdAt: '',
    finishedAt: null,
  };
}

/** A command's channels as an event records them: absent when there are none. */
function channelsOf(channels: readonly string[] | undefined): { channels?: string[] } {
  return channels === undefined || channels.length === 0 ? {} : { channels: [...channels] };
}

/** `served` and the channels of `more` not in it yet, in order of first use. */
function servedAlso(served: readonly string[], more: readonly string[]): readonly string[] {
  const added = more.filter((name, i) => !served.includes(name) && more.indexOf(name) === i);
  return added.length === 0 ? served : [...served, ...added];
}

/** The delivery id of the callback for a task's terminal state: one per task, stable across replays. */
export function finishedDeliveryId(taskId: string): string {
  return `dlv_${taskId}_0`;
}

/** Events that finish a task, plus the request of its callback when it has one. */
function finish(state: TaskState, event: TaskEvent, now: string): TaskEvent[] {
  const events = [event];
  if (state.callback) events.push({ type: 'WebhookDeliveryRequested', data: { deliveryId: finishedDeliveryId(state.taskId), reason: 'finished', at: now } });
  return events;
}

function decide(command: TaskCommand, state: TaskState): TaskEvent[] {
  if (command.type === 'Submit') {
    if (state.status !== 'none') throw new DomainError('task_exists', `task ${command.data.taskId} already exists`);
    return [{ type: 'TaskSubmitted', data: command.data }];
  }
  if (state.status === 'none') throw new DomainError('task_not_found', 'task not found');
  const terminal = isTerminal(state.status);
  switch (command.type) {
    case 'AcceptUpstream':
      // A task cancelled while its submission was in flight still records the upstream id, so
      // that its poll job can tell the upstream to cancel it too.
      if ((terminal && state.status !== 'cancelled') || state.upstreamId === command.upstreamId) return [];
      const data = {
        upstreamId: command.upstreamId,
        ...(command.details ? { details: command.details } : {}),
        ...(command.channel === undefined ? {} : { channel: command.channel }),
        at: command.now,
      };
      return [{ type: 'TaskUpstreamAccepted', data }];
    case 'Progress':
      // Only a change is recorded: a task polled for hours while its upstream says the same
      // thing keeps a short stream.
      if (terminal || state.upstreamSucceeded) return [];
      if (state.upstreamStatus === command.upstreamStatus && state.progress === command.progress) return [];
      return [{ type: 'TaskProgressed', data: { upstreamStatus: command.upstreamStatus, progress: command.progress, at: command.now } }];
    case 'UpstreamSucceed': {
      if (terminal || state.upstreamSucceeded) return [];
      const stage = command.stage ?? null;
      const succeeded: TaskEvent = {
        type: 'TaskUpstreamSucceeded',
        data: { result: command.result, usage: command.usage, artifacts: command.artifacts, ...(stage ? { stage } : {}), ...channelsOf(command.channels), at: command.now },
      };
      if (!command.succeedNow || stage) return [succeeded];
      return [succeeded, ...finish(state, { type: 'TaskSucceeded', data: { at: command.now } }, command.now)];
    }
    case 'RecordArchive': {
      if (state.archived || !state.upstreamSucceeded) return [];
      const archived: TaskEvent = { type: 'TaskArtifactsArchived', data: { artifacts: command.artifacts, at: command.now } };
      // A task waiting for its archive (e.g. video_url_mode tos) succeeds with it; one waiting
      // for a stage of its kind succeeds (or fails) when that stage completes instead.
      if ((state.status === 'queued' || state.status === 'running') && !state.pendingStage) return [archived, ...finish(state, { type: 'TaskSucceeded', data: { at: command.now } }, command.now)];
      return [archived];
    }
    case 'CompleteStage': {
      // Only the first outcome of the pending stage counts (a late summary after its timeout is a no-op).
      if (terminal || state.pendingStage !== command.stage) return [];
      const completed: TaskEvent = {
        type: 'TaskStageCompleted',
        data: { stage: command.stage, outcome: command.outcome, result: command.result, usage: command.usage, error: command.error, ...channelsOf(command.channels), at: command.now },
      };
      const ending: TaskEvent =
        command.outcome === 'succeeded'
          ? { type: 'TaskSucceeded', data: { at: command.now } }
          : { type: 'TaskFailed', data: { error: command.error ?? { code: `${command.stage}_failed`, message: `the ${command.stage} stage failed` }, at: command.now } };
      return [completed, ...finish(state, ending, command.now)];
    }
    case 'RecordStageStep':
      if (terminal || state.pendingStage !== command.stage || state.stageSteps.some((s) => s.step === command.step)) return [];
      return [
        {
          type: 'TaskStageStepCompleted',
          data: { stage: command.stage, step: command.step, result: command.result, usage: command.usage, ...channelsOf(command.channels), at: command.now },
        },
      ];
    case 'RecordArchiveFailure':
      return state.archived ? [] : [{ type: 'TaskArchiveFailed', data: { message: command.message, at: command.now } }];
    case 'Fail':
      if (terminal) return [];
      return finish(state, { type: 'TaskFailed', data: { error: command.error, at: command.now } }, command.now);
    case 'Cancel':
      if (terminal) throw new DomainError('task_finished', `task is already ${state.status}`);
      // The provider did the work (and charged for it): only its files are still being archived.
      if (state.upstreamSucceeded) throw new DomainError('task_finished', 'task is already done at the provider (its files are being archived)');
      return [{ type: 'TaskCancelled', data: { reason: command.reason, at: command.now } }];
    case 'RecordBilling':
      if (state.billed) return [];
      if (!terminal) throw new DomainError('task_not_finished', 'a task is billed once it is finished');
      return [{ type: 'TaskBilled', data: { reservationId: state.reservationId, outcome: command.outcome, amount: command.amount, at: command.now } }];
    case 'RequestRedelivery': {
      if (!state.callback) throw new DomainError('no_callback', 'the task was created without a callback_url');
      if (state.status !== 'succeeded' && state.status !== 'failed') throw new DomainError('task_not_finished', 'the task has not finished yet');
      if (state.deliveries[command.deliveryId]) return [];
      return [{ type: 'WebhookDeliveryRequested', data: { deliveryId: command.deliveryId, reason: 'redeliver', at: command.now } }];
    }
    case 'RecordAttempt': {
      const delivery = state.deliveries[command.deliveryId];
      // Only the next attempt of a pending delivery counts: a repeat of an attempt already
      // recorded (a worker that crashed after sending) is a no-op.
      if (!delivery || delivery.state !== 'pending' || command.attempt !== delivery.attempts + 1) return [];
      const attempted: TaskEvent = {
        type: 'WebhookAttempted',
        data: {
          deliveryId: command.deliveryId,
          attempt: command.attempt,
          ok: command.ok,
          statusCode: command.statusCode,
          error: command.error,
          durationMs: command.durationMs,
          ...(command.timestamp === undefined ? {} : { timestamp: command.timestamp, signature: command.signature ?? null }),
          at: command.now,
        },
      };
      if (!command.ok && command.attempt >= MAX_WEBHOOK_ATTEMPTS) {
        return [attempted, { type: 'WebhookDropped', data: { deliveryId: command.deliveryId, attempts: command.attempt, at: command.now } }];
      }
      return [attempted];
    }
  }
}

function evolve(state: TaskState, event: TaskEvent): TaskState {
  switch (event.type) {
    case 'TaskSubmitted': {
      const d = event.data;
      return withChanges(state, {
        status: 'queued',
        taskId: d.taskId,
        kind: d.kind,
        accountId: d.accountId,
        model: d.model,
        request: d.request,
        reservationId: d.reservationId,
        estimate: d.estimate,
        modelAtSubmission: d.modelAtSubmission ?? null,
        callback: d.callback,
        createdAt: d.at,
      });
    }
    case 'TaskUpstreamAccepted':
      return withChanges(state, { upstreamId: event.data.upstreamId, upstreamChannel: event.data.channel ?? null, servedBy: servedAlso(state.servedBy, event.data.channel === undefined ? [] : [event.data.channel]) });
    case 'TaskProgressed':
      return withChanges(state, {
        upstreamStatus: event.data.upstreamStatus,
        progress: event.data.progress,
        status: event.data.upstreamStatus === 'running' && state.status === 'queued' ? 'running' : state.status,
      });
    case 'TaskUpstreamSucceeded':
      return withChanges(state, {
        upstreamSucceeded: true,
        upstreamStatus: 'succeeded',
        pendingStage: event.data.stage ?? null,
        stageSteps: [],
        result: event.data.result,
        usage: event.data.usage,
        artifacts: event.data.artifacts,
        servedBy: servedAlso(state.servedBy, event.data.channels ?? []),
        status: 'running',
      });
    case 'TaskStageCompleted':
      return withChanges(state, {
        pendingStage: null,
        stageSteps: [],
        result: { ...state.result, ...event.data.result },
        usage: { ...state.usage, ...event.data.usage },
        servedBy: servedAlso(state.servedBy, event.data.channels ?? []),
      });
    case 'TaskStageStepCompleted': {
      const d = event.data;
      return withChanges(state, { stageSteps: [...state.stageSteps, { step: d.step, result: d.result, usage: d.usage }], servedBy: servedAlso(state.servedBy, d.channels ?? []) });
    }
    case 'TaskArtifactsArchived':
      return withChanges(state, { archived: event.data.artifacts });
    case 'TaskArchiveFailed':
      return state;
    case 'TaskSucceeded':
      return withChanges(state, { status: 'succeeded', finishedAt: event.data.at });
    case 'TaskFailed':
      return withChanges(state, { status: 'failed', error: event.data.error, finishedAt: event.data.at });
    case 'TaskCancelled':
      return withChanges(state, { status: 'cancelled', finishedAt: event.data.at });
    case 'TaskBilled':
      return withChanges(state, { billed: true });
    case 'WebhookDeliveryRequested':
      return withChanges(state, { deliveries: { ...state.deliveries, [event.data.deliveryId]: { attempts: 0, state: 'pending' } } });
    case 'WebhookAttempted': {
      const d = event.data;
      return withChanges(state, { deliveries: { ...state.deliveries, [d.deliveryId]: { attempts: d.attempt, state: d.ok ? 'delivered' : 'pending' } } });
    }
    case 'WebhookDropped':
      return withChanges(state, { deliveries: { ...state.deliveries, [event.data.deliveryId]: { attempts: event.data.attempts, state: 'dropped' } } });
  }
}

export const taskDecider: Decider<TaskCommand, TaskEvent, TaskState> = {
  initialState,
  decide,
  evolve,
  // 3: the state keeps the upstream's last status and progress; 4: and the pending stage's steps;
  // 5: and the reservation's estimate and the model as it was at submission; 6: and the channels
  // that served the task (servedBy).
  snapshotVersion: 6,
};
