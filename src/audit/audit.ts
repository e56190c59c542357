import type { Pool, PoolClient } from 'pg';
import { comparePositions, formatPosition, type EventStore, type GlobalPosition, type RecordedEvent } from '../eventstore/port';
import { applyEvents, READ_MODEL_SCHEMA, REPLAY_PAGE_EVENTS, type Projection } from '../projections-runtime/consumer';
import { ensureProjectionTables } from '../projections-runtime/tables';
import type { ProgressSink } from '../projections-runtime/progress-sink';
import { LedgerInvariantChecker } from './ledger-invariants';

export interface AuditReport {
  readonly ok: boolean;
  /** Events in the log when the audit ran. */
  readonly eventsInLog: number;
  readonly head: string | null;
  /** Live read models that differ from a replay of the log, per table. */
  readonly mismatches: readonly string[];
  readonly invariantViolations: readonly string[];
  /** Read models whose checkpoint is behind the head of the log: not a failure, they catch up. */
  readonly lagging: readonly string[];
  /** Reservations open longer than the threshold: reported, not failures. */
  readonly staleReservations: readonly { reservation_id: string; account_id: string; amount: number; reserved_at: string }[];
}

/**
 * The schema an audit replays into: every read model's tables, created by the first audit (again
 * when a read model's DDL changes) and always empty, since each replay is rolled back.
 */
export const AUDIT_REPLAY_SCHEMA = 'audit_replay';

/** Advisory lock (class, key) of an audit's replay: two audits at once take turns. */
export const AUDIT_REPLAY_LOCK = [7_316_003, 0] as const;

/**
 * Replays the log into a scratch schema and compares every live read model with its replay, then
 * checks the ledger invariants from the log alone and compares them with the replayed balances.
 *
 * Everything happens in one REPEATABLE READ transaction: each read model's live checkpoint and
 * rows are read in one snapshot, and each is replayed exactly up to its own checkpoint, so traffic
 * flowing during the audit cannot show up as a false mismatch. The log is read once for all of
 * them. The transaction is rolled back, so the scratch tables need no creating or dropping per
 * audit (most of the cost of an audit of a short log). The live read models are only read.
 */
export async function runAudit(
  pool: Pool,
  store: EventStore,
  projections: readonly Projection[],
  options: { staleAfterMs: number; progress?: ProgressSink },
): Promise<AuditReport> {
  const schema = AUDIT_REPLAY_SCHEMA;
  const mismatches: string[] = [];
  const lagging: string[] = [];
  const invariantViolations: string[] = [];
  const head = await store.headPosition();
  // The work, in events folded: the whole log for the invariants, and each read model up to its checkpoint.
  const inLog = head && store.countEvents ? await store.countEvents(head) : null;
  options.progress?.setTotal(inLog === null ? null : inLog * (1 + projections.length));
  const advance = (events: readonly unknown[]) => options.progress?.advance(events.length);
  const full = new LedgerInvariantChecker();
  let eventsInLog = 0;
  const fullCheck: Replayer = {
    until: head,
    fold: async (events) => {
      events.forEach((e) => full.add(e));
      eventsInLog += events.length;
      advance(events);
    },
  };

  await ensureProjectionTables(pool, projections, schema);
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...AUDIT_REPLAY_LOCK]);
    const live = await checkpointsIn(client, projections);
    await client.query(`SET LOCAL search_path TO ${schema}, public`);
    // The balances are also compared with the totals of the invariant check, folded to the same checkpoint.
    const balanceCheckers: LedgerInvariantChecker[] = [];
    const replayers: Replayer[] = [fullCheck];
    for (const projection of projections) {
      const at = live.get(projection.name) ?? null;
      if (head && (!at || comparePositions(at, head) < 0)) {
        lagging.push(`${projection.name} is at ${at ? formatPosition(at) : 'the start'}, the log at ${formatPosition(head)}`);
      }
      const checker = projection.tables.includes('balances') ? new LedgerInvariantChecker() : null;
      if (checker) balanceCheckers.push(checker);
      replayers.push({
        until: at,
        fold: async (events) => {
          if (checker) for (const event of events) checker.add(event);
          await applyEvents(projection, client, events);
          advance(events);
        },
      });
    }
    await replay(store, replayers);
    for (const [table, n] of await differingRows(client, projections, schema)) {
      if (n > 0) mismatches.push(`${table.projection}: ${n} row(s) of ${table.name} differ from a replay of the log`);
    }
    for (const checker of balanceCheckers) invariantViolations.push(...(await balancesAgainstLog(client, schema, checker)));
  } finally {
    // A connection that could not roll back its replay is closed, never lent out again.
    const rolledBack = await client.query('ROLLBACK').then(
      () => true,
      () => false,
    );
    client.release(!rolledBack);
  }
  invariantViolations.unshift(...full.report().violations);

  const { rows: stale } = await pool.query<{ reservation_id: string; account_id: string; amount: string; reserved_at: Date }>(
    `SELECT reservation_id, account_id, amount, reserved_at FROM ${READ_MODEL_SCHEMA}.reservations
     WHERE status = 'open' AND reserved_at < now() - make_interval(secs => $1::double precision / 1000) ORDER BY reserved_at`,
    [options.staleAfterMs],
  );
  return {
    ok: mismatches.length === 0 && invariantViolations.length === 0,
    eventsInLog,
    head: head ? formatPosition(head) : null,
    mismatches,
    invariantViolations,
    lagging,
    staleReservations: stale.map((r) => ({ reservation_id: r.reservation_id, account_id: r.account_id, amount: Number(r.amount), reserved_at: r.reserved_at.toISOString() })),
  };
}

