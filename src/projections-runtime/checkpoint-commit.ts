import type { Pool, PoolClient, QueryResult } from 'pg';
import { comparePositions, type GlobalPosition, type RecordedEvent } from '../eventstore/port';
import type { Logger } from '../log';
import { applyEvents, type Consumer } from './consumer';

/** The checkpoint moved under us (a rebuild reset it, or another instance advanced it). */
export class CheckpointMoved extends Error {}

/** A consumer's batch to fold, and the checkpoint to store with it. */
export interface CommitRequest {
  readonly consumer: Consumer;
  /** Where the checkpoint row must still stand (where this runner left it); else CheckpointMoved. */
  readonly expected: GlobalPosition | null;
  readonly batch: readonly RecordedEvent[];
  readonly last: GlobalPosition;
}

/** Folds a batch and stores its checkpoint in the same transaction, so each event is applied exactly once. */
export interface CheckpointCommitter {
  commit(request: CommitRequest): Promise<void>;
  /** Creates the consumer's checkpoint row if it has none, and reads where it stands. */
  openCheckpoint(name: string): Promise<GlobalPosition | null>;
}

/** Equal positions, or both none. */
export function samePosition(a: GlobalPosition | null, b: GlobalPosition | null): boolean {
  return a === null || b === null ? a === b : comparePositions(a, b) === 0;
}

interface CheckpointRow {
  readonly name: string;
  readonly major: string | null;
  readonly minor: string | null;
}

/** The position a consumer_checkpoints row stores (its columns read as text); null for none, or no row. */
export function storedPosition(row: Pick<CheckpointRow, 'major' | 'minor'> | undefined): GlobalPosition | null {
  return row?.major != null && row.minor != null ? { major: BigInt(row.major), minor: BigInt(row.minor) } : null;
}

/**
 * What became of a request in commitInOneTransaction: folded and stored; refused because its row
 * is not where its runner left it (or is gone: a projection whose tables were recreated); or left
 * out because another transaction holds its row (only with `skipLocked`).
 */
type Outcome = 'committed' | 'moved' | 'busy';

/**
 * Folds the requests' batches and stores their checkpoints in one transaction that first locks
 * their checkpoint rows (in name order) and checks each stands where its runner left it; a request
 * whose row does not is left out, and the others commit. With `skipLocked`, rows another
 * transaction holds (a rebuild resetting that projection) are left out too, rather than waited
 * for with every other consumer's commit. Two round trips besides the consumers' own statements:
 * the opening and the closing statements go as one multi-statement simple query each (the names
 * are escaped, the positions are integers), since a round trip is most of a small batch's cost.
 * Throws, having rolled back, if anything fails.
 */
async function commitInOneTransaction(pool: Pool, schema: string, requests: readonly CommitRequest[], options: { skipLocked: boolean }): Promise<Map<CommitRequest, Outcome>> {
  const client: PoolClient = await pool.connect();
  const outcomes = new Map<CommitRequest, Outcome>();
  /** Set when the rollback failed too: the connection is in an unknown state and is not pooled again. */
  let broken: Error | undefined;
  try {
    const named = requests.map((request) => ({ request, name: client.escapeLiteral(request.consumer.name) }));
    // A multi-statement simple query answers one result per statement (pg's typings say one).
    const opened: unknown = await client.query(
      `BEGIN; SET LOCAL search_path TO ${schema}, public; ` +
        `SELECT name, major::text, minor::text FROM consumer_checkpoints WHERE name IN (${named.map((n) => n.name).join(', ')}) ` +
        `ORDER BY name FOR UPDATE${options.skipLocked ? ' SKIP LOCKED' : ''}`,
    );
    const selected: QueryResult<CheckpointRow> | undefined = Array.isArray(opened) ? opened[2] : undefined;
    const rows = new Map((selected?.rows ?? []).map((row) => [row.name, row]));
    const kept = named.filter(({ request }) => {
      const row = rows.get(request.consumer.name);
      if (row && samePosition(storedPosition(row), request.expected)) return true;
      outcomes.set(request, !row && options.skipLocked ? 'busy' : 'moved');
      return false;
    });
    for (const { request } of kept) await applyEvents(request.consumer, client, request.batch);
    const values = kept.map(({ request, name }) => `(${name}, ${request.last.major.toString()}, ${request.last.minor.toString()})`);
    await client.query(
      (values.length === 0
        ? ''
        : 'UPDATE consumer_checkpoints AS c SET major = v.major, minor = v.minor, updated_at = now() ' +
          `FROM (VALUES ${values.join(', ')}) AS v(name, major, minor) WHERE c.name = v.name; `) + 'COMMIT',
    );
    for (const { request } of kept) outcomes.set(request, 'committed');
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackFailed: Error) => void (broken = rollbackFailed));
    throw err;
  } finally {
    client.release(broken);
  }
  return outcomes;
}

