import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import type { FileEvent } from '../src/uploads/events';

/** One row per uploaded file (POST /v1/files); deleted files keep their row with deleted_at. */
export const filesProjection: Projection = defineProjection<FileEvent>()({
  name: 'files',
  tables: ['files'],
  ddl: `
    CREATE TABLE files (
      file_id text PRIMARY KEY,
      account_id text NOT NULL,
      key text NOT NULL,
      bytes bigint NOT NULL,
      sha256 text NOT NULL,
      filename text NOT NULL,
      content_type text NOT NULL,
      purpose text NOT NULL,
      created_at timestamptz NOT NULL,
      deleted_at timestamptz,
      revision bigint NOT NULL
    );
    CREATE INDEX files_account ON files (account_id, file_id);`,
  handles: ['FileUploaded', 'FileDeleted'],
  async apply(tx, event) {
    switch (event.type) {
      case 'FileUploaded': {
        const d = event.data;
        await tx.query(
          `INSERT INTO files (file_id, account_id, key, bytes, sha256, filename, content_type, purpose, created_at, revision)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [d.fileId, d.accountId, d.key, d.bytes, d.sha256, d.filename, d.contentType, d.purpose, d.at, event.revision],
        );
        return;
      }
      case 'FileDeleted':
        await tx.query('UPDATE files SET deleted_at = $2, revision = $3 WHERE file_id = $1', [event.data.fileId, event.data.at, event.revision]);
        return;
    }
  },
});
