import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { AccountService } from '../src/accounts/service';
import { accountDecider } from '../src/domain/account/decider';
import { accountStream, type AccountEvent } from '../src/domain/account/events';
import { CommandHandler } from '../src/domain/command-handler';
import { PostgresSnapshotStore } from '../src/eventstore/postgres/snapshots';
import type { ExpectedVersion, NewEvent } from '../src/eventstore/port';
import { PostgresEventStore } from '../src/eventstore/postgres/store';
import { newId } from '../src/ids';
import { createLogger } from '../src/log';
import { ConsumerProgress } from '../src/projections-runtime/progress';
import { measure, measureOnce, printTable, type Measurement, type Table } from './support';

export type Report = (table: Table) => void;

/** Tunables; the defaults keep the whole section around a minute on 2 cores. */
export interface EventStoreBenchOptions {
  /** Measured time of each append / INSERT run. */
  readonly appendDurationMs?: number;
  readonly appendConcurrency?: number;
  /** Streams each append worker cycles through (so many streams are written, each by one worker). */
  readonly streamsPerWorker?: number;
  readonly batchSize?: number;
  /** Events in the big account (bulk-inserted). */
  readonly bigAccountEvents?: number;
  /** Measured time of each reserve+release run. */
  readonly cycleDurationMs?: number;
  readonly warmupMs?: number;
}

const DEFAULTS: Required<EventStoreBenchOptions> = {
  appendDurationMs: 3000,
  appendConcurrency: 16,
  streamsPerWorker: 32,
  batchSize: 10,
  bigAccountEvents: 100_000,
  cycleDurationMs: 3000,
  warmupMs: 300,
};

function progress(message: string): void {
  process.stderr.write(`  .. ${message}\n`);
}

export async function benchEventStore(pool: Pool, report: Report = printTable, options: EventStoreBenchOptions = {}): Promise<Table[]> {
  const o = { ...DEFAULTS, ...options };
  const tables = [await benchAppends(pool, o), await benchReservations(pool, o)];
  for (const t of tables) report(t);
  return tables;
}

/* ------------------------------------------------------------------------------------------------
 * 1. es_append next to plain INSERTs of the same rows
 * ---------------------------------------------------------------------------------------------- */

/**
 * The same columns as es_events, and the same constraints and indexes (unique event_id, the
 * (tx_id, position) index), so that the difference is what es_append adds per call: the advisory
 * lock, the es_streams row lock/update, the expected-version check and the NOTIFY.
 */
const PLAIN_TABLE = `
  DROP TABLE IF EXISTS bench_plain;
  CREATE TABLE bench_plain (
    position bigserial PRIMARY KEY,
    tx_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
    stream_id text NOT NULL,
    revision bigint NOT NULL,
    event_id uuid NOT NULL UNIQUE,
    type text NOT NULL,
    data jsonb NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{}',
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (stream_id, revision)
  );
  CREATE INDEX bench_plain_global_order ON bench_plain (tx_id, position);
`;

/** A representative event body (about the size of a FundsReserved). */
function sampleEvent(stream: string, revision: number): NewEvent & { id: string } {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    type: 'FundsReserved',
    data: {
      reservationId: `rsv_${stream}_${revision}`,
      amount: 1200,
      purpose: { kind: 'request', ref: `req_${revision}`, description: 'bench-model', actor: 'system', model: 'bench-model', endpoint: 'test' },
      expiresAt: now,
      at: now,
    },
    metadata: { requestId: `req_${revision}` },
  };
}

/** Per worker, a fixed set of streams written round-robin; only that worker writes them. */
class StreamCursor {
  private readonly next: number[];
  constructor(
    private readonly prefix: string,
    private readonly worker: number,
    private readonly streams: number,
  ) {
    this.next = Array.from({ length: streams }, () => 0);
  }
  /** The stream of the worker's i-th operation and the revision its first new event gets. */
  pick(i: number): { stream: string; index: number; revision: number } {
    const index = i % this.streams;
    return { stream: `${this.prefix}-w${this.worker}-s${index}`, index, revision: this.next[index]! };
  }
  advance(index: number, by: number): void {
    this.next[index]! += by;
  }
}

function cursors(prefix: string, workers: number, streams: number): StreamCursor[] {
  return Array.from({ length: workers }, (_, w) => new StreamCursor(prefix, w, streams));
}

