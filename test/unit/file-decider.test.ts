import { fileDecider, type FileEvent } from '../../src/uploads/events';
import { DeciderSpecification } from '../support/decider-specification';

/** The uploaded-file decider as given events / when command / then events. */
const given = DeciderSpecification.for(fileDecider);

const now = '2026-01-01T00:00:00.000Z';
const upload = { fileId: 'file_1', accountId: 'acc_1', key: 'uploads/file_1.wav', bytes: 3, sha256: 'abc', filename: 'a.wav', contentType: 'audio/wav', purpose: 'minutes', at: now };
const uploaded: FileEvent = { type: 'FileUploaded', data: upload };
const deleted: FileEvent = { type: 'FileDeleted', data: { fileId: 'file_1', accountId: 'acc_1', at: now } };

describe('file decider', () => {
  it('records an upload once', () => {
    given([]).when({ type: 'RecordUpload', data: upload }).then([uploaded]);
    given([uploaded]).when({ type: 'RecordUpload', data: upload }).thenThrows('file_exists');
  });

  it('deletes the owner\'s file once; a second delete is a no-op', () => {
    given([uploaded]).when({ type: 'Delete', accountId: 'acc_1', now }).then([deleted]);
    given([uploaded, deleted]).when({ type: 'Delete', accountId: 'acc_1', now }).thenNothingHappened();
  });

  it('answers another account\'s file as a missing one', () => {
    given([uploaded]).when({ type: 'Delete', accountId: 'acc_2', now }).thenThrows('file_not_found');
    given([uploaded, deleted]).when({ type: 'Delete', accountId: 'acc_2', now }).thenThrows('file_not_found');
    given([]).when({ type: 'Delete', accountId: 'acc_1', now }).thenThrows('file_not_found');
  });
});
