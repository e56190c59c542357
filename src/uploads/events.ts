import { DomainError, type Decider } from '../domain/decider';

/**
 * An uploaded file (`POST /v1/files`): its own stream `file-<id>`. The bytes live in the file
 * store under `key`; the stream records who owns them and when they were deleted.
 */
export type FileEvent =
  | {
      type: 'FileUploaded';
      data: { fileId: string; accountId: string; key: string; bytes: number; sha256: string; filename: string; contentType: string; purpose: string; at: string };
    }
  | { type: 'FileDeleted'; data: { fileId: string; accountId: string; at: string } };

export function fileStream(fileId: string): string {
  return `file-${fileId}`;
}

export interface FileState {
  readonly fileId: string;
  readonly exists: boolean;
  readonly deleted: boolean;
  readonly accountId: string;
  readonly key: string;
}

export type FileCommand =
  | { type: 'RecordUpload'; data: Extract<FileEvent, { type: 'FileUploaded' }>['data'] }
  | { type: 'Delete'; accountId: string; now: string };

export const fileDecider: Decider<FileCommand, FileEvent, FileState> = {
  initialState: () => ({ fileId: '', exists: false, deleted: false, accountId: '', key: '' }),
  decide(command, state) {
    if (command.type === 'RecordUpload') {
      if (state.exists) throw new DomainError('file_exists', `file ${command.data.fileId} already exists`);
      return [{ type: 'FileUploaded', data: command.data }];
    }
    // Another account's file is indistinguishable from a missing one.
    if (!state.exists || state.accountId !== command.accountId) throw new DomainError('file_not_found', 'file not found');
    if (state.deleted) return [];
    return [{ type: 'FileDeleted', data: { fileId: state.fileId, accountId: state.accountId, at: command.now } }];
  },
  evolve(state, event) {
    switch (event.type) {
      case 'FileUploaded':
        return { fileId: event.data.fileId, exists: true, deleted: false, accountId: event.data.accountId, key: event.data.key };
      case 'FileDeleted':
        return { ...state, deleted: true };
    }
  },
  snapshotVersion: 1,
};

/** Uploads are stored as `uploads/<fileId><.ext>`. */
export function uploadKey(fileId: string, filename: string): string {
  const ext = /\.([A-Za-z0-9]{1,8})$/.exec(filename)?.[1]?.toLowerCase();
  return `uploads/${fileId}${ext ? `.${ext}` : ''}`;
}

export function fileIdOfKey(key: string): string | null {
  return /^uploads\/(file_[0-9a-f]+)(\.[a-z0-9]+)?$/.exec(key)?.[1] ?? null;
}
