import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import type { ChannelEvent } from '../src/domain/channel/events';

/**
 * The channels for the admin views: settings, how each authenticates, when its credentials were
 * last rotated and under which key they are sealed; never any part of a credential. A deleted
 * channel keeps its row (deleted_at), as its stream keeps its history.
 */
export const channelsProjection: Projection = defineProjection<ChannelEvent>()({
  name: 'channels',
  tables: ['channels'],
  ddl: `
    CREATE TABLE channels (
      name text PRIMARY KEY,
      protocol text NOT NULL,
      base_url text NOT NULL,
      timeout_ms integer NOT NULL,
      max_concurrency integer NOT NULL,
      auth_kind text NOT NULL,
      credentials_key_id text,
      credentials_rotated_at timestamptz,
      enabled boolean NOT NULL,
      disabled_reason text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    );`,
  handles: ['ChannelCreated', 'ChannelChanged', 'ChannelCredentialsRotated', 'ChannelCredentialsReEncrypted', 'ChannelEnabled', 'ChannelDisabled', 'ChannelDeleted'],
  async applyBatch(tx, events) {
    for (const event of events) {
      const { type, data } = event;
      switch (type) {
        case 'ChannelCreated':
          // A channel created again after its deletion takes the row over.
          await tx.query(
            `INSERT INTO channels (name, protocol, base_url, timeout_ms, max_concurrency, auth_kind, credentials_key_id, credentials_rotated_at, enabled, disabled_reason, created_at, updated_at, deleted_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, true, NULL, $9, $9, NULL)
             ON CONFLICT (name) DO UPDATE SET protocol = $2, base_url = $3, timeout_ms = $4, max_concurrency = $5, auth_kind = $6, credentials_key_id = $7,
               credentials_rotated_at = $8, enabled = true, disabled_reason = NULL, created_at = $9, updated_at = $9, deleted_at = NULL`,
            [data.name, data.protocol, data.base_url, data.timeout_ms, data.max_concurrency, data.auth_kind, data.credentials?.key_id ?? null, data.credentials ? data.at : null, data.at],
          );
          break;
        case 'ChannelChanged': {
          const c = data.changes;
          await tx.query(
            `UPDATE channels SET protocol = COALESCE($2, protocol), base_url = COALESCE($3, base_url), timeout_ms = COALESCE($4, timeout_ms),
               max_concurrency = COALESCE($5, max_concurrency), updated_at = $6 WHERE name = $1`,
            [data.name, c.protocol ?? null, c.base_url ?? null, c.timeout_ms ?? null, c.max_concurrency ?? null, data.at],
          );
          break;
        }
        case 'ChannelCredentialsRotated':
          await tx.query('UPDATE channels SET auth_kind = $2, credentials_key_id = $3, credentials_rotated_at = $4, updated_at = $4 WHERE name = $1', [
            data.name,
            data.auth_kind,
            data.credentials?.key_id ?? null,
            data.at,
          ]);
          break;
        case 'ChannelCredentialsReEncrypted':
          await tx.query('UPDATE channels SET credentials_key_id = $2, updated_at = $3 WHERE name = $1', [data.name, data.credentials.key_id, data.at]);
          break;
        case 'ChannelEnabled':
          await tx.query('UPDATE channels SET enabled = true, disabled_reason = NULL, updated_at = $2 WHERE name = $1', [data.name, data.at]);
          break;
        case 'ChannelDisabled':
          await tx.query('UPDATE channels SET enabled = false, disabled_reason = $2, updated_at = $3 WHERE name = $1', [data.name, data.reason, data.at]);
          break;
        case 'ChannelDeleted':
          await tx.query('UPDATE channels SET deleted_at = $2, updated_at = $2 WHERE name = $1', [data.name, data.at]);
          break;
      }
    }
  },
});
