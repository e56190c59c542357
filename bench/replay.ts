import { priceLine, pricingOf } from '../src/billing/money';
import type { Pool } from 'pg';
import { allProjections } from '../projections';
import { runAudit } from '../src/audit/audit';
import { accountDecider } from '../src/domain/account/decider';
import { accountStream } from '../src/domain/account/events';
import { CommandHandler } from '../src/domain/command-handler';
import { PostgresSnapshotStore } from '../src/eventstore/postgres/snapshots';
import { PostgresEventStore } from '../src/eventstore/postgres/store';
import { newId } from '../src/ids';
import { createLogger } from '../src/log';
import { READ_MODEL_SCHEMA } from '../src/projections-runtime/consumer';
import { rebuildProjections } from '../src/projections-runtime/rebuild';
import { ensureProjectionTables } from '../src/projections-runtime/tables';
import { integerFromEnv, measureOnceWithCpu, printTable, profiled, progress, type CpuTime, type Measurement, type Table } from './support';

/**
 * Replay speed: `npm run projections:rebuild` and `npm run audit` (their library functions) over
 * a log of account traffic written through the account decider: many accounts, each opened,
 * credited, then reserving and settling. Reported in events per second of the log.
 */

export interface ReplayBenchOptions {
  readonly accounts: number;
  /** Reserve + settle pairs per account (two events each). */
  readonly cyclesPerAccount: number;
}

/** BENCH_REPLAY_ACCOUNTS, BENCH_REPLAY_CYCLES. */
export function replayOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ReplayBenchOptions {
  const int = (name: string, fallback: number): number => integerFromEnv(env, name, fallback, 1);
  return { accounts: int('BENCH_REPLAY_ACCOUNTS', 200), cyclesPerAccount: int('BENCH_REPLAY_CYCLES', 100) };
}

export async function benchReplay(pool: Pool, report: (table: Table) => void = printTable, o: ReplayBenchOptions = replayOptionsFromEnv()): Promise<Table> {
  const logger = createLogger('silent');
  const store = new PostgresEventStore({ pool });
  try {
    await ensureProjectionTables(pool, allProjections, READ_MODEL_SCHEMA);
    const events = await benchReplayWriteLog(pool, store, o);
    // Measured inside the profile (when BENCH_PROFILE_DIR asks for one), so writing it out is not counted.
    const rebuild = await profiled('replay-rebuild', () =>
      measureOnceWithCpu('projections:rebuild', pool, () => rebuildProjections(pool, store, allProjections, READ_MODEL_SCHEMA, logger)),
    );
    const audit = await profiled('replay-audit', () => measureOnceWithCpu('audit', pool, () => runAudit(pool, store, allProjections, { staleAfterMs: 3_600_000 })));
    if (!audit.result.ok) throw new Error(`the audit of the bench log failed: ${JSON.stringify(audit.result)}`);
    const table: Table = {
      title: `Replay of a ${events.toLocaleString('en-US')}-event log (${o.accounts} accounts)`,
      unit: 'events/s',
      rows: [rebuild, audit].flatMap(({ measurement, cpu }) => perSecondRows(measurement, cpu, events)),
      notes: [
        `goal: >= 100,000 events/s for each; each reads the log once in pages and folds every page into all ${allProjections.length} projections`,
        'per wall s: events / elapsed time; per CPU s: events / CPU time of this process (process.cpuUsage), and of this process plus the',
        "PostgreSQL backends of the bench database (/proc); CPU time barely depends on what else runs on the machine, wall time does",
      ],
    };
    report(table);
    return table;
  } finally {
    await store.close();
  }
}

/** A command's speed three ways: per second of wall time, of this process's CPU time, and of its CPU time plus PostgreSQL's. */
function perSecondRows(m: Measurement, cpu: CpuTime, events: number): Measurement[] {
  const row = (what: string, ms: number, note: string): Measurement => ({ ...m, name: `${m.name}, per ${what}`, opsPerSec: events / (ms / 1000), note });
  const rows = [
    row('wall s', m.elapsedMs, `${(m.elapsedMs / 1000).toFixed(1)} s wall`),
    row('node CPU s', cpu.nodeMs, `${(cpu.nodeMs / 1000).toFixed(1)} s CPU in node`),
  ];
  if (cpu.postgresMs !== null) rows.push(row('node+pg CPU s', cpu.nodeMs + cpu.postgresMs, `${(cpu.postgresMs / 1000).toFixed(1)} s CPU in PostgreSQL`));
  return rows;
}

/** Account traffic through the decider, all accounts at once (so appends are group-committed); returns the events written. */
export async function benchReplayWriteLog(pool: Pool, store: PostgresEventStore, o: ReplayBenchOptions): Promise<number> {
  const commands = new CommandHandler(store, new PostgresSnapshotStore(pool), accountDecider, createLogger('silent'));
  const now = () => new Date().toISOString();
  progress(`writing the log: ${o.accounts} accounts x ${o.cyclesPerAccount} reserve + settle`);
  let events = 0;
  await Promise.all(
    Array.from({ length: o.accounts }, async () => {
      const accountId = newId('acct');
      const stream = accountStream(accountId);
      const run = async (command: Parameters<typeof commands.handle>[1]) => {
        const result = await commands.handle(stream, command);
        events += result.events.length;
      };
      await run({ type: 'OpenAccount', accountId, name: 'replay bench', now: now() });
      await run({ type: 'AddCredit', entryId: newId('cred'), amount: 1_000_000_000, reference: `bench-${accountId}`, note: null, now: now() });
      for (let i = 0; i < o.cyclesPerAccount; i++) {
        const reservationId = newId('rsv');
        await run({
          type: 'Reserve',
          reservationId,
          amount: 1000,
          purpose: { kind: 'request', ref: newId('req'), description: 'chat-fast', actor: 'bench', model: 'chat-fast', endpoint: 'POST /v1/chat/completions' },
          expiresAt: new Date(Date.now() + 600_000).toISOString(),
          now: now(),
        });
        await run({ type: 'Settle', reservationId, pricing: pricingOf(priceLine({ total_tokens: 100 }, { total_tokens: 7 })), usage: { total_tokens: 100 }, now: now() });
      }
    }),
  );
  return events;
}
