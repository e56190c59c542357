import type { Pricing } from '../billing/money';
import type { UrlSigner } from '../files/signed-urls';
import type { TaskState } from './decider';
import type { Artifact, TaskError } from './events';
import type { TaskRow } from './view-row';

/** What the upstream says about a task when polled. */
export type UpstreamPoll =
  | { readonly state: 'pending'; readonly upstreamStatus: 'queued' | 'running'; readonly progress?: number | null }
  | {
      readonly state: 'succeeded';
      readonly result: Record<string, unknown>;
      readonly usage: Record<string, unknown>;
      readonly artifacts: Artifact[];
      /**
       * A further stage the task goes through before it finishes (e.g. minutes: `summary`): the
       * task stays running until the kind's own process records `CompleteStage` for it.
       */
      readonly stage?: string;
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
 * What one kind of asynchronous task plugs into the engine: how it is submitted to and polled
 * from its upstream, when it counts as succeeded, what it costs, and how it reads.
 */
export interface TaskKind {
  /** Stream prefix and the `kind` of its events, e.g. `video`. */
  readonly kind: string;
  /** Prefix of task ids, e.g. `vid`. */
  readonly idPrefix: string;
  /**
   * `details`: what the upstream's acceptance tells the client beyond its id (e.g. the URL of a
   * verification page); recorded with the acceptance and shown in the task's `result`.
   */
  submit(task: TaskState): Promise<{ upstreamId: string; details?: Record<string, unknown> }>;
  poll(task: TaskState): Promise<UpstreamPoll>;
  /** Delay before the next poll, by how many polls came before. */
  pollDelayMs(polls: number): number;
  /** True: the task succeeds with the upstream's result and its files are archived afterwards. */
  succeedsBeforeArchive(task: TaskState): boolean;
  /** The charge of a succeeded task, from the usage the upstream reported. */
  settlement(task: TaskState): { pricing: Pricing; usage: Record<string, unknown> };
  /**
   * The charge of a failed task for the work it completed before failing (e.g. minutes: the
   * transcription and the summary tokens observed), or null to release the whole reservation
   * (the default).
   */
  failureSettlement?(task: TaskState): { pricing: Pricing; usage: Record<string, unknown> } | null;
  /**
   * Tells the upstream to stop a task the client cancelled (best effort). Called by the poll job
   * of a cancelled task that the upstream had accepted; an UpstreamError is retried like a poll.
   */
  cancelUpstream?(task: TaskState): Promise<void>;
  /** The webhook payload's kind-specific members for a finished task (video: `video_url`). */
  webhookFields?(task: TaskState, signer: UrlSigner): Record<string, unknown>;
  /** The API representation of a task. */
  render(row: TaskRow, signer: UrlSigner): Record<string, unknown>;
}
