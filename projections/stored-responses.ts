import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import { contextTokensOf, STORED_RESPONSES_VIEW, type StoredResponseEvent } from '../src/chat/stored-responses/events';

/** One row per Response the gateway relayed and its provider stores; a deleted one keeps its row with deleted_at. */
export const storedResponsesProjection: Projection = defineProjection<StoredResponseEvent>()({
  name: STORED_RESPONSES_VIEW,
  tables: ['stored_responses'],
  ddl: `
    CREATE TABLE stored_responses (
      response_id text PRIMARY KEY,
      account_id text NOT NULL,
      key_id text NOT NULL,
      model text NOT NULL,
      channel text NOT NULL,
      total_tokens bigint NOT NULL,
      created_at timestamptz NOT NULL,
      deleted_at timestamptz,
      revision bigint NOT NULL
    );`,
  handles: ['ResponseStored', 'StoredResponseDeleted'],
  async apply(tx, event) {
    switch (event.type) {
      case 'ResponseStored': {
        const d = event.data;
        await tx.query(
          `INSERT INTO stored_responses (response_id, account_id, key_id, model, channel, total_tokens, created_at, revision) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [d.responseId, d.accountId, d.keyId, d.model, d.channel, contextTokensOf(d), d.at, event.revision],
        );
        return;
      }
      case 'StoredResponseDeleted':
        await tx.query('UPDATE stored_responses SET deleted_at = $2, revision = $3 WHERE response_id = $1', [event.data.responseId, event.data.at, event.revision]);
        return;
    }
  },
});
