import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Next } from 'koa';
import type { AccountService } from '../accounts/service';
import { looksLikeApiKey } from '../accounts/api-keys';
import type { Logger } from '../log';
import type { GatewayContext } from './context';
import { ApiError } from './errors';
import type { Credential } from './routing';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request id (the client's X-Request-Id when sane), a child logger, and one access log line. */
export function requestContext(logger: Logger) {
  return async (ctx: GatewayContext, next: Next): Promise<void> => {
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
    ctx.state.requestId = requestId;
    ctx.state.logger = logger.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.logger.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 100) / 100, accountId: ctx.state.auth?.accountId },
        'request',
      );
    }
  };
}


function bearer(ctx: GatewayContext): string | null {
  const header = ctx.get('authorization');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/**
 * `Authorization: Bearer tr-…`: 401 when missing, malformed, unknown or revoked, and 401
 * `key_expired` once past its expiry (shape B endpoints know one 401 message, so they keep it).
 */
export function apiKeyAuth(accounts: AccountService, now: () => number = Date.now): Credential {
  const refusal = () => new ApiError(401, 'invalid_api_key', 'invalid or missing API key');
  return {
    refusal,
    async check(ctx) {
      const key = bearer(ctx);
      const auth = key && looksLikeApiKey(key) ? await accounts.authenticate(key) : null;
      if (!auth) throw refusal();
      if (auth.expiresAt !== null && Date.parse(auth.expiresAt) <= now()) {
        throw new ApiError(401, 'key_expired', ctx.state.errorShape === 'minutes' ? refusal().message : `this API key expired at ${auth.expiresAt}`);
      }
      ctx.state.auth = auth;
    },
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export function adminAuth(adminToken: string): Credential {
  const expected = digest(adminToken);
  const refusal = () => new ApiError(401, 'invalid_admin_token', 'invalid or missing admin token');
  return {
    refusal,
    async check(ctx) {
      const token = bearer(ctx);
      if (!token || !timingSafeEqual(digest(token), expected)) throw refusal();
    },
  };
}
