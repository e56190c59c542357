import { authOf, type GatewayContext } from '../http/context';
import { ApiError } from '../http/errors';
import { admitKey } from '../http/middleware';
import type { Credential, MountedCredential } from '../http/routing';
import { admitSession, noSession, type SessionCheckDeps } from './session-credential';

/**
 * POST /dashboard/api/playground/{key_id}/v1/chat/completions and …/v1/images/generations: the
 * account's own /v1 route, served to its dashboard session on behalf of a key of the account that
 * the owner picked and the session's key may reach (AccountService.requireReachable). The path
 * names the route; the body is the route's own, read by its own handler, so validation, limits,
 * billing and errors are those of /v1 for that key. The key's secret never reaches the browser:
 * the session proves the owner, the key is found by id.
 */
const PLAYGROUND = /^\/dashboard\/api\/playground\/([^/]+)(\/v1\/(?:chat\/completions|images\/generations))$/;

/** The /v1 path and the chosen key of a playground path; null for any other path. */
export function playgroundPath(path: string): { readonly keyId: string; readonly apiPath: string } | null {
  const match = PLAYGROUND.exec(path);
  // The id as the path spells it: key ids need no escaping, and one that does names no key (404).
  return match ? { keyId: match[1]!, apiPath: match[2]! } : null;
}

/**
 * The credential of a playground request: an account session (with its CSRF header, as every
 * state-changing dashboard request), then the chosen key, admitted exactly as a Bearer key would be
 * (expired: 401 `key_expired`). A key that is not a live key of the session's account is 404
 * `key_not_found`, whether another account's, revoked or unknown; one the session's key may not
 * reach (wider than it, or any other when it has a budget) is 403 `key_scope_exceeded`.
 */
export function playgroundCredential(keyId: string, deps: SessionCheckDeps): MountedCredential {
  const credential: Credential = {
    refusal: noSession,
    guessable: false,
    presented: () => null,
    async check(ctx: GatewayContext) {
      await admitSession(ctx, deps, 'account');
      const session = authOf(ctx);
      const accountId = session.accountId;
      const keyHash = await deps.accounts.liveKeyHash(accountId, keyId);
      if (keyHash === null) throw new ApiError(404, 'key_not_found', `key ${keyId} not found`);
      // The session's key acts through the chosen one: only a key it may reach, by the issuing rules (403 key_scope_exceeded).
      await deps.accounts.requireReachable(accountId, keyId, { keyId: session.keyId });
      const auth = await deps.accounts.authenticateHash(keyHash);
      admitKey(ctx, auth && auth.keyId === keyId && auth.accountId === accountId ? auth : null, deps.now);
    },
  };
  return { access: 'api_key', credential };
}
