import type { Pool } from 'pg';
import { CommandHandler } from '../domain/command-handler';
import { PostgresSnapshotStore } from '../eventstore/postgres/snapshots';
import { DomainError } from '../domain/decider';
import type { EventStore } from '../eventstore/port';
import type { UrlSigner } from '../files/signed-urls';
import type { FileStore } from '../files/store';
import type { Logger } from '../log';
import { ReadModelBehindError, type ConsumerProgress } from '../projections-runtime/progress';
import { fileDecider, fileStream, type FileCommand, type FileEvent, type FileState } from './events';

export interface FileRow {
  readonly file_id: string;
  readonly account_id: string;
  readonly key: string;
  readonly bytes: string;
  readonly sha256: string;
  readonly filename: string;
  readonly content_type: string;
  readonly purpose: string;
  readonly created_at: Date;
  readonly deleted_at: Date | null;
}

const VIEWS = ['files'];

/** Uploaded files: recorded as events, read from the `files` read model, bytes in the file store. */
export class UploadService {
  readonly commands: CommandHandler<FileCommand, FileEvent, FileState>;

  constructor(
    private readonly deps: {
      pool: Pool;
      store: EventStore;
      logger: Logger;
      progress: ConsumerProgress;
      files: FileStore;
      signer: UrlSigner;
      clock: () => Date;
      projectionWaitMs: number;
      urlTtlMs: number;
    },
  ) {
    this.commands = new CommandHandler(deps.store, new PostgresSnapshotStore(deps.pool), fileDecider, deps.logger);
  }

  async record(data: Extract<FileEvent, { type: 'FileUploaded' }>['data'], requestId: string): Promise<FileRow> {
    const result = await this.commands.handle(fileStream(data.fileId), { type: 'RecordUpload', data }, { requestId });
    await this.deps.progress.waitFor(result.position!, VIEWS, this.deps.projectionWaitMs);
    const row = await this.get(data.accountId, data.fileId);
    if (!row) throw new ReadModelBehindError(`file ${data.fileId}`);
    return row;
  }

  /** A live (not deleted) file of this account; null for unknown ids and other accounts' files. */
  async get(accountId: string, fileId: string): Promise<FileRow | null> {
    await this.deps.progress.waitForStream(fileStream(fileId), VIEWS, this.deps.projectionWaitMs);
    const { rows } = await this.deps.pool.query<FileRow>('SELECT * FROM rm.files WHERE file_id = $1 AND account_id = $2 AND deleted_at IS NULL', [fileId, accountId]);
    return rows[0] ?? null;
  }

  /** Newest first; `after` is the id of the last file of the previous page. */
  async list(accountId: string, page: { after: string | null; limit: number }, purpose: string | null): Promise<{ rows: FileRow[]; hasMore: boolean }> {
    const { rows } = await this.deps.pool.query<FileRow>(
      `SELECT * FROM rm.files WHERE account_id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR file_id < $2) AND ($3::text IS NULL OR purpose = $3)
       ORDER BY file_id DESC LIMIT $4`,
      [accountId, page.after, purpose, page.limit + 1],
    );
    return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
  }

  /**
   * Deletes a file: the event first, then the bytes. A crash in between leaves bytes nobody can
   * reach (no live row, links stop at their expiry at the latest); deleting again removes them.
   */
  async delete(accountId: string, fileId: string, requestId: string): Promise<boolean> {
    try {
      const result = await this.commands.handle(fileStream(fileId), { type: 'Delete', accountId, now: this.deps.clock().toISOString() }, { requestId });
      await this.deps.files.delete(result.state.key);
      // Deleting a deleted file only finishes removing its bytes; to the client it is gone (404).
      if (!result.position) return false;
      await this.deps.progress.waitFor(result.position, VIEWS, this.deps.projectionWaitMs);
      return true;
    } catch (err) {
      if (err instanceof DomainError && err.code === 'file_not_found') return false;
      throw err;
    }
  }

  /** The API's file object, with a fresh signed link an upstream can fetch until it expires. */
  render(row: FileRow): Record<string, unknown> {
    const link = this.deps.signer.url(row.key, this.deps.urlTtlMs);
    return {
      id: row.file_id,
      object: 'file',
      bytes: Number(row.bytes),
      filename: row.filename,
      purpose: row.purpose,
      content_type: row.content_type,
      status: 'processed',
      created_at: Math.floor(row.created_at.getTime() / 1000),
      url: link.url,
      url_expires_at: Math.floor(Date.parse(link.expiresAt) / 1000),
    };
  }
}
