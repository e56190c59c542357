import type { Pricing } from '../billing/money';
import type { UrlSigner } from '../files/signed-urls';
import type { Codec, TaskData } from './codec';
import type { TaskState } from './decider';
import type { Artifact, TaskError } from './events';
import type { TaskRow } from './view-row';

/** What a submit answers: the provider's id of the task, details for the client, and the channel that took it. */
export interface Submitted {
  readonly upstreamId: string;
  readonly details?: Record<string, unknown>;
  readonly channel?: string;
}

/** What the upstream says about a task when polled (`Result`, `Usage`: the kind's types of them). */
export type UpstreamPoll<Result = TaskData, Usage = TaskData> =
  | {
      readonly state: 'pending';
      readonly upstreamStatus: 'queued' | 'running';
      readonly progress?: number | null;
      /**
       * The provider's id to poll from now on, when the provider's work runs as a chain of its own
       * tasks (subtitle erase on Volcengine VOD: an upload by URL, then the erase): recorded as the
       * task's new upstream id before the next poll.
       */
      readonly upstreamId?: string;
    }
  | {
      readonly state: 'succeeded';
      readonly result: Result;
      readonly usage: Usage;
      readonly artifacts: Artifact[];
      /**
       * A further stage the task goes through before it finishes (e.g. minutes: `summary`): the
       * task stays running until the kind's own process records `CompleteStage` for it.
       */
      readonly stage?: string;
      /**
       * The channels that made the result, for kinds that make it at poll time through the
       * router (async images, podcasts, summaries): recorded on the task, named by its settlement.
       */
      readonly channels?: readonly string[];
    }
  | { readonly state: 'failed'; readonly error: TaskError };

/** The upstream refused the task for good (bad input, content policy): the task fails, no retry. */
export class TaskRejected extends Error {
  constructor(readonly error: TaskError) {
    super(error.message);
    this.name = 'TaskRejected';
  }
}

/**
 * The name of a task kind and the codec of its data: enough to create, read and decode its tasks
 * without the kind's behaviour (routes and other features use this; the engine the whole kind).
 */
export interface TaskKindCodec<Request, Result, Usage> {
  /** Stream prefix and the `kind` of its events, e.g. `video`. */
  readonly kind: string;
  /** Prefix of task ids, e.g. `vid`. */
  readonly idPrefix: string;
  readonly request: Codec<Request>;
  readonly result: Codec<Result>;
  readonly usage: Codec<Usage>;
}

type Decoded<Request, Result, Usage> = { readonly request: Request; readonly result: Result | null; readonly usage: Usage | null };

/** A task's state with its kind's data decoded. */
export type KindTask<Request, Result, Usage> = Omit<TaskState, 'request' | 'result' | 'usage'> & Decoded<Request, Result, Usage>;

/** A row of the `tasks` view with its kind's data decoded. */
export type KindRow<Request, Result, Usage> = Omit<TaskRow, 'request' | 'result' | 'usage'> & Decoded<Request, Result, Usage>;

function decodeData<Request, Result, Usage>(codec: TaskKindCodec<Request, Result, Usage>, data: Pick<TaskState, 'request' | 'result' | 'usage'>): Decoded<Request, Result, Usage> {
  return {
    request: codec.request.decode(data.request),
    result: data.result === null ? null : codec.result.decode(data.result),
    usage: data.usage === null ? null : codec.usage.decode(data.usage),
  };
}

export function decodeTask<Request, Result, Usage>(codec: TaskKindCodec<Request, Result, Usage>, task: TaskState): KindTask<Request, Result, Usage> {
  return { ...task, ...decodeData(codec, task) };
}

export function decodeRow<Request, Result, Usage>(codec: TaskKindCodec<Request, Result, Usage>, row: TaskRow): KindRow<Request, Result, Usage> {
  return { ...row, ...decodeData(codec, row) };
}

/** The usage a succeeded task recorded (every kind's poll records one with its result). */
export function recordedUsage<Usage>(task: { readonly taskId: string; readonly usage: Usage | null }): Usage {
  if (task.usage === null) throw new Error(`task ${task.taskId} has no recorded usage to bill`);
  return task.usage;
}

