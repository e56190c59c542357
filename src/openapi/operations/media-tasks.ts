import { ERASE_REQUEST_SCHEMA } from '../../media-tasks/erase/request';
import { IMAGE_REQUEST_SCHEMA } from '../../media-tasks/images/request';
import { PODCAST_REQUEST_SCHEMA } from '../../media-tasks/podcasts/request';
import type { OperationDoc, OperationDocs } from '../types';
import { GUARD_ERRORS, PAGE_QUERY, TASK_ID } from './common';

const CREATE_ERRORS = [400, 401, 402, 429, 502];
/** The spec's list for podcast, erase and async image status. */
const STATUS_ERRORS = [401, 404, 429];

const imageExample = { model: 'image-5.0', prompt: 'A lighthouse in the fog', n: 1, size: '1024x1024' };

function status(summary: string, poll: string): OperationDoc {
  return {
    tag: 'media tasks',
    summary,
    description: `Poll every ${poll}; faster polling of one task answers 429.`,
    pathParams: { taskId: TASK_ID },
    responses: [{ status: 200, description: 'The task.', schema: 'Task' }],
    errors: STATUS_ERRORS,
  };
}

function cancel(what: string): OperationDoc {
  return {
    tag: 'media tasks',
    summary: `Cancel an unfinished ${what} task`,
    description: 'The reservation is released.',
    pathParams: { taskId: TASK_ID },
    responses: [{ status: 200, description: 'The task, cancelled.', schema: 'Task' }],
    errors: [...GUARD_ERRORS, 404, 409],
  };
}

/** Images, podcasts and subtitle erase (src/media-tasks/routes.ts). */
export const MEDIA_TASK_DOCS: OperationDocs = {
  'POST /v1/images/generations': {
    tag: 'images',
    summary: 'Generate images',
    description: 'Billed per generated image.',
    body: { name: 'ImageGenerationRequest', schema: IMAGE_REQUEST_SCHEMA, example: imageExample },
    responses: [{ status: 200, description: 'The images.', schema: 'ImageGeneration' }],
    errors: CREATE_ERRORS,
  },
  'POST /v1/images/async': {
    tag: 'images',
    summary: 'Generate images as a task',
    idempotent: true,
    body: { name: 'ImageGenerationRequest', schema: IMAGE_REQUEST_SCHEMA, example: imageExample },
    responses: [{ status: 200, description: 'The task as created.', schema: 'Task' }],
    errors: CREATE_ERRORS,
  },
  'GET /v1/images/async/:taskId': { ...status('Poll an async image task', '3 to 5 seconds'), tag: 'images' },
  'GET /v1/gallery': {
    tag: 'images',
    summary: 'The caller’s generated images, newest first',
    query: PAGE_QUERY,
    responses: [{ status: 200, description: 'A page of images.', schema: 'List' }],
    errors: [...GUARD_ERRORS],
  },
  'POST /v1/audio/podcasts': {
    tag: 'media tasks',
    summary: 'Create a podcast task',
    idempotent: true,
    body: { name: 'PodcastRequest', schema: PODCAST_REQUEST_SCHEMA, example: { model: 'podcast-standard', topic: 'The history of tea' } },
    responses: [{ status: 200, description: 'The task as created.', schema: 'Task' }],
    errors: CREATE_ERRORS,
  },
  'GET /v1/audio/podcasts/:taskId': status('Poll a podcast task', '10 to 15 seconds'),
  'POST /v1/audio/podcasts/:taskId/cancel': cancel('podcast'),
  'POST /v1/videos/erase-subtitle': {
    tag: 'media tasks',
    summary: 'Create a subtitle erase task',
    idempotent: true,
    body: { name: 'EraseSubtitleRequest', schema: ERASE_REQUEST_SCHEMA, example: { video_url: 'https://example.com/clip.mp4', duration_seconds: 60 } },
    responses: [{ status: 200, description: 'The task as created.', schema: 'Task' }],
    errors: CREATE_ERRORS,
  },
  'GET /v1/videos/erase-subtitle/:taskId': status('Poll a subtitle erase task', '3 to 5 seconds'),
  'POST /v1/videos/erase-subtitle/:taskId/cancel': cancel('subtitle erase'),
};