/** Where each named consumer's checkpoint stands (null: no position, or no row). */
export async function readCheckpoints(db: Pool, names: readonly string[]): Promise<Map<string, GlobalPosition | null>> {
  const { rows } = await db.query<CheckpointRow>('SELECT name, major::text, minor::text FROM consumer_checkpoints WHERE name = ANY($1)', [names]);
  const stored = new Map(rows.map((row) => [row.name, storedPosition(row)]));
  return new Map(names.map((name) => [name, stored.get(name) ?? null]));
}

/** Creates the checkpoint rows the names lack, then reads where each stands. */
async function openCheckpoints(pool: Pool, names: readonly string[]): Promise<Map<string, GlobalPosition | null>> {
  await pool.query('INSERT INTO consumer_checkpoints (name) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING', [names]);
  return readCheckpoints(pool, names);
}

/** A transaction for each commit: for callers that fold several consumers side by side (the rebuild). */
export function oneTransactionEach(pool: Pool, schema: string): CheckpointCommitter {
  return {
    async commit(request) {
      const outcomes = await commitInOneTransaction(pool, schema, [request], { skipLocked: false });
      if (outcomes.get(request) !== 'committed') throw new CheckpointMoved();
    },
    async openCheckpoint(name) {
      return (await openCheckpoints(pool, [name])).get(name)!;
    },
  };
}

interface Waiting {
  readonly request: CommitRequest;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Commits every request made in the same turn of the event loop in one transaction: one
 * notification wakes all of a process's consumers, and most of those that fold the batch commit
 * together, where each used to spend a transaction (and a durable commit) of its own, which then
 * competed with the appends of the requests being served. If the shared transaction fails (a
 * consumer throws, a deadlock, the database), each request is committed on its own, so that a
 * failing consumer fails alone and the others go on (consumers keep no state but what they write
 * through the transaction, see Consumer, so folding a batch again after a rollback is safe). A
 * consumer whose checkpoint row another transaction holds is committed alone, after the others.
 */
export class GroupCommitter implements CheckpointCommitter {
  private waiting: Waiting[] = [];
  /**
   * Checkpoints asked for in the same turn, opened with one pair of statements: a gateway starts a
   * dozen consumers at once, and their queries side by side opened a pooled connection each
   * (about 11 ms of CPU between the server and the process, per connection).
   */
  private opening: { readonly names: Set<string>; readonly positions: Promise<Map<string, GlobalPosition | null>> } | null = null;
  private readonly alone: CheckpointCommitter;

  constructor(
    private readonly pool: Pool,
    private readonly schema: string,
    private readonly logger: Logger,
  ) {
    this.alone = oneTransactionEach(pool, schema);
  }

  commit(request: CommitRequest): Promise<void> {
    return new Promise((resolve, reject) => {
      // setImmediate runs after the microtasks of the I/O callback that woke the consumers, so the
      // commits of every consumer that woke with it are waiting by then.
      if (this.waiting.push({ request, resolve, reject }) === 1) setImmediate(() => void this.commitWaiting());
    });
  }

  openCheckpoint(name: string): Promise<GlobalPosition | null> {
    if (!this.opening) {
      const names = new Set<string>();
      // setImmediate, as in commit: the consumers started in this turn have all asked by then.
      const positions = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.opening = null;
        return openCheckpoints(this.pool, [...names]);
      });
      this.opening = { names, positions };
    }
    this.opening.names.add(name);
    return this.opening.positions.then((positions) => positions.get(name)!);
  }

  private async commitWaiting(): Promise<void> {
    const group = this.waiting;
    this.waiting = [];
    // A runner commits one batch at a time, so a consumer is in a group at most once; two runners
    // of one consumer (never in the gateway) would need two transactions to check its row twice.
    if (new Set(group.map((w) => w.request.consumer.name)).size < group.length || group.length === 1) {
      await Promise.all(group.map((w) => this.commitAlone(w)));
      return;
    }
    let outcomes: Map<CommitRequest, Outcome>;
    try {
      outcomes = await commitInOneTransaction(this.pool, this.schema, group.map((w) => w.request), { skipLocked: true });
    } catch (err) {
      this.logger.debug({ err, consumers: group.map((w) => w.request.consumer.name) }, 'a group commit failed; committing each consumer alone');
      await Promise.all(group.map((w) => this.commitAlone(w)));
      return;
    }
    const busy: Waiting[] = [];
    for (const w of group) {
      const outcome = outcomes.get(w.request);
      if (outcome === 'committed') w.resolve();
      else if (outcome === 'moved') w.reject(new CheckpointMoved());
      else busy.push(w);
    }
    // Alone, they wait for their rows as a runner always did.
    await Promise.all(busy.map((w) => this.commitAlone(w)));
  }

  private commitAlone(w: Waiting): Promise<void> {
    return this.alone.commit(w.request).then(w.resolve, w.reject);
  }
}
