import { CHAT_REQUEST_SCHEMA, OPENAI_REQUEST_SCHEMAS, RESPONSES_REQUEST_SCHEMA } from '../../chat/schemas';
import type { OperationDocs } from '../types';
import { GUARD_ERRORS } from './common';

const RESPONSE_ID = 'The id of a Response the caller\'s account created with `store` not false.';

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
    description:
      'If the upstream does not support it, its error is passed through and the request refunded. A `previous_response_id` the account does not own is 400 `previous_response_not_found`; the request then goes to the channel that made the previous response. Tools, `text.format`, `reasoning` and content parts only where the model takes them (docs/api/chat.md), else 400 naming the field.',
    body: { name: 'ResponsesRequest', schema: RESPONSES_REQUEST_SCHEMA, components: OPENAI_REQUEST_SCHEMAS, example: { model: 'chat-fast', input: 'Hello' } },
    responses: [{ status: 200, description: 'The response.', schema: 'Response' }],
    stream: 'With `stream: true`: typed events, ending with `response.completed` carrying `usage`.',
    errors: CREATE_ERRORS,
  },
  'GET /v1/responses/:id': {
    tag: 'chat',
    summary: 'A stored Response of the caller’s account',
    description: 'Relayed to the channel that made it. Another account’s id, an unknown one, a deleted one or one created with `store: false` is 404, without reaching a provider.',
    pathParams: { id: RESPONSE_ID },
    query: [{ name: 'include', description: 'Passed to the provider as OpenAI defines it.', schema: { type: 'string' } }],
    responses: [{ status: 200, description: 'The Response.', schema: 'Response' }],
    errors: [...GUARD_ERRORS, 404, 502],
  },
  'DELETE /v1/responses/:id': {
    tag: 'chat',
    summary: 'Delete a stored Response of the caller’s account',
    description: 'Relayed to the channel that made it; the gateway records the deletion, and the id is 404 from then on.',
    pathParams: { id: RESPONSE_ID },
    responses: [{ status: 200, description: 'Deleted.', schema: { type: 'object', properties: { id: { type: 'string' }, object: { type: 'string' }, deleted: { const: true } } } }],
    errors: [...GUARD_ERRORS, 404, 502],
  },
  'GET /v1/responses/:id/input_items': {
    tag: 'chat',
    summary: 'The input items of a stored Response of the caller’s account',
    description: 'Relayed to the channel that made it, with the query (`limit`, `order`, `after`, `include`) as sent.',
    pathParams: { id: RESPONSE_ID },
    query: [
      { name: 'limit', description: 'Items per page (1 to 100).', schema: { type: 'integer', minimum: 1, maximum: 100 } },
      { name: 'order', description: '`asc` or `desc`.', schema: { type: 'string', enum: ['asc', 'desc'] } },
      { name: 'after', description: 'The id of the item the page starts after.', schema: { type: 'string' } },
    ],
    responses: [{ status: 200, description: 'A list of input items.', schema: { type: 'object', properties: { object: { const: 'list' }, data: { type: 'array', items: { type: 'object' } }, has_more: { type: 'boolean' } } } }],
    errors: [...GUARD_ERRORS, 404, 502],
  },
};
