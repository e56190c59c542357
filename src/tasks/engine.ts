import type { AccountService } from '../accounts/service';
import type { ModelEntry } from '../billing/catalog';
import { CommandHandler } from '../domain/command-handler';
import { PostgresSnapshotStore } from '../eventstore/postgres/snapshots';
import { DomainError } from '../domain/decider';
import type { EventMetadata } from '../eventstore/port';
import { newId } from '../ids';
import type { Logger } from '../log';
import type { ConsumerProgress } from '../projections-runtime/progress';
import { isTerminal, taskDecider, type TaskCommand, type TaskState } from './decider';
import { taskIdOfStream, taskStream, type Callback, type TaskError, type TaskEvent } from './events';
import { IdempotencyKeys, retryShortly, type KeyClaim } from './idempotency';
import { decodeRow, engineKind, TaskRejected, type EngineKind, type KindRow, type TaskKind, type TaskKindCodec } from './kind';
import { readTask, listTasks } from './read';
import { submittedRow, type TaskRow } from './view-row';
import type { Pool } from 'pg';
import type { EventStore } from '../eventstore/port';

export interface TaskEngineDeps {
  readonly pool: Pool;
  readonly store: EventStore;
  readonly accounts: Pick<AccountService, 'reserve' | 'release' | 'anyOpen'>;
  readonly progress: Pick<ConsumerProgress, 'waitFor' | 'waitForStream'>;
  readonly logger: Logger;
  readonly clock: () => Date;
  readonly settings: {
    readonly projectionWaitMs: number;
    /** How long an Idempotency-Key's claim holds the key before another request may take it over. */
    readonly idempotencyLeaseMs: number;
    /**
     * How long the submit job waits behind a creator that submits inline (submitOnce): it only
     * runs if the creator crashed or could not reach the provider.
     */
    readonly inlineSubmitGraceMs: number;
  };
}

export interface CreateTaskInput<Request> {
  /** The task's kind (its name, id prefix and the codec its request is recorded with). */
  readonly kind: TaskKindCodec<Request, unknown, unknown>;
  readonly accountId: string;
  /** Who asked (the API key id) and through which endpoint, for the ledger. */
  readonly actor: string;
  readonly endpoint: string;
  /** The catalog's entry the estimate was priced by, recorded as the task's modelAtSubmission. */
  readonly model: ModelEntry;
  readonly request: Request;
  readonly estimate: number;
  readonly callback: Callback | null;
  readonly idempotency: { key: string; hash: string } | null;
  readonly requestId: string;
  /**
   * The creator submits to the upstream itself right away (submitOnce) to answer with the
   * upstream's verdict; the submit job then only runs `inlineSubmitGraceMs` later, as the safety
   * net for a crash or an unreachable provider. Unset: the submit job runs at once.
   */
  readonly submitsInline?: boolean;
}

/** What `submitOnce` did; `accepted` carries the acceptance it recorded (null when the task had it already). */
export type SubmitOutcome =
  | { readonly outcome: 'accepted'; readonly accepted: Extract<TaskEvent, { type: 'TaskUpstreamAccepted' }>['data'] | null }
  | { readonly outcome: 'rejected'; readonly error: TaskError; readonly failed: Extract<TaskEvent, { type: 'TaskFailed' }>['data'] | null }
  | { readonly outcome: 'skipped' };

/** A task reservation lives as long as the task can: the task's own process closes it. */
const TASK_RESERVATION_TTL_MS = 30 * 24 * 3_600_000;
export const TASK_VIEWS = ['tasks'];

/**
 * The asynchronous task engine shared by every task kind: creation (idempotency, reservation,
 * submission), reads, and the state every job handler and the process manager work from.
 */
export class TaskEngine {
  readonly commands: CommandHandler<TaskCommand, TaskEvent, TaskState>;
  private readonly kinds = new Map<string, EngineKind>();
  private readonly idempotency: IdempotencyKeys;

  constructor(private readonly deps: TaskEngineDeps) {
    this.commands = new CommandHandler(deps.store, new PostgresSnapshotStore(deps.pool), taskDecider, deps.logger);
    this.idempotency = new IdempotencyKeys(deps.store, deps.clock, deps.settings.idempotencyLeaseMs);
  }

  register<Request, Result, Usage>(kind: TaskKind<Request, Result, Usage>): void {
    this.kinds.set(kind.kind, engineKind(kind));
  }

  kind(name: string): EngineKind {
    const kind = this.kinds.get(name);
    if (!kind) throw new Error(`no task kind ${name}`);
    return kind;
  }

  now(): string {
    return this.deps.clock().toISOString();
  }

  /** Applies a command to a task stream; refusals of commands that cannot apply any more are no-ops upstream. */
  run(stream: string, command: TaskCommand, metadata: EventMetadata = {}) {
    return this.commands.handle(stream, command, metadata);
  }