function plainInsertSql(rows: number): string {
  const values = Array.from({ length: rows }, (_, r) => {
    const b = r * 6;
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6})`;
  });
  return `INSERT INTO bench_plain (stream_id, revision, event_id, type, data, metadata) VALUES ${values.join(', ')}`;
}

async function benchAppends(pool: Pool, o: Required<EventStoreBenchOptions>): Promise<Table> {
  await pool.query(PLAIN_TABLE);
  const store = new PostgresEventStore({ pool });
  const run = newId('run');
  const common = { durationMs: o.appendDurationMs, concurrency: o.appendConcurrency, warmupMs: o.warmupMs };
  const rows: Measurement[] = [];
  try {
    for (const size of [1, o.batchSize]) {
      const label = size === 1 ? 'single event' : `batch of ${size}`;
      const sqlN = plainInsertSql(size);

      progress(`plain INSERT, ${label}`);
      const plainCursors = cursors(`plain${size}-${run}`, o.appendConcurrency, o.streamsPerWorker);
      rows.push(
        await measure(
          `plain INSERT, ${label}`,
          async (w, i) => {
            const c = plainCursors[w]!;
            const { stream, index, revision } = c.pick(i);
            const params: unknown[] = [];
            for (let k = 0; k < size; k++) {
              const e = sampleEvent(stream, revision + k);
              params.push(stream, revision + k, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata));
            }
            await pool.query(sqlN, params);
            c.advance(index, size);
          },
          { ...common, unitsPerOp: size },
        ),
      );

      progress(`store.append, ${label}`);
      const appendCursors = cursors(`append${size}-${run}`, o.appendConcurrency, o.streamsPerWorker);
      rows.push(
        await measure(
          `store.append, ${label}`,
          async (w, i) => {
            const c = appendCursors[w]!;
            const { stream, index, revision } = c.pick(i);
            const expectedVersion: ExpectedVersion = revision === 0 ? 'no_stream' : revision - 1;
            const events = Array.from({ length: size }, (_, k) => sampleEvent(stream, revision + k));
            const result = await store.append(stream, events, { expectedVersion });
            c.advance(index, size);
            if (result.nextExpectedVersion !== revision + size - 1) throw new Error(`unexpected revision ${result.nextExpectedVersion} on ${stream}`);
          },
          { ...common, unitsPerOp: size },
        ),
      );
    }
  } finally {
    await store.close();
  }
  const ratio = (size: number): string => {
    const label = size === 1 ? 'single event' : `batch of ${size}`;
    const plain = rows.find((r) => r.name === `plain INSERT, ${label}`)!;
    const append = rows.find((r) => r.name === `store.append, ${label}`)!;
    return `append/plain, ${label}: ${(append.opsPerSec / plain.opsPerSec).toFixed(2)}x events/s`;
  };
  return {
    title: `Event appends vs plain INSERTs of the same rows (${o.appendConcurrency} workers x ${o.streamsPerWorker} streams each, ${o.appendDurationMs / 1000} s per row; latency per call)`,
    unit: 'events/s',
    rows,
    baseline: 'plain INSERT, single event',
    notes: [
      ratio(1),
      ratio(o.batchSize),
      'bench_plain has the columns, constraints and indexes of es_events; store.append adds the stream lock, version check, es_streams update and NOTIFY.',
    ],
  };
}

/* ------------------------------------------------------------------------------------------------
 * 2. Reservation cost: new account vs one with 100,000 events
 * ---------------------------------------------------------------------------------------------- */

const BIG_CREDIT = 1_000_000_000_000;
/** Events folded in isolation to split the cold load into read and fold time. */
const FOLD_SAMPLE = 10_000;
const RESERVED = 100;

/**
 * Writes an account stream of `events` events straight into es_events/es_streams in one
 * statement: AccountOpened (revision 0), CreditAdded (1), then FundsReserved / ReservationSettled
 * pairs (even / odd revisions), with the data shapes of src/domain/account/events.ts.
 */
async function bulkAccount(pool: Pool, accountId: string, events: number): Promise<void> {
  const stream = accountStream(accountId);
  const at = new Date().toISOString();
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO es_events (stream_id, revision, event_id, type, data, metadata)
       SELECT $1::text, r, gen_random_uuid(),
         CASE WHEN r = 0 THEN 'AccountOpened' WHEN r = 1 THEN 'CreditAdded'
              WHEN r % 2 = 0 THEN 'FundsReserved' ELSE 'ReservationSettled' END,
         CASE WHEN r = 0 THEN jsonb_build_object('accountId', $2::text, 'name', 'bench 100k'::text, 'openedAt', $3::text)
              WHEN r = 1 THEN jsonb_build_object('entryId', 'cred_bench'::text, 'amount', $4::bigint, 'reference', 'bench-credit'::text,
                                                 'note', NULL::text, 'at', $3::text)
              WHEN r % 2 = 0 THEN jsonb_build_object('reservationId', 'rsv_bench_' || (r / 2), 'amount', $5::bigint,
                                                 'purpose', jsonb_build_object('kind', 'request'::text, 'ref', 'req_bench_' || (r / 2), 'description', 'bench'::text),
                                                 'expiresAt', $6::text, 'at', $3::text)
              ELSE jsonb_build_object('reservationId', 'rsv_bench_' || ((r - 1) / 2), 'amount', $5::bigint, 'reservedAmount', $5::bigint,
                                      'overrun', 0, 'usage', jsonb_build_object('units', 1), 'at', $3::text)
         END,
         jsonb_build_object('requestId', 'bench-bulk')
       FROM generate_series(0::bigint, $7::bigint - 1) AS r
       ORDER BY r`,
      [stream, accountId, at, BIG_CREDIT, RESERVED, expiresAt, events],
    );
    await client.query('INSERT INTO es_streams (stream_id, revision) VALUES ($1, $2)', [stream, events - 1]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  await pool.query('ANALYZE es_events');
}

