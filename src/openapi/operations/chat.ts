import { CHAT_REQUEST_SCHEMA, OPENAI_REQUEST_SCHEMAS, RESPONSES_REQUEST_SCHEMA } from '../../chat/schemas';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS } from './common';

/** The spec's list for chat, responses (and other create endpoints). */
const CREATE_ERRORS = [400, 401, 402, 429, 502];

/** Models, chat completions, Responses (src/chat/feature.ts). */
export const CHAT_DOCS: OperationDocs = {
  'GET /v1/models': {
    tag: 'models',
    summary: 'Models the key may use',
    query: [{ name: 'type', description: 'Only models of this type (`chat`, `video`, `image`, …).', schema: { type: 'string' } }],
    responses: [{ status: 200, description: 'The models.', schema: 'ModelList' }],
    errors: [...GUARD_ERRORS],
  },
  'GET /v1/models/:id': {
    tag: 'models',
    summary: 'One model',
    pathParams: { id: 'The model id.' },
    responses: [{ status: 200, description: 'The model.', schema: 'Model' }],
    errors: [...GUARD_ERRORS, 404],
  },
  'POST /v1/chat/completions': {
    tag: 'chat',
    summary: 'Chat completion (OpenAI-compatible)',
    body: { name: 'ChatCompletionRequest', schema: CHAT_REQUEST_SCHEMA, components: OPENAI_REQUEST_SCHEMAS, example: { model: 'chat-fast', messages: [{ role: 'user', content: 'Hello' }] } },
    responses: [
      {
        status: 200,
        description: 'The completion.',
        schema: 'ChatCompletion',
        example: {
          id: 'chatcmpl_123',
          object: 'chat.completion',
          created: 1767225600,
          model: 'chat-fast',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help?' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 8, completion_tokens: 7, total_tokens: 15 },
        },
      },
    ],
    stream: 'With `stream: true`: `chat.completion.chunk` events, then `data: [DONE]`.',
    errors: CREATE_ERRORS,
  },
  'POST /v1/responses': {
    tag: 'chat',
    summary: 'Responses interface',
    description: 'If the upstream does not support it, its error is passed through and the request refunded.',
    body: { name: 'ResponsesRequest', schema: RESPONSES_REQUEST_SCHEMA, components: OPENAI_REQUEST_SCHEMAS, example: { model: 'chat-fast', input: 'Hello' } },
    responses: [{ status: 200, description: 'The response.', schema: 'Response' }],
    stream: 'With `stream: true`: typed events, ending with `response.completed` carrying `usage`.',
    errors: CREATE_ERRORS,
  },
};
