import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import { accountIdOfStream, type AccountEvent } from '../src/domain/account/events';

/** Accounts, their webhook secret and settings (new accounts deliver videos in `auto` mode). */
export const accountsProjection: Projection = defineProjection<AccountEvent>()({
  name: 'accounts',
  tables: ['accounts'],
  ddl: `
    CREATE TABLE accounts (
      account_id text PRIMARY KEY,
      name text NOT NULL,
      webhook_secret text,
      webhook_secret_rotated_at timestamptz,
      default_video_url_mode text NOT NULL DEFAULT 'auto',
      timezone text NOT NULL DEFAULT 'Asia/Shanghai',
      opened_at timestamptz NOT NULL
    );`,
  handles: ['AccountOpened', 'WebhookSecretRotated', 'AccountSettingsChanged', 'AccountTimeZoneChanged'],
  async apply(tx, event) {
    const accountId = accountIdOfStream(event.streamId);
    if (event.type === 'AccountOpened') {
      await tx.query('INSERT INTO accounts (account_id, name, opened_at) VALUES ($1, $2, $3)', [accountId, event.data.name, event.data.openedAt]);
    } else if (event.type === 'WebhookSecretRotated') {
      await tx.query('UPDATE accounts SET webhook_secret = $2, webhook_secret_rotated_at = $3 WHERE account_id = $1', [
        accountId,
        event.data.secret,
        event.data.at,
      ]);
    } else if (event.type === 'AccountSettingsChanged') {
      await tx.query('UPDATE accounts SET default_video_url_mode = $2 WHERE account_id = $1', [accountId, event.data.defaultVideoUrlMode]);
    } else if (event.type === 'AccountTimeZoneChanged') {
      await tx.query('UPDATE accounts SET timezone = $2 WHERE account_id = $1', [accountId, event.data.timezone]);
    }
  },
});