function accountServices(pool: Pool, store: PostgresEventStore, progressTracker: ConsumerProgress) {
  const commands = new CommandHandler(store, new PostgresSnapshotStore(pool), accountDecider, createLogger('silent'));
  const service = new AccountService(commands, pool, progressTracker, { projectionWaitMs: 0 });
  return { commands, service };
}

type Services = ReturnType<typeof accountServices>;

async function cycle(s: Services, accountId: string): Promise<void> {
  const reservationId = await s.service.reserve({
    accountId,
    amount: RESERVED,
    purpose: { kind: 'request', ref: newId('req'), description: 'bench', actor: 'system', model: 'bench', endpoint: 'test' },
    ttlMs: 60_000,
  });
  await s.service.release(accountId, reservationId, 'bench');
}

async function snapshotRevision(pool: Pool, stream: string): Promise<number | null> {
  const { rows } = await pool.query<{ revision: string }>('SELECT revision FROM es_snapshots WHERE stream_id = $1', [stream]);
  return rows[0] ? Number(rows[0].revision) : null;
}

async function waitForSnapshot(pool: Pool, stream: string, timeoutMs: number): Promise<number | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const revision = await snapshotRevision(pool, stream);
    if (revision !== null || Date.now() > deadline) return revision;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function benchReservations(pool: Pool, o: Required<EventStoreBenchOptions>): Promise<Table> {
  const store = new PostgresEventStore({ pool });
  const progressTracker = new ConsumerProgress(pool, store, new Map());
  const n = o.bigAccountEvents;
  const measured = { durationMs: o.cycleDurationMs, concurrency: 1, warmupMs: o.warmupMs };
  const rows: Measurement[] = [];
  const notes: string[] = [];
  try {
    // (a) a new account: opened and credited through the command handler.
    const fresh = accountServices(pool, store, progressTracker);
    const freshAccount = await fresh.service.open('bench fresh');
    await fresh.commands.handle(accountStream(freshAccount.id), {
      type: 'AddCredit',
      entryId: newId('cred'),
      amount: BIG_CREDIT,
      reference: 'bench-credit',
      note: null,
      now: new Date().toISOString(),
    });
    progress('reserve+release on a new account');
    rows.push(await measure('new account', () => cycle(fresh, freshAccount.id), measured));

    // (b) an account with n events, bulk-inserted (no snapshot).
    progress(`bulk-inserting an account with ${n.toLocaleString('en-US')} events`);
    const bigId = newId('acct');
    const bigStream = accountStream(bigId);
    const { measurement: bulk } = await measureOnce('bulk insert', () => bulkAccount(pool, bigId, n));
    notes.push(`bulk insert of ${n.toLocaleString('en-US')} events (one INSERT ... SELECT generate_series + ANALYZE): ${(bulk.elapsedMs / 1000).toFixed(2)} s`);

    // Cold: a new command handler, whose first command reads and folds the whole stream.
    progress('cold load (first command of a new handler, no snapshot)');
    const cold = accountServices(pool, store, progressTracker);
    const reservationId = newId('rsv');
    const { measurement: coldLoad } = await measureOnce(
      `${n / 1000}k events, cold load (no snapshot)`,
      () => cold.service.reserve({ accountId: bigId, reservationId, amount: RESERVED, purpose: { kind: 'request', ref: 'cold', description: 'bench', actor: 'system', model: 'bench', endpoint: 'test' }, ttlMs: 60_000 }),
      `first command of a new CommandHandler: reads and replays all ${n.toLocaleString('en-US')} events (one-time cost per process and stream)`,
    );
    rows.push(coldLoad);
    // The replayed state must be the one the bulk insert describes (so the JSON shapes are right).
    const state = (await cold.commands.load(bigStream)).state;
    const pairs = (n - 2) / 2;
    if (!state.exists || state.credited !== BIG_CREDIT || state.settled !== Math.floor(pairs) * RESERVED || state.frozen !== RESERVED) {
      throw new Error(`the bulk-inserted account folds to an unexpected state: ${JSON.stringify({ ...state, recentlyClosed: undefined, recentlyClosedOrder: undefined })}`);
    }
    await cold.service.release(bigId, reservationId, 'bench');

    progress(`reserve+release on the ${n / 1000}k-event account, warm`);
    rows.push(await measure(`${n / 1000}k events, warm`, () => cycle(cold, bigId), measured));

    // Cold again, now that the handler has written a snapshot (every 500 events).
    const snapRevision = await waitForSnapshot(pool, bigStream, 2000);
    const head = (await cold.commands.load(bigStream)).revision;
    if (snapRevision !== null) {
      progress('cold load from the snapshot');
      const again = accountServices(pool, store, progressTracker);
      const snapReservationId = newId('rsv');
      const { measurement } = await measureOnce(
        `${n / 1000}k events, cold load (snapshot)`,
        () => again.service.reserve({ accountId: bigId, reservationId: snapReservationId, amount: RESERVED, purpose: { kind: 'request', ref: 'cold', description: 'bench', actor: 'system', model: 'bench', endpoint: 'test' }, ttlMs: 60_000 }),
        `first command of another new CommandHandler: reads the snapshot at revision ${snapRevision} and replays the ${head - snapRevision} newer events`,
      );
      rows.push(measurement);
      await again.service.release(bigId, snapReservationId, 'bench');
    } else {
      notes.push('no snapshot was written during the warm run (fewer than 500 events appended), so no cold-from-snapshot row');
    }

    // Where the cold time goes: reading the rows vs folding them.
    progress('breaking the cold load down: read vs fold');
    const { measurement: read, result: recorded } = await measureOnce('readStream', () => store.readStream(bigStream));
    const sample = recorded.slice(0, Math.min(FOLD_SAMPLE, recorded.length));
    const { measurement: fold } = await measureOnce('fold', async () => {
      let folded = accountDecider.initialState();
      for (const e of sample) folded = accountDecider.evolve(folded, { type: e.type, data: e.data } as AccountEvent);
      return folded;
    });
    const foldPerEvent = fold.elapsedMs / sample.length;
    notes.push(
      `cold load breakdown: store.readStream of all ${recorded.length.toLocaleString('en-US')} events (incl. jsonb decoding) ${read.elapsedMs.toFixed(0)} ms ` +
        `(PostgreSQL cache now warm); accountDecider.evolve ${(foldPerEvent * 1000).toFixed(0)} us/event over the first ${sample.length.toLocaleString('en-US')} events ` +
        `=> ~${((foldPerEvent * recorded.length) / 1000).toFixed(1)} s to fold them all: the fold, not the read, dominates`,
    );
  } finally {
    await store.close();
  }
  return {
    title: `Reservation cost (reserve + release, sequential): new account vs ${n.toLocaleString('en-US')}-event account (${o.cycleDurationMs / 1000} s per row)`,
    unit: 'cycles/s',
    rows,
    baseline: 'new account',
    notes: [
      ...notes,
      'warm: the CommandHandler caches the state per stream, so a warm command reads only newer events (none) and appends; cost should not depend on stream length.',
      'cold-load rows are single samples (ops/s = 1 / latency).',
    ],
  };
}