/** Something fed the log from its start up to and including `until` (null: nothing). */
interface Replayer {
  readonly until: GlobalPosition | null;
  fold(events: RecordedEvent[]): Promise<void>;
}

/** One read of the log, in large pages, up to the furthest `until`; each replayer gets its part. */
async function replay(store: EventStore, replayers: readonly Replayer[]): Promise<void> {
  const bounds = replayers.map((r) => r.until).filter((u): u is GlobalPosition => u !== null);
  if (bounds.length === 0) return;
  const last = bounds.reduce((a, b) => (comparePositions(a, b) >= 0 ? a : b));
  let position: GlobalPosition | null = null;
  for (;;) {
    const page = await store.readAll(position, REPLAY_PAGE_EVENTS);
    if (page.length === 0) return;
    for (const r of replayers) {
      const until = r.until;
      if (!until) continue;
      const part = comparePositions(page[page.length - 1]!.position, until) <= 0 ? page : page.filter((e) => comparePositions(e.position, until) <= 0);
      if (part.length > 0) await r.fold(part);
    }
    position = page[page.length - 1]!.position;
    if (comparePositions(position, last) >= 0) return;
  }
}

/** The live checkpoint of each projection, by name (absent: it has none yet). */
async function checkpointsIn(client: PoolClient, projections: readonly Projection[]): Promise<Map<string, GlobalPosition>> {
  const { rows } = await client.query<{ name: string; major: string; minor: string }>(
    'SELECT name, major::text, minor::text FROM consumer_checkpoints WHERE name = ANY($1) AND major IS NOT NULL AND minor IS NOT NULL',
    [projections.map((p) => p.name)],
  );
  return new Map(rows.map((r) => [r.name, { major: BigInt(r.major), minor: BigInt(r.minor) }]));
}

/**
 * For every table of every projection, the rows that differ between the live read model and its
 * replay (in either direction, duplicates counted): one statement for all tables.
 */
async function differingRows(client: PoolClient, projections: readonly Projection[], schema: string): Promise<[{ projection: string; name: string }, number][]> {
  const tables = projections.flatMap((p) => p.tables.map((name) => ({ projection: p.name, name })));
  const count = ({ name }: { name: string }) => {
    const live = `${READ_MODEL_SCHEMA}.${name}`;
    const replayed = `${schema}.${name}`;
    return `(SELECT count(*) FROM ((SELECT * FROM ${live} EXCEPT ALL SELECT * FROM ${replayed})
       UNION ALL (SELECT * FROM ${replayed} EXCEPT ALL SELECT * FROM ${live})) d)`;
  };
  const { rows } = await client.query<Record<string, string>>(`SELECT ${tables.map((t, i) => `${count(t)} AS t${i}`).join(', ')}`);
  return tables.map((t, i) => [t, Number(rows[0]![`t${i}`])]);
}

/** The balances read model must equal the totals folded from the log by the invariant checker. */
async function balancesAgainstLog(client: PoolClient, schema: string, checker: LedgerInvariantChecker): Promise<string[]> {
  const { totals } = checker.report();
  const { rows } = await client.query<{ account_id: string; available: string; frozen: string }>(`SELECT account_id, available, frozen FROM ${schema}.balances`);
  const out: string[] = [];
  for (const b of rows) {
    const t = totals.get(b.account_id) ?? { available: 0, frozen: 0 };
    if (Number(b.available) !== t.available || Number(b.frozen) !== t.frozen) {
      out.push(`account ${b.account_id}: balances say available ${b.available}, frozen ${b.frozen}; the log says ${t.available}, ${t.frozen}`);
    }
  }
  return out;
}