/**
 * What one kind of asynchronous task plugs into the engine: how it is submitted to and polled
 * from its upstream, when it counts as succeeded, what it costs, and how it reads. Every method
 * sees the task with its data decoded by the kind's codec.
 */
export interface TaskKind<Request, Result, Usage> extends TaskKindCodec<Request, Result, Usage> {
  /**
   * `details`: what the upstream's acceptance tells the client beyond its id (e.g. the URL of a
   * verification page); recorded with the acceptance and shown in the task's `result`.
   */
  /** `channel`: the channel that accepted it (submitOnChannels), recorded for its polls and cancels. */
  submit(task: KindTask<Request, Result, Usage>): Promise<Submitted>;
  poll(task: KindTask<Request, Result, Usage>): Promise<UpstreamPoll<Result, Usage>>;
  /** Delay before the next poll, by how many polls came before. */
  pollDelayMs(polls: number): number;
  /** True: the task succeeds with the upstream's result and its files are archived afterwards. */
  succeedsBeforeArchive(task: KindTask<Request, Result, Usage>): boolean;
  /** The charge of a succeeded task, from the usage the upstream reported. */
  settlement(task: KindTask<Request, Result, Usage>): { pricing: Pricing; usage: Record<string, unknown> };
  /**
   * The charge of a failed task for the work it completed before failing (e.g. minutes: the
   * transcription and the summary tokens observed), or null to release the whole reservation
   * (the default).
   */
  failureSettlement?(task: KindTask<Request, Result, Usage>): { pricing: Pricing; usage: Record<string, unknown> } | null;
  /**
   * Tells the upstream to stop a task the client cancelled (best effort). Called by the poll job
   * of a cancelled task that the upstream had accepted; an UpstreamError is retried like a poll.
   */
  cancelUpstream?(task: KindTask<Request, Result, Usage>): Promise<void>;
  /** The webhook payload's kind-specific members for a finished task (video: `video_url`). */
  webhookFields?(task: KindTask<Request, Result, Usage>, signer: UrlSigner): Record<string, unknown>;
  /** The API representation of a task. */
  render(row: KindRow<Request, Result, Usage>, signer: UrlSigner): Record<string, unknown>;
}

/**
 * A registered kind as the engine and its jobs drive it: on recorded data, which it decodes
 * before calling the kind, and whose poll outcome it encodes for the events.
 */
export interface EngineKind {
  readonly kind: string;
  readonly idPrefix: string;
  submit(task: TaskState): Promise<Submitted>;
  poll(task: TaskState): Promise<UpstreamPoll<Record<string, unknown>, Record<string, unknown>>>;
  pollDelayMs(polls: number): number;
  succeedsBeforeArchive(task: TaskState): boolean;
  settlement(task: TaskState): { pricing: Pricing; usage: Record<string, unknown> };
  failureSettlement(task: TaskState): { pricing: Pricing; usage: Record<string, unknown> } | null;
  cancelUpstream(task: TaskState): Promise<void>;
  webhookFields(task: TaskState, signer: UrlSigner): Record<string, unknown>;
  render(row: TaskRow, signer: UrlSigner): Record<string, unknown>;
}

/** The kind behind the engine's codec boundary (see EngineKind). */
export function engineKind<Request, Result, Usage>(kind: TaskKind<Request, Result, Usage>): EngineKind {
  const task = (state: TaskState) => decodeTask(kind, state);
  return {
    kind: kind.kind,
    idPrefix: kind.idPrefix,
    submit: (state) => kind.submit(task(state)),
    async poll(state) {
      const outcome = await kind.poll(task(state));
      if (outcome.state !== 'succeeded') return outcome;
      return { ...outcome, result: kind.result.encode(outcome.result), usage: kind.usage.encode(outcome.usage) };
    },
    pollDelayMs: (polls) => kind.pollDelayMs(polls),
    succeedsBeforeArchive: (state) => kind.succeedsBeforeArchive(task(state)),
    settlement: (state) => kind.settlement(task(state)),
    failureSettlement: (state) => kind.failureSettlement?.(task(state)) ?? null,
    cancelUpstream: async (state) => kind.cancelUpstream?.(task(state)),
    webhookFields: (state, signer) => kind.webhookFields?.(task(state), signer) ?? {},
    render: (row, signer) => kind.render(decodeRow(kind, row), signer),
  };
}
