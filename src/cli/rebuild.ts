import { allProjections } from '../../projections';
import { READ_MODEL_SCHEMA } from '../projections-runtime/consumer';
import { rebuildProjections } from '../projections-runtime/rebuild';
import { openCliContext } from './context';
import { ProgressReporter } from './progress';

/**
 * `npm run projections:rebuild [name …]`: empties the named read models (all by default) and
 * replays them from the log. Safe while a gateway runs: its consumers notice the reset checkpoint
 * and replay themselves; this command then only waits for them.
 */
async function main(): Promise<void> {
  const ctx = await openCliContext();
  try {
    const names = process.argv.slice(2);
    const unknown = names.filter((n) => !allProjections.some((p) => p.name === n));
    if (unknown.length > 0) throw new Error(`unknown projection(s): ${unknown.join(', ')}; known: ${allProjections.map((p) => p.name).join(', ')}`);
    const chosen = names.length === 0 ? allProjections : allProjections.filter((p) => names.includes(p.name));
    const progress = new ProgressReporter('projections:rebuild', process.stderr);
    await rebuildProjections(ctx.db.pool, ctx.store, chosen, READ_MODEL_SCHEMA, ctx.logger, progress);
    progress.finish();
    process.stdout.write(`rebuilt ${chosen.map((p) => p.name).join(', ')}\n`);
  } finally {
    await ctx.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
