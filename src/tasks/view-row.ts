import type { ArchivedArtifact, Artifact, Callback, TaskError, TaskEvent } from './events';

/** One attempt of one webhook delivery, as the task record shows it. */
export interface AttemptView {
  readonly attempt: number;
  readonly at: string;
  readonly ok: boolean;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
  /** The X-Service-Timestamp and X-Service-Signature values sent; null when not recorded (or, for the signature, unsigned). */
  readonly timestamp?: number | null;
  readonly signature?: string | null;
}

export interface DeliveryView {
  readonly id: string;
  readonly reason: 'finished' | 'redeliver';
  readonly status: 'pending' | 'delivered' | 'dropped';
  readonly requested_at: string;
  readonly attempts: AttemptView[];
}

/** A row of the view without its kind's own data (what every kind reads alike). */
export type TaskRowHead = Omit<TaskRow, 'request' | 'result' | 'usage'>;

/** A row of the `tasks` read model (projections/tasks.ts), as kinds render it. */
export interface TaskRow {
  readonly task_id: string;
  readonly kind: string;
  readonly account_id: string;
  readonly model: string;
  readonly status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  readonly request: Record<string, unknown>;
  readonly upstream_id: string | null;
  /** The channel that accepted the task, which alone knows it; null before, and for tasks accepted before it was recorded. */
  readonly upstream_channel: string | null;
  readonly upstream_status: string | null;
  readonly progress: number | null;
  readonly result: Record<string, unknown> | null;
  readonly usage: Record<string, unknown> | null;
  readonly artifacts: Artifact[];
  readonly archived: ArchivedArtifact[] | null;
  readonly archive_error: string | null;
  readonly error: TaskError | null;
  readonly reserved_amount: string;
  readonly billing_status: 'reserved' | 'settled' | 'released';
  readonly billed_amount: string | null;
  readonly callback: Callback | null;
  readonly deliveries: DeliveryView[];
  readonly created_at: Date;
  readonly updated_at: Date;
  readonly finished_at: Date | null;
}

type Submitted = Extract<TaskEvent, { type: 'TaskSubmitted' }>['data'];
type Accepted = Extract<TaskEvent, { type: 'TaskUpstreamAccepted' }>['data'];
type Failed = Extract<TaskEvent, { type: 'TaskFailed' }>['data'];

/** The row a task's first event makes: what projections/tasks.ts inserts, and what its creation answers from. */
export function submittedRow(d: Submitted): TaskRow {
  const at = new Date(d.at);
  return {
    task_id: d.taskId,
    kind: d.kind,
    account_id: d.accountId,
    model: d.model,
    status: 'queued',
    request: d.request,
    upstream_id: null,
    upstream_channel: null,
    upstream_status: null,
    progress: null,
    result: null,
    usage: null,
    artifacts: [],
    archived: null,
    archive_error: null,
    error: null,
    reserved_amount: String(d.estimate),
    billing_status: 'reserved',
    billed_amount: null,
    callback: d.callback,
    deliveries: [],
    created_at: at,
    updated_at: at,
    finished_at: null,
  };
}

/** `row` once its provider took the task: its id, and the acceptance's details as the first members of the result. */
export function acceptedRow(row: TaskRow, d: Accepted): TaskRow {
  return { ...row, upstream_id: d.upstreamId, upstream_channel: d.channel ?? null, result: d.details ? { ...row.result, ...d.details } : row.result, updated_at: new Date(d.at) };
}

/** `row` once its provider refused the task for good. */
export function failedRow(row: TaskRow, d: Failed): TaskRow {
  const at = new Date(d.at);
  return { ...row, status: 'failed', error: d.error, updated_at: at, finished_at: at };
}
