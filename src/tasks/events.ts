import type { ModelEntry } from '../billing/catalog';

/**
 * The events of one asynchronous task's stream (`<kind>-<taskId>`): its submission, what the
 * upstream did, how it was billed, and every webhook delivery attempt. Shared by every task kind
 * (video, minutes, podcasts, subtitle erase, async images); kind-specific data rides in `request`,
 * `result` and `usage`.
 */
export interface TaskError {
  readonly code: string;
  readonly message: string;
}

export type Artifact =
  | {
      /** What the file is for the task kind, e.g. `video`, `last_frame`, `image_0`, `audio`. */
      readonly name: string;
      /** Where the upstream serves it: the archive job downloads it. */
      readonly sourceUrl: string;
      readonly contentType?: string;
    }
  | {
      readonly name: string;
      /**
       * A file the gateway received itself, already in the file store (a podcast's audio, which
       * the provider streams): the archive job records it as it is.
       */
      readonly stored: Omit<ArchivedArtifact, 'name'>;
    };

export interface ArchivedArtifact {
  readonly name: string;
  readonly key: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly contentType: string;
}

export interface Callback {
  readonly url: string;
  /** False only on the legacy path: no account secret and no explicit delivery mode. */
  readonly signed: boolean;
}

export type TaskEvent =
  | {
      type: 'TaskSubmitted';
      data: {
        taskId: string;
        kind: string;
        accountId: string;
        model: string;
        /** The validated request with its defaults, as the task kind needs it later. */
        request: Record<string, unknown>;
        reservationId: string;
        estimate: number;
        /**
         * The model as the catalog had it at submission: it prices the task when it is billed, so a
         * later price change or the model's removal does not change what was agreed. Absent from
         * tasks recorded before it was kept, which are priced by the catalog at billing.
         */
        modelAtSubmission?: ModelEntry;
        callback: Callback | null;
        idempotencyKey: string | null;
        /** When the submit job is due, if later than `at` (the creator submits inline first; the job is the safety net). */
        submitAt?: string;
        at: string;
      };
    }
  | {
      type: 'TaskUpstreamAccepted';
      /** `channel`: the upstream channel the task was submitted to, which alone is polled and cancelled; absent on tasks accepted before routing (their model's first channel). */
      data: { upstreamId: string; details?: Record<string, unknown>; channel?: string; at: string };
    }
  | { type: 'TaskProgressed'; data: { upstreamStatus: string; progress: number | null; at: string } }
  | {
      type: 'TaskUpstreamSucceeded';
      /**
       * `stage`: the task finishes only once that stage completes (TaskStageCompleted).
       * `channels`: the channels that made the result, for kinds that make it at poll time through
       * the router (async images, podcasts, summaries); absent otherwise and on tasks recorded before.
       */
      data: { result: Record<string, unknown>; usage: Record<string, unknown>; artifacts: Artifact[]; stage?: string | null; channels?: string[]; at: string };
    }
  | {
      /** A kind's own stage after the upstream (minutes: the summary) ended; merged into result and usage. */
      type: 'TaskStageCompleted';
      data: {
        stage: string;
        outcome: 'succeeded' | 'failed';
        result: Record<string, unknown>;
        usage: Record<string, unknown>;
        error: TaskError | null;
        /** The channels of the stage's calls recorded here and not in a step (a last, unusable summary part). */
        channels?: string[];
        at: string;
      };
    }
  | {
      /**
       * One step of a multi-step stage finished (minutes: one part of a summary written in parts):
       * recorded so that a restart resumes after it instead of paying for it again.
       */
      type: 'TaskStageStepCompleted';
      /** `channels`: the channels that served the step's calls. */
      data: { stage: string; step: number; result: Record<string, unknown>; usage: Record<string, unknown>; channels?: string[]; at: string };
    }
  | { type: 'TaskArtifactsArchived'; data: { artifacts: ArchivedArtifact[]; at: string } }
  | { type: 'TaskArchiveFailed'; data: { message: string; at: string } }
  | { type: 'TaskSucceeded'; data: { at: string } }
  | { type: 'TaskFailed'; data: { error: TaskError; at: string } }
  | { type: 'TaskCancelled'; data: { reason: string; at: string } }
  | { type: 'TaskBilled'; data: { reservationId: string; outcome: 'settled' | 'released'; amount: number; at: string } }
  | { type: 'WebhookDeliveryRequested'; data: { deliveryId: string; reason: 'finished' | 'redeliver'; at: string } }
  | {
      type: 'WebhookAttempted';
      data: {
        deliveryId: string;
        attempt: number;
        ok: boolean;
        statusCode: number | null;
        error: string | null;
        durationMs: number;
        /** The X-Service-Timestamp and X-Service-Signature values sent (null: unsigned); absent on attempts recorded before they were kept. */
        timestamp?: number;
        signature?: string | null;
        at: string;
      };
    }
  | { type: 'WebhookDropped'; data: { deliveryId: string; attempts: number; at: string } };

/** What one webhook attempt recorded (the decider's RecordAttempt command carries the same, with `now`). */
export type WebhookAttemptData = Extract<TaskEvent, { type: 'WebhookAttempted' }>['data'];

export const TASK_EVENT_TYPES: readonly TaskEvent['type'][] = [
  'TaskSubmitted',
  'TaskUpstreamAccepted',
  'TaskProgressed',
  'TaskUpstreamSucceeded',
  'TaskStageCompleted',
  'TaskStageStepCompleted',
  'TaskArtifactsArchived',
  'TaskArchiveFailed',
  'TaskSucceeded',
  'TaskFailed',
  'TaskCancelled',
  'TaskBilled',
  'WebhookDeliveryRequested',
  'WebhookAttempted',
  'WebhookDropped',
];

export function taskStream(kind: string, taskId: string): string {
  return `${kind}-${taskId}`;
}

export function taskIdOfStream(streamId: string): string {
  return streamId.slice(streamId.indexOf('-') + 1);
}
