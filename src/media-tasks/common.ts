import { DomainError } from '../domain/decider';
import type { UrlSigner } from '../files/signed-urls';
import { authOf, type GatewayContext } from '../http/context';
import { ApiError } from '../http/errors';
import { taskStream } from '../tasks/events';
import { TASK_VIEWS, type TaskEngine } from '../tasks/engine';
import type { TaskRow, TaskRowHead } from '../tasks/view-row';
import type { PollThrottle } from './poll-throttle';
import type { Config } from '../config';
import type { ConsumerProgress } from '../projections-runtime/progress';

/** What reading and cancelling a task uses. */
export interface TaskReadDeps {
  readonly tasks: Pick<TaskEngine, 'read' | 'run' | 'now'>;
  readonly progress: Pick<ConsumerProgress, 'waitFor'>;
  readonly config: Pick<Config, 'projectionWaitMs'>;
}

/**
 * A status read: the caller's task (404 for unknown ids and other accounts' tasks, the same
 * answer so ids leak nothing), then the polling limit of this key on this task (429).
 */
export async function readPolledTask(deps: TaskReadDeps, ctx: GatewayContext, kind: string, label: string, throttle: PollThrottle): Promise<TaskRow> {
  const auth = authOf(ctx);
  const id = ctx.params.taskId!;
  const row = await deps.tasks.read(kind, id, auth.accountId);
  if (!row) throw new ApiError(404, 'task_not_found', `${label} task ${id} not found`);
  await throttle.take(auth.keyId, id);
  return row;
}

/**
 * Cancels a caller's unfinished task: the engine records `TaskCancelled`, the process manager
 * releases its reservation, and the task's next poll tells the upstream to stop. A finished
 * task answers 409 `task_finished`; unknown ids 404.
 */
export async function cancelTask(deps: TaskReadDeps, ctx: GatewayContext, kind: string, label: string): Promise<TaskRow> {
  const auth = authOf(ctx);
  const id = ctx.params.taskId!;
  const row = await deps.tasks.read(kind, id, auth.accountId);
  if (!row) throw new ApiError(404, 'task_not_found', `${label} task ${id} not found`);
  let position;
  try {
    const result = await deps.tasks.run(taskStream(kind, id), { type: 'Cancel', reason: 'cancelled by the client', now: deps.tasks.now() }, { requestId: ctx.state.requestId });
    position = result.position;
  } catch (err) {
    if (err instanceof DomainError && err.code === 'task_finished') {
      throw new DomainError('task_finished', `${label} task ${id} ${err.message.replace(/^task /, '')}; only an unfinished task can be cancelled`);
    }
    throw err;
  }
  if (position) await deps.progress.waitFor(position, TASK_VIEWS, deps.config.projectionWaitMs);
  const fresh = await deps.tasks.read(kind, id, auth.accountId);
  if (!fresh) throw new Error(`task ${id} vanished from the tasks view`);
  return fresh;
}

export function iso(date: Date): string {
  return date.toISOString();
}

/**
 * The read of an erase or podcast task: `processing` while queued or running, the kind's own
 * members once succeeded, the error message once failed, ISO times last. `model` only where the
 * kind's spec lists it.
 */
export function renderProcessingTask(row: TaskRowHead, shape: { model: boolean; succeeded: () => Record<string, unknown> }): Record<string, unknown> {
  const status = row.status === 'queued' || row.status === 'running' ? 'processing' : row.status;
  const body: Record<string, unknown> = shape.model ? { id: row.task_id, model: row.model, status } : { id: row.task_id, status };
  if (status === 'succeeded') Object.assign(body, shape.succeeded());
  if (status === 'failed') body.error = row.error?.message ?? 'the task failed';
  body.created_at = iso(row.created_at);
  body.updated_at = iso(row.updated_at);
  return body;
}

/** The signed gateway link of a task's archived file `name`, or null while it is not archived. */
export function archivedUrl(row: TaskRowHead, name: string, signer: UrlSigner, ttlMs: number): string | null {
  const file = row.archived?.find((a) => a.name === name);
  return file ? signer.url(file.key, ttlMs).url : null;
}

export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** The file type of image bytes by their signature (providers' declared types are not trusted). */
export function sniffImage(bytes: Buffer): { contentType: 'image/png' | 'image/jpeg'; extension: '.png' | '.jpg' } | null {
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return { contentType: 'image/png', extension: '.png' };
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { contentType: 'image/jpeg', extension: '.jpg' };
  return null;
}
