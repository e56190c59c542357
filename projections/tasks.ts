import type { PoolClient } from 'pg';
import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import { TASK_EVENT_TYPES, taskIdOfStream, type TaskEvent } from '../src/tasks/events';
import { submittedRow, type DeliveryView } from '../src/tasks/view-row';

/**
 * One row per asynchronous task of every kind, with its billing and its webhook delivery log;
 * the status endpoints render kind-specific shapes from it.
 */
export const tasksProjection: Projection = defineProjection<TaskEvent>()({
  name: 'tasks',
  tables: ['tasks'],
  ddl: `
    CREATE TABLE tasks (
      task_id text PRIMARY KEY,
      kind text NOT NULL,
      account_id text NOT NULL,
      model text NOT NULL,
      status text NOT NULL,
      request jsonb NOT NULL,
      upstream_id text,
      upstream_channel text,
      upstream_status text,
      progress double precision,
      result jsonb,
      usage jsonb,
      artifacts jsonb NOT NULL DEFAULT '[]',
      archived jsonb,
      archive_error text,
      error jsonb,
      reserved_amount bigint NOT NULL,
      billing_status text NOT NULL,
      billed_amount bigint,
      callback jsonb,
      deliveries jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      finished_at timestamptz,
      revision bigint NOT NULL
    );
    CREATE INDEX tasks_account_kind ON tasks (account_id, kind, task_id);
    CREATE INDEX tasks_account_created ON tasks (account_id, created_at, task_id);
    CREATE INDEX tasks_dropped_webhooks ON tasks (account_id) WHERE deliveries @> '[{"status":"dropped"}]';
    CREATE INDEX tasks_unfinished_channel ON tasks (upstream_channel) WHERE finished_at IS NULL;`,
  handles: TASK_EVENT_TYPES,
  async apply(tx, event) {
    const taskId = taskIdOfStream(event.streamId);
    const at = event.data.at;
    const set = (assignments: string, values: unknown[]): Promise<unknown> =>
      tx.query(`UPDATE tasks SET ${assignments}, updated_at = $2, revision = $3 WHERE task_id = $1`, [taskId, at, event.revision, ...values]);
    switch (event.type) {
      case 'TaskSubmitted': {
        const row = submittedRow(event.data);
        await tx.query(
          `INSERT INTO tasks (task_id, kind, account_id, model, status, request, reserved_amount, billing_status, callback, created_at, updated_at, revision)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)`,
          [taskId, row.kind, row.account_id, row.model, row.status, JSON.stringify(row.request), row.reserved_amount, row.billing_status, row.callback ? JSON.stringify(row.callback) : null, event.data.at, event.revision],
        );
        return;
      }
      case 'TaskUpstreamAccepted':
        // The acceptance's details (a verification URL) are the first members of the result.
        await set(`upstream_id = $4, upstream_channel = $6, result = CASE WHEN $5::jsonb IS NULL THEN result ELSE COALESCE(result, '{}'::jsonb) || $5::jsonb END`, [
          event.data.upstreamId,
          event.data.details ? JSON.stringify(event.data.details) : null,
          event.data.channel ?? null,
        ]);
        return;
      case 'TaskProgressed':
        await set(`upstream_status = $4, progress = $5, status = CASE WHEN $4 = 'running' AND status = 'queued' THEN 'running' ELSE status END`, [
          event.data.upstreamStatus,
          event.data.progress,
        ]);
        return;
      case 'TaskUpstreamSucceeded':
        await set(`result = COALESCE(result, '{}'::jsonb) || $4::jsonb, usage = $5, artifacts = $6, upstream_status = 'succeeded', status = CASE WHEN status = 'queued' THEN 'running' ELSE status END`, [
          JSON.stringify(event.data.result),
          JSON.stringify(event.data.usage),
          JSON.stringify(event.data.artifacts),
        ]);
        return;
      case 'TaskStageCompleted':
        await set(`result = COALESCE(result, '{}'::jsonb) || $4::jsonb, usage = COALESCE(usage, '{}'::jsonb) || $5::jsonb`, [
          JSON.stringify(event.data.result),
          JSON.stringify(event.data.usage),
        ]);
        return;
      case 'TaskStageStepCompleted':
        // A step is internal to its stage (the stage's completion carries what readers see).
        await tx.query('UPDATE tasks SET updated_at = $2, revision = $3 WHERE task_id = $1', [taskId, at, event.revision]);
        return;
      case 'TaskArtifactsArchived':
        await set('archived = $4, archive_error = NULL', [JSON.stringify(event.data.artifacts)]);
        return;
      case 'TaskArchiveFailed':
        await set('archive_error = $4', [event.data.message]);
        return;
      case 'TaskSucceeded':
        await set(`status = 'succeeded', finished_at = $2`, []);
        return;
      case 'TaskFailed':
        await set(`status = 'failed', error = $4, finished_at = $2`, [JSON.stringify(event.data.error)]);
        return;
      case 'TaskCancelled':
        await set(`status = 'cancelled', error = $4, finished_at = $2`, [JSON.stringify({ code: 'cancelled', message: event.data.reason })]);
        return;
      case 'TaskBilled':
        await set('billing_status = $4, billed_amount = $5', [event.data.outcome, event.data.amount]);
        return;
      case 'WebhookDeliveryRequested':
      case 'WebhookAttempted':
      case 'WebhookDropped':
        await updateDeliveries(tx, taskId, at, event.revision, event);
        return;
    }
  },
});

async function updateDeliveries(tx: PoolClient, taskId: string, at: string, revision: number, event: TaskEvent): Promise<void> {
  const { rows } = await tx.query<{ deliveries: DeliveryView[] }>('SELECT deliveries FROM tasks WHERE task_id = $1', [taskId]);
  const deliveries = rows[0]?.deliveries ?? [];
  if (event.type === 'WebhookDeliveryRequested') {
    deliveries.push({ id: event.data.deliveryId, reason: event.data.reason, status: 'pending', requested_at: at, attempts: [] });
  } else if (event.type === 'WebhookAttempted') {
    const d = deliveries.find((x) => x.id === event.data.deliveryId);
    if (d) {
      d.attempts.push({
        attempt: event.data.attempt,
        at,
        ok: event.data.ok,
        status_code: event.data.statusCode,
        error: event.data.error,
        duration_ms: event.data.durationMs,
        timestamp: event.data.timestamp ?? null,
        signature: event.data.signature ?? null,
      });
      if (event.data.ok) (d as { status: string }).status = 'delivered';
    }
  } else if (event.type === 'WebhookDropped') {
    const d = deliveries.find((x) => x.id === event.data.deliveryId);
    if (d) (d as { status: string }).status = 'dropped';
  }
  await tx.query('UPDATE tasks SET deliveries = $2, updated_at = $3, revision = $4 WHERE task_id = $1', [taskId, JSON.stringify(deliveries), at, revision]);
}
