import Router from '@koa/router';
import type { Pool } from 'pg';
import { CatalogError, type Catalog, type ModelEntry } from '../../billing/catalog';
import type { GatewayState } from '../context';
import { ApiError } from '../errors';

/** The operator's view of the gateway itself: consumer lag, failing jobs, the catalog and its reload. Mounted behind the admin token. */
export function operationsRouter(catalog: Catalog, consumerStatus: () => Promise<unknown>, pool: Pool): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1', sensitive: true });

  router.get('/consumers', async (ctx) => {
    ctx.body = await consumerStatus();
  });

  /**
   * Due work, oldest first; `?failing=true` keeps the jobs whose last run failed (they are retried
   * with backoff, so a job listed here again and again needs a look at its `last_error`).
   */
  router.get('/jobs', async (ctx) => {
    const failing = ctx.query.failing === 'true';
    const { rows } = await pool.query<{ kind: string; key: string; due_at: Date; attempts: number; locked_until: Date | null; last_error: string | null }>(
      `SELECT kind, key, due_at, attempts, locked_until, last_error FROM jobs WHERE ($1::boolean IS FALSE OR last_error IS NOT NULL)
       ORDER BY due_at LIMIT 200`,
      [failing],
    );
    ctx.body = { object: 'list', data: rows.map((r) => ({ ...r, due_at: r.due_at.toISOString(), locked_until: r.locked_until?.toISOString() ?? null })) };
  });

  /**
   * The catalog as it stands: every model of the file, sorted by id, each with `available` (false
   * when its channel is not configured, so it is not sold).
   */
  router.get('/catalog', (ctx) => {
    const entry = (model: ModelEntry, available: boolean) => ({ ...model, available });
    const models = [...catalog.list().map((m) => entry(m, true)), ...catalog.unavailable().map((m) => entry(m, false))];
    ctx.body = { object: 'list', data: models.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) };
  });

  /**
   * Re-reads the catalog file with the same checks as at start-up (Catalog.reload): an invalid
   * file is refused with 400 `invalid_catalog` naming the problem, and the current catalog stays
   * in force. The answer names the models that are not sold because their channel is not
   * configured (`unavailable`), so a typo in a channel name shows at once.
   */
  router.post('/catalog/reload', (ctx) => {
    let outcome: ReturnType<Catalog['reload']>;
    try {
      outcome = catalog.reload();
    } catch (err) {
      if (!(err instanceof CatalogError)) throw err;
      ctx.state.logger.warn({ err: err.message }, 'catalog reload refused; the previous catalog stays in force');
      throw new ApiError(400, 'invalid_catalog', err.message);
    }
    if (outcome.unavailable.length > 0) ctx.state.logger.warn({ unavailable: outcome.unavailable }, "catalog models whose channel is not configured, or whose channel's protocol cannot serve their type, are unavailable");
    ctx.state.logger.info({ models: outcome.models }, 'catalog reloaded');
    ctx.body = outcome;
  });

  return router;
}
