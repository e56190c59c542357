import { allProjections } from '../../projections';
import { runAudit } from '../audit/audit';
import { openCliContext } from './context';
import { ProgressReporter } from './progress';

/**
 * `npm run audit`: replays the log, compares every read model and the ledger invariants, prints
 * a JSON report and exits 1 on any mismatch. AUDIT_STALE_AFTER_MS (default one day) sets when an
 * open reservation is listed as stale.
 */
async function main(): Promise<number> {
  const ctx = await openCliContext();
  try {
    const staleAfterMs = Number(process.env.AUDIT_STALE_AFTER_MS ?? 86_400_000);
    const progress = new ProgressReporter('audit', process.stderr);
    const report = await runAudit(ctx.db.pool, ctx.store, allProjections, { staleAfterMs, progress });
    progress.finish(report.ok ? 'no mismatches' : 'MISMATCHES (see the report)');
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
    return report.ok ? 0 : 1;
  } finally {
    await ctx.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
