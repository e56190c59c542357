import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import { prepared } from '../src/db/prepared';
import { accountIdOfStream, upcastAccountEvent, type AccountEvent, type KeySettings } from '../src/domain/account/events';

/**
 * API keys by hash, for authentication, with their limits and when each was last used (the time
 * of its latest settlement: derived from the ledger, never written per request). The key itself
 * is never stored.
 */
export const apiKeysProjection: Projection = defineProjection<AccountEvent>()({
  name: 'api_keys',
  tables: ['api_keys'],
  ddl: `
    CREATE TABLE api_keys (
      key_id text PRIMARY KEY,
      account_id text NOT NULL,
      name text,
      key_hash text NOT NULL UNIQUE,
      key_prefix text NOT NULL,
      allowed_models jsonb,
      budget jsonb,
      expires_at timestamptz,
      rate_limit_per_minute integer,
      tokens_per_minute integer,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      revoked_at timestamptz
    );
    CREATE INDEX api_keys_account ON api_keys (account_id);`,
  handles: ['ApiKeyIssued', 'ApiKeyChanged', 'ApiKeyRevoked', 'ApiKeySecretRegenerated', 'ReservationSettled'],
  async applyBatch(tx, events) {
    // Settlements only move last_used_at forward, so a run of them folds into one update per key.
    const lastUsed = new Map<string, { accountId: string; at: string }>();
    for (const recorded of events) {
      const event = upcastAccountEvent(recorded);
      const accountId = accountIdOfStream(recorded.streamId);
      if (event.type === 'ApiKeyIssued') {
        const d = event.data;
        await tx.query(
          `INSERT INTO api_keys (key_id, account_id, key_hash, key_prefix, created_at, name, allowed_models, budget, expires_at, rate_limit_per_minute, tokens_per_minute)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
          [d.keyId, accountId, d.keyHash, d.keyPrefix, d.at, ...settingsColumns(d)],
        );
      } else if (event.type === 'ApiKeyChanged') {
        await tx.query(
          `UPDATE api_keys SET name = $2, allowed_models = $3, budget = $4, expires_at = $5, rate_limit_per_minute = $6, tokens_per_minute = $7 WHERE key_id = $1`,
          [event.data.keyId, ...settingsColumns(event.data)],
        );
      } else if (event.type === 'ApiKeySecretRegenerated') {
        await tx.query('UPDATE api_keys SET key_hash = $2, key_prefix = $3 WHERE key_id = $1', [event.data.keyId, event.data.keyHash, event.data.keyPrefix]);
      } else if (event.type === 'ApiKeyRevoked') {
        await tx.query('UPDATE api_keys SET revoked_at = $2 WHERE key_id = $1', [event.data.keyId, event.data.at]);
      } else if (event.type === 'ReservationSettled' && event.data.context) {
        const seen = lastUsed.get(event.data.context.actor);
        if (!seen || Date.parse(event.data.at) > Date.parse(seen.at)) lastUsed.set(event.data.context.actor, { accountId, at: event.data.at });
      }
    }
    if (lastUsed.size === 0) return;
    const entries = [...lastUsed.entries()];
    await tx.query(
      prepared(
        `UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, u.at)
         FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(key_id, account_id, at)
         WHERE k.key_id = u.key_id AND k.account_id = u.account_id`,
        [entries.map(([keyId]) => keyId), entries.map(([, u]) => u.accountId), entries.map(([, u]) => u.at)],
      ),
    );
  },
});

function settingsColumns(s: KeySettings): unknown[] {
  return [s.name, s.allowedModels === null ? null : JSON.stringify(s.allowedModels), s.budget === null ? null : JSON.stringify(s.budget), s.expiresAt, s.rateLimitPerMinute, s.tokensPerMinute];
}
