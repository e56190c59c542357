import Router from '@koa/router';
import { AuditAlreadyRunning, type AuditRuns } from '../../audit-runs/service';
import type { GatewayState } from '../context';
import { ApiError } from '../errors';
import { validator } from '../validation';

/** Neither route takes a query parameter. */
export const AUDIT_QUERY_SCHEMA = { type: 'object', properties: {}, additionalProperties: false } as const;
const parseQuery = validator<Record<string, never>>(AUDIT_QUERY_SCHEMA);

/**
 * The operator runs the audit of `npm run audit` (replay of the log against every read model, the
 * ledger invariants) from the API, and reads the last result. A run takes as long as replaying
 * the log, so the POST answers at once and the GET shows it running, then its result.
 */
export function auditRouter(audits: AuditRuns): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1', sensitive: true });

  router.post('/audit', async (ctx) => {
    parseQuery(ctx.query);
    try {
      ctx.body = await audits.start(ctx.state.requestId);
    } catch (err) {
      if (err instanceof AuditAlreadyRunning) throw new ApiError(409, 'audit_running', 'an audit is already running; GET /admin/v1/audit shows it');
      throw err;
    }
    ctx.status = 202;
  });

  router.get('/audit', async (ctx) => {
    parseQuery(ctx.query);
    ctx.body = { object: 'audit', ...(await audits.status()) };
  });

  return router;
}
