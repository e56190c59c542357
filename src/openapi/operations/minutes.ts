import { MINUTES_REQUEST_SCHEMA } from '../../minutes/request';
import { SUMMARY_REQUEST_SCHEMA } from '../../minutes/routes';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS, PAGE_QUERY, TASK_ID } from './common';

/** Minutes and summaries; their errors use shape B (src/minutes/routes.ts). */
export const MINUTES_DOCS: OperationDocs = {
  'POST /v1/audio/minutes': {
    tag: 'minutes',
    summary: 'Create a minutes task',
    description: 'A reservation is made on submit. Files under 1 GB and at most 2 hours.',
    idempotent: true,
    body: { name: 'MinutesRequest', schema: MINUTES_REQUEST_SCHEMA, example: { model: 'service-minutes', file_url: 'https://example.com/meeting.mp3' } },
    responses: [
      {
        status: 200,
        description: 'The task, `processing`.',
        schema: 'MinutesTask',
        example: { id: 'min_123', request_id: 'req_0123456789abcdef', model: 'service-minutes', status: 'processing', created_at: '2026-01-01T00:00:00Z' },
      },
    ],
    errors: [400, 401, 402, 429, 502],
    errorShape: 'minutes',
  },
  'GET /v1/audio/minutes': {
    tag: 'minutes',
    summary: 'The caller’s minutes tasks, newest first',
    query: PAGE_QUERY,
    responses: [{ status: 200, description: 'A page of tasks.', schema: 'MinutesTaskList' }],
    errors: [...GUARD_ERRORS],
    errorShape: 'minutes',
  },
  'GET /v1/audio/minutes/:id': {
    tag: 'minutes',
    summary: 'Poll a minutes task',
    description: 'Poll at most every 30 seconds.',
    pathParams: { id: TASK_ID },
    responses: [{ status: 200, description: 'The task.', schema: 'MinutesTask' }],
    errors: [401, 404],
    errorShape: 'minutes',
  },
  'POST /v1/summaries': {
    tag: 'minutes',
    summary: 'Summarise a minutes task’s transcription again',
    body: { name: 'SummaryRequest', schema: SUMMARY_REQUEST_SCHEMA, example: { task_id: 'min_123' } },
    responses: [{ status: 202, description: 'The summary, `processing`.', schema: 'Task' }],
    errors: [...GUARD_ERRORS, 402, 403, 404, 502],
    errorShape: 'minutes',
  },
  'GET /v1/summaries': {
    tag: 'minutes',
    summary: 'The caller’s summaries, newest first',
    query: PAGE_QUERY,
    responses: [{ status: 200, description: 'A page of summaries.', schema: 'TaskList' }],
    errors: [...GUARD_ERRORS],
    errorShape: 'minutes',
  },
  'GET /v1/summaries/:id': {
    tag: 'minutes',
    summary: 'A summary',
    pathParams: { id: 'The summary id.' },
    responses: [{ status: 200, description: 'The summary.', schema: 'Task' }],
    errors: [...GUARD_ERRORS, 404],
    errorShape: 'minutes',
  },
};
