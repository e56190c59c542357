import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, sendJson } from './http';
import type { ExtraRoute } from './server';

/**
 * The task machinery the simulated task providers (images, podcasts, subtitle erase, video) share:
 * tasks by id, created once per X-Client-Request-Id, and their phase by time: queued for the first
 * fifth of their time, then running, then succeeded or failed (`[sim:fail]`); cancelled when the
 * client cancelled them first. Each provider keeps its own wire format.
 */

/** The directives that time a simulated task: `[sim:delay=MS]`, `[sim:fail]`, `[sim:hold]`. */
export interface SimTaskDirectives {
  readonly delayMs?: number;
  readonly fail: boolean;
  readonly raw: Readonly<Record<string, string | true>>;
}

/** When a simulated task finishes, and how. */
export interface SimTaskTiming {
  readonly createdAt: number;
  /** Infinity while held (`hold`): the task stays queued until released. */
  finishAt: number;
  readonly fail: boolean;
  cancelled: boolean;
}

export interface SimTask extends SimTaskTiming {
  readonly id: string;
  readonly model: string;
}

export type SimTaskPhase = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A simulated task's phase at `now`. */
export function simTaskPhase(task: SimTaskTiming, now = Date.now()): SimTaskPhase {
  if (task.cancelled) return 'cancelled';
  if (now < task.finishAt) return now >= task.createdAt + (task.finishAt - task.createdAt) / 5 ? 'running' : 'queued';
  return task.fail ? 'failed' : 'succeeded';
}

/** Cancels a simulated task unless it already finished (409, as providers answer). */
export function simCancel(task: SimTaskTiming): void {
  const phase = simTaskPhase(task);
  if (phase === 'succeeded' || phase === 'failed') throw new HttpError(409, `the task already ${phase}`, 'TaskFinished');
  task.cancelled = true;
}

/** The tasks of one simulated provider. */
export class SimTaskStore<T extends SimTask> {
  private readonly tasks = new Map<string, T>();
  private readonly byClientId = new Map<string, string>();
  private seq = 0;

  /**
   * @param idPrefix task ids are `<idPrefix>-<n>-<creation time in base 36>`, unless `idOf` spells them
   * @param label names a task in the 404 of an unknown id, e.g. `erase task`
   * @param idOf a provider's own id scheme, from the store's sequence number and the creation time
   */
  constructor(
    idPrefix: string,
    private readonly label: string,
    private readonly idOf: (seq: number, now: number) => string = (seq, now) => `${idPrefix}-${seq}-${now.toString(36)}`,
  ) {}

  get(id: string): T | undefined {
    return this.tasks.get(id);
  }

  /** Every task, oldest first. */
  all(): T[] {
    return [...this.tasks.values()];
  }

  /** Deletes a task's record (a provider that deletes finished tasks on request): later reads are 404. */
  forget(id: string): void {
    this.tasks.delete(id);
  }

  /** The task, or 404 `ResourceNotFound`. */
  find(id: string): T {
    const task = this.tasks.get(id);
    if (!task) throw new HttpError(404, `${this.label} ${id} not found`, 'ResourceNotFound');
    return task;
  }

  /** Answers a create whose X-Client-Request-Id already made a task with that task's id; true when it did. */
  replayed(req: IncomingMessage, res: ServerResponse): boolean {
    const clientId = req.headers['x-client-request-id'];
    if (typeof clientId !== 'string' || !this.byClientId.has(clientId)) return false;
    sendJson(res, 200, { id: this.byClientId.get(clientId) });
    return true;
  }

  /**
   * Creates a task that finishes `delayMs` (default 150 ms) from now, failing when `fail`, keeps it
   * under the request's X-Client-Request-Id, and answers with its id. A `hold` directive keeps it
   * queued until its release route is called: a client (a test, a demo) that needs the task
   * unfinished for a while needs no guess of how long that while takes.
   */
  create(
    req: IncomingMessage,
    res: ServerResponse,
    model: string,
    directives: SimTaskDirectives,
    build: (task: SimTask) => T,
  ): T {
    const task = this.add(req, model, directives, build);
    sendJson(res, 200, { id: task.id });
    return task;
  }

  /** Creates a task as `create` does, leaving the answer to a provider whose create answers otherwise. */
  add(req: IncomingMessage, model: string, directives: SimTaskDirectives, build: (task: SimTask) => T): T {
    const now = Date.now();
    const task = build({
      id: this.idOf(++this.seq, now),
      model,
      createdAt: now,
      finishAt: directives.raw['hold'] !== undefined ? Number.POSITIVE_INFINITY : now + (directives.delayMs ?? 150),
      fail: directives.fail,
      cancelled: false,
    });
    this.tasks.set(task.id, task);
    const clientId = req.headers['x-client-request-id'];
    if (typeof clientId === 'string') this.byClientId.set(clientId, task.id);
    return task;
  }

  /** `POST <path>` (path ending in `/:id/release`): a held task finishes now; 409 unless held. */
  releaseRoute(path: string): ExtraRoute {
    return this.taskAction(path, (task) => {
      if (task.finishAt !== Number.POSITIVE_INFINITY || task.cancelled) throw new HttpError(409, 'the task is not held', 'TaskNotHeld');
      task.finishAt = Date.now();
      return { id: task.id, released: true };
    });
  }

  /** `POST <path>` (path ending in `/:id/cancel`): cancels an unfinished task, 409 once finished. */
  cancelRoute(path: string): ExtraRoute {
    return this.taskAction(path, (task) => {
      simCancel(task);
      return { id: task.id, status: 'cancelled' };
    });
  }

  /** `POST <path>` with the task's `:id`: `act` on the task, answered 200 with what it returns. */
  private taskAction(path: string, act: (task: T) => Record<string, unknown>): ExtraRoute {
    return { method: 'POST', path, handler: ({ res, params }) => sendJson(res, 200, act(this.find(params.id!))) };
  }
}

/**
 * A task read in the images / podcasts / erase style: `{ id, model, status }`, with the provider's
 * `error` once failed and its result members once succeeded.
 */
export function sendSimTask(res: ServerResponse, task: SimTask, failure: { code: string; message: string }, succeeded: () => Record<string, unknown>): void {
  const phase = simTaskPhase(task);
  const base = { id: task.id, model: task.model, status: phase };
  if (phase === 'failed') return sendJson(res, 200, { ...base, error: failure });
  if (phase !== 'succeeded') return sendJson(res, 200, base);
  sendJson(res, 200, { ...base, ...succeeded() });
}
