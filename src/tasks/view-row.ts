import type { ArchivedArtifact, Artifact, Callback, TaskError } from './events';

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
