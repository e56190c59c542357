import { TASK_LIST_QUERY_SCHEMA } from '../../http/routes/tasks';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS, queryFromSchema } from './common';

/** One list over every kind of asynchronous task (src/http/routes/tasks.ts). */
export const TASK_DOCS: OperationDocs = {
  'GET /v1/tasks': {
    tag: 'tasks',
    summary: 'The account’s asynchronous tasks of every kind, newest first',
    description:
      'Each item has the members every task has (kind, status, timings, billing) and `detail`, the task as its own status endpoint answers it ' +
      '(with its signed result links). Filters combine with AND; a comma-separated value matches any of its parts.',
    query: queryFromSchema(TASK_LIST_QUERY_SCHEMA, {
      kind: TASK_LIST_QUERY_SCHEMA.properties.kind.description,
      status: TASK_LIST_QUERY_SCHEMA.properties.status.description,
      from: 'Only tasks created at or after this instant (ISO 8601 with offset).',
      to: 'Only tasks created before this instant (ISO 8601 with offset).',
      after: 'Cursor: `next_after` of the previous page.',
      limit: 'Items per page, 1 to 100 (default 20).',
    }),
    responses: [{ status: 200, description: 'A page of tasks.', schema: 'TaskSummaryList' }],
    errors: [...GUARD_ERRORS],
  },
};
