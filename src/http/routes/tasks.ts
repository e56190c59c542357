import Router from '@koa/router';
import { timeRange } from '../time-range';
import type { Pool } from 'pg';
import { listAccountTasks, refundedByTask, type TaskCursor } from '../../read/account-tasks';
import { taskStream } from '../../tasks/events';
import type { UrlSigner } from '../../files/signed-urls';
import type { TaskEngine } from '../../tasks/engine';
import type { EngineKind } from '../../tasks/kind';
import type { TaskRow } from '../../tasks/view-row';
import { authOf, type GatewayState } from '../context';
import { listBody, pageParams } from '../pagination';
import { validator } from '../validation';

/** The task kinds a list may be filtered on: the `kind` every task records (docs/api.md names what each is). */
export const TASK_LIST_KINDS = ['video', 'minutes', 'summary', 'image', 'podcast', 'erase', 'asset', 'asset_session'] as const;
export const TASK_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

const commaList = (values: readonly string[]) => `^(${values.join('|')})(,(${values.join('|')}))*$`;
const INSTANT = { type: 'string', format: 'date-time', description: 'ISO 8601 instant with its offset, e.g. 2026-11-01T00:00:00+08:00' } as const;

/** GET /v1/tasks: filters and the page. */
export const TASK_LIST_QUERY_SCHEMA = {
  type: 'object',
  properties: {
    kind: { type: 'string', pattern: commaList(TASK_LIST_KINDS), description: `Comma-separated kinds: ${TASK_LIST_KINDS.join(', ')}.` },
    status: { type: 'string', pattern: commaList(TASK_STATUSES), description: `Comma-separated statuses: ${TASK_STATUSES.join(', ')}.` },
    from: INSTANT,
    to: INSTANT,
    after: { type: 'string' },
    limit: { type: 'string' },
  },
  additionalProperties: false,
} as const;
const parseQuery = validator<{ kind?: string; status?: string; from?: string; to?: string }>(TASK_LIST_QUERY_SCHEMA);

/** The cursor is opaque to clients: the last task's creation time in microseconds and its id. */
function encodeCursor(createdMicros: string, taskId: string): string {
  return Buffer.from(`task:${createdMicros}:${taskId}`).toString('base64url');
}

function decodeCursor(raw: string): TaskCursor | null {
  const m = /^task:(\d{1,18}):([A-Za-z0-9_-]{1,128})$/.exec(Buffer.from(raw, 'base64url').toString('utf8'));
  return m ? { createdMicros: BigInt(m[1]!), taskId: m[2]! } : null;
}

export interface TaskListDeps {
  readonly pool: Pool;
  /**
   * The task as its own status endpoint answers it (with its signed result links), or null for a
   * kind this gateway does not serve (its feature is not mounted).
   */
  readonly render: (row: TaskRow) => Record<string, unknown> | null;
}

/**
 * `GET /v1/tasks`: the key's account's asynchronous tasks of every kind in one list, newest first,
 * each with the same summary members (status, timings, cost) and the kind's own representation.
 */
export function taskListRouter(deps: TaskListDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ sensitive: true });

  router.get('/v1/tasks', async (ctx) => {
    const q = parseQuery(ctx.query);
    const { from, to } = timeRange(q.from, q.to);
    const { after, limit } = pageParams(ctx.query, (raw) => decodeCursor(raw) !== null);
    const filter = {
      ...(q.kind ? { kinds: [...new Set(q.kind.split(','))] } : {}),
      ...(q.status ? { statuses: [...new Set(q.status.split(','))] } : {}),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
    };
    const { rows, hasMore } = await listAccountTasks(deps.pool, authOf(ctx).accountId, filter, { after: after === null ? null : decodeCursor(after), limit });
    const cursors = new Map(rows.map((r) => [r.task_id, encodeCursor(r.created_micros, r.task_id)]));
    // Only a settled charge can have been refunded.
    const refunds = await refundedByTask(deps.pool, authOf(ctx).accountId, rows.filter((r) => r.billing_status === 'settled').map((r) => taskStream(r.kind, r.task_id)));
    ctx.body = listBody(
      rows.map((row) => summary(row, deps.render(row), refunds.get(taskStream(row.kind, row.task_id)) ?? 0)),
      hasMore,
      (t) => cursors.get(t.id)!,
    );
  });

  return router;
}

/** A task as its kind renders it; null when its kind's feature is not mounted here (a task of it can still be in the account's history). */
export function renderTask(tasks: TaskEngine, signer: UrlSigner, row: TaskRow): Record<string, unknown> | null {
  let kind: EngineKind;
  try {
    kind = tasks.kind(row.kind);
  } catch {
    return null;
  }
  return kind.render(row, signer);
}

/** The members every task has, whatever its kind. */
function summary(row: TaskRow, detail: Record<string, unknown> | null, refunded: number) {
  return {
    object: 'task' as const,
    id: row.task_id,
    kind: row.kind,
    model: row.model,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
    // As a video task shows it: the reservation, then what was charged once the task was billed.
    billing: {
      currency: 'CNY' as const,
      reserved: Number(row.reserved_amount),
      status: row.billing_status,
      amount: row.billed_amount === null ? null : Number(row.billed_amount),
      /** What was refunded of `amount` since (0: nothing). */
      refunded,
    },
    error: row.error,
    detail,
  };
}