  async load(stream: string): Promise<TaskState> {
    return (await this.commands.load(stream)).state;
  }

  /**
   * Claims the Idempotency-Key, reserves the estimate and records the task; the process manager
   * takes it from there. The key comes first so that a concurrent duplicate moves no money. Money
   * is reserved before the task is recorded, so a crash in between leaves a reservation whose task
   * never appears, which the reconciler releases (and a key claim whose lease runs out). A claim
   * may name the task stream of an earlier claim of the key (src/tasks/idempotency.ts): if that
   * task was recorded meanwhile by the request the key was taken over from, or by the one that
   * took it over, this request releases its own reservation and answers that task. The task is
   * recorded only while this request's claim is the key's latest: checked after the reservation,
   * so a later claim that finds no earlier reservation open knows no earlier holder will record.
   */
  async create<Request>(input: CreateTaskInput<Request>): Promise<{ row: TaskRow; replayed: boolean }> {
    const kind = this.kind(input.kind.kind);
    const metadata = { requestId: input.requestId };
    const idem = input.idempotency;
    const fresh = taskStream(kind.kind, newId(kind.idPrefix));
    const reservationId = newId('rsv');
    const claim = idem ? await this.idempotency.claim(input.accountId, idem.key, idem.hash, fresh, input.requestId, reservationId) : null;
    if (claim?.kind === 'replay') return { row: await this.replay(kind.kind, claim.taskStream, input.accountId), replayed: true };
    const stream = claim?.taskStream ?? fresh;
    const taskId = taskIdOfStream(stream);
    let result;
    let reserved = false;
    try {
      await this.deps.accounts.reserve(
        { accountId: input.accountId, amount: input.estimate, purpose: { kind: 'task', ref: stream, description: input.model.id, model: input.model.id, actor: input.actor, endpoint: input.endpoint }, ttlMs: TASK_RESERVATION_TTL_MS, reservationId },
        metadata,
      );
      reserved = true;
      if (!idem || !claim || (await this.idempotency.holds(input.accountId, idem.key, claim.revision))) {
        result = await this.run(
          stream,
          {
            type: 'Submit',
            data: {
              taskId,
              kind: kind.kind,
              accountId: input.accountId,
              model: input.model.id,
              request: input.kind.request.encode(input.request),
              reservationId,
              estimate: input.estimate,
              modelAtSubmission: recordedModel(input.model),
              callback: input.callback,
              idempotencyKey: idem?.key ?? null,
              ...(input.submitsInline ? { submitAt: new Date(this.deps.clock().getTime() + this.deps.settings.inlineSubmitGraceMs).toISOString() } : {}),
              at: this.now(),
            },
          },
          metadata,
        );
      }
    } catch (err) {
      // Recorded by the other holder of the key (or by this request's own append, answered as a conflict).
      if (reserved && err instanceof DomainError && err.code === 'task_exists') return this.answerRecorded(kind.kind, stream, input.accountId, reservationId, metadata);
      if (idem && claim) return this.failedBeforeRecord(kind.kind, input.accountId, idem.key, claim, reserved ? reservationId : null, err, metadata);
      throw err;
    }
    if (!result) {
      // The key was taken over or released since this request claimed it: the task is left to the key's current holder.
      await this.deps.accounts.release(input.accountId, reservationId, 'another request took over the Idempotency-Key before the task was recorded', metadata);
      return { row: await this.replay(kind.kind, await this.idempotency.current(input.accountId, idem!.key, idem!.hash), input.accountId), replayed: true };
    }
    // Answered from what was recorded: once the task exists its client must learn its id, and a
    // read of the view here could fail (the database going away) after the money was reserved.
    const submitted = result.events.find((e) => e.type === 'TaskSubmitted');
    if (submitted?.type !== 'TaskSubmitted') throw new Error(`task ${taskId}: the Submit command recorded no TaskSubmitted`);
    // Read your writes (a list right after this answer shows the task), as far as the view keeps
    // up: one that does not within the wait delays the answer, never fails it.
    await this.deps.progress.waitFor(result.position!, TASK_VIEWS, this.deps.settings.projectionWaitMs).catch((err: unknown) => {
      this.deps.logger.warn({ err, taskId }, 'task recorded; its view did not catch up before the answer');
    });
    return { row: submittedRow(submitted.data), replayed: false };
  }

  /** The recorded task `stream`, for a request that reserved `reservationId` (null: none): released unless the task recorded it. */
  private async answerRecorded(kind: string, stream: string, accountId: string, reservationId: string | null, metadata: EventMetadata): Promise<{ row: TaskRow; replayed: boolean }> {
    const ours = reservationId !== null && (await this.load(stream)).reservationId === reservationId;
    if (reservationId !== null && !ours) await this.deps.accounts.release(accountId, reservationId, 'another request with the Idempotency-Key recorded its task', metadata);
    return { row: await this.replay(kind, stream, accountId), replayed: !ours };
  }

