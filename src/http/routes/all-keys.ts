import Router from '@koa/router';
import type { Pool } from 'pg';
import { KEY_STATUSES, searchKeys, type KeyStatus } from '../../read/all-keys';
import type { GatewayState } from '../context';
import { listBody, pageParams } from '../pagination';
import { validator } from '../validation';

/** GET /admin/v1/keys: the search, an account, a status and the page. */
export const KEY_SEARCH_QUERY_SCHEMA = {
  type: 'object',
  properties: {
    q: { type: 'string', maxLength: 200 },
    account_id: { type: 'string', minLength: 1, maxLength: 200 },
    status: { type: 'string', enum: KEY_STATUSES },
    after: { type: 'string' },
    limit: { type: 'string' },
  },
  additionalProperties: false,
} as const;
const parseQuery = validator<{ q?: string; account_id?: string; status?: KeyStatus }>(KEY_SEARCH_QUERY_SCHEMA);

/** The cursor is the last key's id (ids sort by creation); anything else is no cursor. */
const KEY_ID = /^key_[0-9a-f]{1,64}$/;

/**
 * GET /admin/v1/keys: every account's keys, newest first, searched by name, prefix or id, with the
 * account's name, spend and last use; never a secret or a hash. Mounted behind the admin token.
 */
export function allKeysRouter(deps: { readonly pool: Pool; readonly clock: () => Date }): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/admin/v1', sensitive: true });
  router.get('/keys', async (ctx) => {
    const q = parseQuery(ctx.query);
    const page = pageParams(ctx.query, (raw) => KEY_ID.test(raw));
    const search = {
      ...(q.q !== undefined && q.q !== '' ? { q: q.q } : {}),
      ...(q.account_id !== undefined ? { accountId: q.account_id } : {}),
      ...(q.status !== undefined ? { status: q.status } : {}),
    };
    const { keys, hasMore } = await searchKeys(deps.pool, search, page, deps.clock());
    ctx.body = listBody(keys, hasMore, (k) => k.id);
  });
  return router;
}
