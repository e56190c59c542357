import { validator } from '../http/validation';

export type MessageRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: MessageRole;
  content: string;
  name?: string;
}

/** The `messages` of a chat-style request, at least one: a role, the content (its schema given), an optional name. */
export function messagesSchema(content: object): object {
  return {
    type: 'array',
    minItems: 1,
    items: {
      type: 'object',
      properties: {
        role: { type: 'string', enum: ['system', 'user', 'assistant'] satisfies MessageRole[] },
        content,
        name: { type: 'string' },
      },
      required: ['role', 'content'],
      additionalProperties: false,
    },
  };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[];
  presence_penalty?: number;
  frequency_penalty?: number;
  seed?: number;
  user?: string;
  n?: 1;
}

/** `stream_options` as OpenAI SDKs send it with streams; web Q&A takes it too. */
export const STREAM_OPTIONS_SCHEMA = { type: 'object', properties: { include_usage: { type: 'boolean' } }, additionalProperties: false } as const;

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const CHAT_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: messagesSchema({ type: 'string' }),
    stream: { type: 'boolean' },
    stream_options: STREAM_OPTIONS_SCHEMA,
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    max_tokens: { type: 'integer', minimum: 1 },
    max_completion_tokens: { type: 'integer', minimum: 1 },
    stop: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }] },
    presence_penalty: { type: 'number', minimum: -2, maximum: 2 },
    frequency_penalty: { type: 'number', minimum: -2, maximum: 2 },
    seed: { type: 'integer' },
    user: { type: 'string' },
    n: { type: 'integer', const: 1 },
  },
  required: ['model', 'messages'],
  additionalProperties: false,
};
export const parseChatRequest = validator<ChatRequest>(CHAT_REQUEST_SCHEMA);

export interface ResponsesRequest {
  model: string;
  input: string | Record<string, unknown>[];
  stream?: boolean;
  max_output_tokens?: number;
  instructions?: string;
  temperature?: number;
  top_p?: number;
  metadata?: Record<string, string>;
  store?: boolean;
  user?: string;
  tools?: Record<string, unknown>[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  max_tool_calls?: number;
  text?: Record<string, unknown>;
  reasoning?: Record<string, unknown>;
  include?: string[];
  truncation?: string;
  previous_response_id?: string;
  prompt_cache_key?: string;
  safety_identifier?: string;
  service_tier?: string;
  background?: boolean;
  [more: string]: unknown;
}

/** Temporary (until the generated schema): the top-level fields OpenAI's CreateResponse defines. */
export const RESPONSES_REQUEST_FIELDS: readonly string[] = [
  'model', 'input', 'stream', 'stream_options', 'max_output_tokens', 'instructions', 'temperature', 'top_p', 'top_logprobs', 'metadata', 'store',
  'user', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_tool_calls', 'text', 'reasoning', 'include', 'truncation', 'previous_response_id',
  'prompt_cache_key', 'safety_identifier', 'service_tier', 'background', 'conversation', 'prompt', 'prompt_cache_retention',
];

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const RESPONSES_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    model: { type: 'string', minLength: 1 },
    input: {
      anyOf: [
        { type: 'string' },
        { type: 'array', minItems: 1, items: { type: 'object' } },
      ],
    },
    stream: { type: 'boolean' },
    max_output_tokens: { type: 'integer', minimum: 1 },
    instructions: { type: 'string' },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    store: { type: 'boolean' },
    user: { type: 'string' },
    tools: { type: 'array', items: { type: 'object', required: ['type'] } },
    max_tool_calls: { type: 'integer', minimum: 1 },
    text: { type: 'object' },
    reasoning: { type: 'object' },
    previous_response_id: { type: 'string', minLength: 1 },
    background: { type: 'boolean' },
  },
  required: ['model', 'input'],
  additionalProperties: true,
};
export const parseResponsesRequest = validator<ResponsesRequest>(RESPONSES_REQUEST_SCHEMA);
