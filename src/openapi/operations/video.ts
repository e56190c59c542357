import { VIDEO_REQUEST_SCHEMA } from '../../video/request';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS, PAGE_QUERY, TASK_ID } from './common';

/** Video generation tasks (src/video/routes.ts). */
export const VIDEO_DOCS: OperationDocs = {
  'POST /v1/videos/generations': {
    tag: 'video',
    summary: 'Create a video task',
    description: 'Returns at once; poll the task or pass `callback_url` for a signed webhook. The body is capped at 5 MB (413).',
    idempotent: true,
    body: {
      name: 'VideoGenerationRequest',
      schema: VIDEO_REQUEST_SCHEMA,
      example: { model: 'video-2.5', content: [{ type: 'text', text: 'A red kite over the sea at dawn' }], resolution: '720p', duration: 5 },
    },
    responses: [{ status: 200, description: 'The task as created.', schema: 'Task' }],
    errors: [400, 401, 402, 413, 429, 502],
  },
  'GET /v1/videos/generations': {
    tag: 'video',
    summary: 'The caller’s video tasks, newest first',
    query: PAGE_QUERY,
    responses: [{ status: 200, description: 'A page of tasks.', schema: 'TaskList' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /v1/videos/generations/:id': {
    tag: 'video',
    summary: 'Poll a video task',
    pathParams: { id: TASK_ID },
    responses: [{ status: 200, description: 'The task.', schema: 'Task' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'POST /v1/videos/generations/:id/webhook/redeliver': {
    tag: 'video',
    summary: 'Deliver a finished task’s webhook again',
    pathParams: { id: TASK_ID },
    responses: [{ status: 202, description: 'A delivery is queued.', schema: { type: 'object', properties: { delivery_id: { type: 'string' }, status: { const: 'pending' } } } }],
    errors: [...GUARD_ERRORS, 404, 409],
  },
};
