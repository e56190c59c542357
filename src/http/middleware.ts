import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Next } from 'koa';
import type { AccountService, AuthenticatedKey } from '../accounts/service';
import { looksLikeApiKey } from '../accounts/api-keys';
import type { Logger } from '../log';
import { RequestState, type GatewayContext } from './context';
import { ApiError } from './errors';
import type { Credential } from './routing';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request id (the client's X-Request-Id when sane), the request's state (RequestState, with its
 * child logger made when first used), and one access log line.
 */
export function requestContext(logger: Logger) {
  return async (ctx: GatewayContext, next: Next): Promise<void> => {
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
    ctx.state = new RequestState(requestId, logger);
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      if (logger.isLevelEnabled('info')) {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        ctx.state.logger.info(
          { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 100) / 100, accountId: ctx.state.auth?.accountId },
          'request',
        );
      }
    }
  };
}


function bearer(ctx: GatewayContext): string | null {
  const header = ctx.get('authorization');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

const invalidKey = () => new ApiError(401, 'invalid_api_key', 'invalid or missing API key');

/**
 * What a key may do right now, whoever presents it (a Bearer header, or a dashboard session opened
 * with it): 401 when unknown or revoked (`auth` null), 401 `key_expired` once past its expiry
 * (shape B endpoints know one 401 message, so they keep it). Sets the request's key.
 */
export function admitKey(ctx: GatewayContext, auth: AuthenticatedKey | null, now: () => number): void {
  if (!auth) throw invalidKey();
  if (auth.expiresAt !== null && Date.parse(auth.expiresAt) <= now()) {
    throw new ApiError(401, 'key_expired', ctx.state.errorShape === 'minutes' ? invalidKey().message : `this API key expired at ${auth.expiresAt}`);
  }
  ctx.state.auth = auth;
}

/** `Authorization: Bearer tr-…`, admitted by admitKey. */
export function apiKeyAuth(accounts: AccountService, now: () => number = Date.now): Credential {
  return {
    refusal: invalidKey,
    guessable: false,
    presented: bearer,
    async check(ctx) {
      const key = bearer(ctx);
      admitKey(ctx, key && looksLikeApiKey(key) ? await accounts.authenticate(key) : null, now);
    },
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Whether a presented secret is the admin token, compared in constant time. */
export function adminTokenMatcher(adminToken: string): (candidate: string) => boolean {
  const expected = digest(adminToken);
  return (candidate) => timingSafeEqual(digest(candidate), expected);
}

/** `Authorization: Bearer <ADMIN_TOKEN>`. */
export function adminAuth(adminToken: string): Credential {
  const matches = adminTokenMatcher(adminToken);
  const refusal = () => new ApiError(401, 'invalid_admin_token', 'invalid or missing admin token');
  return {
    refusal,
    guessable: true,
    presented: bearer,
    async check(ctx) {
      const token = bearer(ctx);
      if (!token || !matches(token)) throw refusal();
    },
  };
}
