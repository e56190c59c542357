import type { OperationDocs } from '../types';
import { GUARD_ERRORS, PAGE_QUERY } from './common';

const FILE_ID = 'The file id.';

/** Uploads (src/uploads/routes.ts). */
export const FILE_DOCS: OperationDocs = {
  'POST /v1/files': {
    tag: 'files',
    summary: 'Upload a file',
    multipart: {
      type: 'object',
      properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' }, purpose: { type: 'string' } },
      required: ['file', 'purpose'],
    },
    responses: [{ status: 200, description: 'The file.', schema: 'File' }],
    errors: [...GUARD_ERRORS, 402, 413, 415],
  },
  'GET /v1/files': {
    tag: 'files',
    summary: 'The caller’s files, newest first',
    query: [...PAGE_QUERY, { name: 'purpose', description: 'Only files of this purpose.', schema: { type: 'string' } }],
    responses: [{ status: 200, description: 'A page of files.', schema: 'FileList' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /v1/files/:id': {
    tag: 'files',
    summary: 'A file’s metadata',
    pathParams: { id: FILE_ID },
    responses: [{ status: 200, description: 'The file.', schema: 'File' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'GET /v1/files/:id/content': {
    tag: 'files',
    summary: 'A file’s content',
    pathParams: { id: FILE_ID },
    responses: [{ status: 200, description: 'The bytes, with the file’s content type.', contentType: 'application/octet-stream', schema: { type: 'string' } }],
    errors: [...GUARD_ERRORS, 404],
  },
  'DELETE /v1/files/:id': {
    tag: 'files',
    summary: 'Delete a file',
    pathParams: { id: FILE_ID },
    responses: [{ status: 200, description: 'Deleted.', schema: { type: 'object', properties: { id: { type: 'string' }, deleted: { const: true } } } }],
    errors: [...GUARD_ERRORS, 404],
  },
};
