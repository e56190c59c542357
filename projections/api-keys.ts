import type { RecordedEvent } from '../src/eventstore/port';
import type { Projection } from '../src/projections-runtime/consumer';
import { accountIdOfStream, type AccountEvent } from '../src/domain/account/events';

/** API keys by hash, for authentication. The key itself is never stored. */
export const apiKeysProjection: Projection = {
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
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    );
    CREATE INDEX api_keys_account ON api_keys (account_id);`,
  eventTypes: new Set(['ApiKeyIssued', 'ApiKeyRevoked']),
  async apply(tx, raw) {
    const event = raw as RecordedEvent & AccountEvent;
    const accountId = accountIdOfStream(raw.streamId);
    if (event.type === 'ApiKeyIssued') {
      const d = event.data;
      await tx.query(
        `INSERT INTO api_keys (key_id, account_id, name, key_hash, key_prefix, allowed_models, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [d.keyId, accountId, d.name, d.keyHash, d.keyPrefix, d.allowedModels === null ? null : JSON.stringify(d.allowedModels), d.at],
      );
    } else if (event.type === 'ApiKeyRevoked') {
      await tx.query('UPDATE api_keys SET revoked_at = $2 WHERE key_id = $1', [event.data.keyId, event.data.at]);
    }
  },
};
