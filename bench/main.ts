import os from 'node:os';
import type { Pool } from 'pg';
import { abOptionsFromEnv, benchAb } from './ab';
import { benchChat, chatOptionsFromEnv } from './chat';
import { benchEventStore } from './eventstore';
import { benchHotPath, hotPathOptionsFromEnv } from './hotpath';
import { benchLimits } from './limits';
import { benchPeer, peerOptionsFromEnv } from './peer';
import { benchReplay, replayOptionsFromEnv } from './replay';
import { benchStreams, streamsOptionsFromEnv } from './streams';
import { benchTokens } from './tokens';
import { benchVideo, videoOptionsFromEnv } from './video';
import { openBenchDatabase, printHeader, printTable, serverVersion, type BenchDatabase, type Table } from './support';

/**
 * `npm run bench [-- section...]`: runs the benchmark sections (all but the opt-in ones, or those
 * whose name contains one of the arguments) against a fresh database and prints one table per comparison. Every
 * comparison has a baseline measured in the same run; speeds are printed, never asserted.
 */

export interface BenchContext {
  readonly db: BenchDatabase;
  readonly pool: Pool;
  /** Prints a result table (sections call it as each table is ready). */
  readonly report: (table: Table) => void;
}

export interface BenchSection {
  readonly name: string;
  readonly title: string;
  /** Runs only when an argument names it: too long (or too demanding of the host) for every `npm run bench`. */
  readonly optIn?: boolean;
  run(ctx: BenchContext): Promise<void>;
}

/** Add later sections (chat through the gateway vs the simulator, video tasks, ...) here. */
export const SECTIONS: readonly BenchSection[] = [
  {
    name: 'eventstore',
    title: 'Event store: es_append vs plain INSERTs; reservations on a new vs a 100k-event account',
    run: async (ctx) => {
      await benchEventStore(ctx.pool, ctx.report);
    },
  },
  {
    name: 'chat',
    title: 'Chat through the gateway vs the simulator direct, non-stream and stream, same concurrency',
    run: async (ctx) => {
      await benchChat(ctx.db, ctx.report, chatOptionsFromEnv());
    },
  },
  {
    name: 'peer',
    title: "Side by side, each in its own process: the simulator direct, Portkey's gateway, this gateway (autocannon at 1 and 64 connections)",
    run: async (ctx) => {
      await benchPeer(ctx.db, ctx.report, peerOptionsFromEnv());
    },
  },
  {
    name: 'ab',
    title: 'A/B at one connection: this tree against another revision (BENCH_AB_BASE, HEAD by default), blocks of requests alternated',
    run: async (ctx) => {
      await benchAb(ctx.db, ctx.report, abOptionsFromEnv());
    },
  },
  {
    name: 'hotpath',
    title: 'One non-streamed chat request: gateway and PostgreSQL CPU time, transactions and memory per request',
    run: async (ctx) => {
      await benchHotPath(ctx.db, ctx.report, hotPathOptionsFromEnv());
    },
  },
  {
    name: 'limits',
    title: 'One per-key rate check: in memory vs shared through PostgreSQL, every check or leased',
    run: async (ctx) => {
      await benchLimits(ctx.db, ctx.report);
    },
  },
  {
    name: 'replay',
    title: 'Replay: projections:rebuild and audit over a log of account traffic, in events per second',
    run: async (ctx) => {
      await benchReplay(ctx.pool, ctx.report, replayOptionsFromEnv());
    },
  },
  {
    name: 'tokens',
    title: "Token counting: the simple count vs the catalog tokenizers' BPE encodings, on a typical chat prompt",
    run: async (ctx) => {
      await benchTokens(ctx.report);
    },
  },
  {
    name: 'video',
    title: 'Video tasks: creations per second under engine load vs a plain GET; upstream completion -> webhook latency',
    run: async (ctx) => {
      await benchVideo(ctx.db, ctx.report, videoOptionsFromEnv());
    },
  },
  {
    name: 'streams',
    title: 'Many long streams through one gateway (2,000 of 30 s unless BENCH_STREAMS_*): memory per open stream, event-loop delay, first byte of a new request meanwhile',
    optIn: true,
    run: async (ctx) => {
      await benchStreams(ctx.db, ctx.report, streamsOptionsFromEnv());
    },
  },
];

function selectSections(filters: readonly string[]): BenchSection[] {
  if (filters.length === 0) return SECTIONS.filter((s) => !s.optIn);
  const chosen = SECTIONS.filter((s) => filters.some((f) => s.name.includes(f.toLowerCase())));
  if (chosen.length === 0) {
    throw new Error(`no bench section matches ${filters.join(', ')}; sections: ${SECTIONS.map((s) => s.name).join(', ')}`);
  }
  return chosen;
}

async function main(): Promise<void> {
  const sections = selectSections(process.argv.slice(2).filter((a) => a !== '--'));
  const started = Date.now();
  let db: BenchDatabase | null = null;
  const close = async (): Promise<void> => {
    const open = db;
    db = null;
    await open?.close();
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    process.stderr.write(`\n${signal}: cleaning up\n`);
    void close().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    for (const [i, section] of sections.entries()) {
      // A fresh database per section: one section's data (the 100,000-event account) must not
      // become another's backlog (the gateway's read models folding it).
      const current = await openBenchDatabase();
      db = current;
      if (i === 0) {
        process.stdout.write(
          `bench: PostgreSQL ${await serverVersion(current.pool)} (${current.description}); node ${process.version}; ` +
            `${os.cpus().length} CPUs; sections: ${sections.map((s) => s.name).join(', ')}\n`,
        );
      }
      printHeader(`[${section.name}] ${section.title}`);
      await section.run({ db: current, pool: current.pool, report: printTable });
      await close();
    }
    process.stdout.write(`\nbench: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    await close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