  /**
   * A request that claimed its key failed before recording its task (a short balance, the
   * database): it answers the task if another holder of the key recorded it, and otherwise frees
   * the key. Its failure is its answer unless an earlier claim's reservation is still open: that
   * holder may still record the task, so the client is told to retry (429), never refused for
   * good. Asked in this order because a task reservation closes only once its task is recorded,
   * or by its own holder, which then records nothing. A reservation of this request is left to
   * the reconciler: a failed append may have committed.
   */
  private async failedBeforeRecord(kind: string, accountId: string, key: string, claim: Extract<KeyClaim, { kind: 'claimed' }>, reservationId: string | null, err: unknown, metadata: EventMetadata): Promise<{ row: TaskRow; replayed: boolean }> {
    const earlierMayRecord = await this.deps.accounts.anyOpen(accountId, claim.earlierReservations);
    if (await this.deps.store.streamHead(claim.taskStream)) return this.answerRecorded(kind, claim.taskStream, accountId, reservationId, metadata);
    await this.idempotency.release(accountId, key, claim.revision, claim.taskStream);
    throw earlierMayRecord ? retryShortly() : err;
  }

  /** The task an earlier request with the Idempotency-Key recorded. */
  private async replay(kind: string, stream: string, accountId: string): Promise<TaskRow> {
    const row = await this.read(kind, taskIdOfStream(stream), accountId);
    if (!row) throw retryShortly();
    return row;
  }

  /**
   * Submits a recorded task to its upstream unless that already happened or the task finished:
   * `accepted`, `rejected` (the upstream refused it for good: the task failed) or `skipped`.
   * Transient failures (UpstreamError) are thrown to the caller. Used by the submit job, and by
   * creators that answer with the upstream's verdict (see CreateTaskInput.submitsInline).
   */
  async submitOnce(stream: string, metadata: EventMetadata): Promise<SubmitOutcome> {
    const task = await this.load(stream);
    if (isTerminal(task.status) || task.upstreamId) return { outcome: 'skipped' };
    try {
      const { upstreamId, details, channel } = await this.kind(task.kind).submit(task);
      const command = { type: 'AcceptUpstream', upstreamId, ...(details ? { details } : {}), ...(channel === undefined ? {} : { channel }), now: this.now() } as const;
      const accepted = await this.run(stream, command, metadata);
      const event = accepted.events.find((e) => e.type === 'TaskUpstreamAccepted');
      return { outcome: 'accepted', accepted: event?.type === 'TaskUpstreamAccepted' ? event.data : null };
    } catch (err) {
      if (!(err instanceof TaskRejected)) throw err;
      const failed = await this.run(stream, { type: 'Fail', error: err.error, now: this.now() }, metadata);
      const event = failed.events.find((e) => e.type === 'TaskFailed');
      return { outcome: 'rejected', error: err.error, failed: event?.type === 'TaskFailed' ? event.data : null };
    }
  }

  /** A task of this account, as fresh as its stream; null for unknown ids and other accounts' tasks. */
  async read(kind: string, taskId: string, accountId: string): Promise<TaskRow | null> {
    await this.deps.progress.waitForStream(taskStream(kind, taskId), TASK_VIEWS, this.deps.settings.projectionWaitMs);
    return readTask(this.deps.pool, kind, taskId, accountId);
  }

  /** Like `read`, with the kind's data decoded by its codec. */
  async readDecoded<Request, Result, Usage>(codec: TaskKindCodec<Request, Result, Usage>, taskId: string, accountId: string): Promise<KindRow<Request, Result, Usage> | null> {
    const row = await this.read(codec.kind, taskId, accountId);
    return row && decodeRow(codec, row);
  }

  list(kind: string, accountId: string, page: { after: string | null; limit: number }) {
    return listTasks(this.deps.pool, kind, accountId, page);
  }

  async redeliver(kind: string, taskId: string, accountId: string, requestId: string): Promise<string> {
    const row = await this.read(kind, taskId, accountId);
    if (!row) throw new DomainError('task_not_found', `task ${taskId} not found`);
    const deliveryId = `dlv_${taskId}_${row.deliveries.length}`;
    await this.run(taskStream(kind, taskId), { type: 'RequestRedelivery', deliveryId, now: this.now() }, { requestId });
    return deliveryId;
  }
}

/** A catalog entry as a task records it: what prices and bounds the task, without its description. */
function recordedModel(model: ModelEntry): ModelEntry {
  const { description: _description, ...recorded } = model;
  return recorded;
}
