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

/** One content part of a chat message (`text`, `image_url`, `input_audio`, `file`, `refusal`). */
export interface ChatContentPart {
  readonly type: string;
  readonly text?: string;
  readonly refusal?: string;
  readonly [more: string]: unknown;
}

/** An assistant turn's call of a tool (or, legacy, of a function). */
export interface ChatToolCall {
  readonly id?: string;
  readonly type?: string;
  readonly function?: { readonly name?: string; readonly arguments?: string };
  readonly custom?: { readonly name?: string; readonly input?: string };
}

/** A message of any role OpenAI defines: `developer`, `system`, `user`, `assistant`, `tool`, `function`. */
export interface ChatRequestMessage {
  readonly role: string;
  readonly content?: string | readonly ChatContentPart[] | null;
  readonly name?: string;
  readonly refusal?: string | null;
  readonly tool_calls?: readonly ChatToolCall[];
  readonly function_call?: { readonly name?: string; readonly arguments?: string };
  readonly tool_call_id?: string;
  readonly [more: string]: unknown;
}

export interface ChatRequest {
  model: string;
  messages: ChatRequestMessage[];
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
  n?: number;
  tools?: readonly Record<string, unknown>[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  functions?: readonly Record<string, unknown>[];
  function_call?: unknown;
  response_format?: { readonly type: string; readonly json_schema?: Record<string, unknown> };
  modalities?: readonly string[];
  audio?: Record<string, unknown>;
  reasoning_effort?: string;
  logprobs?: boolean;
  top_logprobs?: number;
  [extra: string]: unknown;
}

/**
 * The top-level fields of OpenAI's CreateChatCompletionRequest. Temporary hand list until the
 * schema generated from OpenAI's document replaces this module's validation.
 */
export const CHAT_REQUEST_FIELDS: ReadonlySet<string> = new Set([
  'metadata', 'top_logprobs', 'temperature', 'top_p', 'user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention',
  'prompt_cache_options', 'messages', 'model', 'service_tier', 'modalities', 'verbosity', 'reasoning_effort', 'max_completion_tokens',
  'frequency_penalty', 'presence_penalty', 'web_search_options', 'response_format', 'audio', 'store', 'moderation', 'stream', 'stop',
  'logit_bias', 'logprobs', 'max_tokens', 'n', 'prediction', 'seed', 'stream_options', 'tools', 'tool_choice', 'parallel_tool_calls',
  'function_call', 'functions',
]);

/** `stream_options` as OpenAI SDKs send it with streams; web Q&A takes it too. */
export const STREAM_OPTIONS_SCHEMA = { type: 'object', properties: { include_usage: { type: 'boolean' } }, additionalProperties: false } as const;

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const CHAT_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          role: { type: 'string', enum: ['developer', 'system', 'user', 'assistant', 'tool', 'function'] },
          content: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', required: ['type'] } }, { type: 'null' }] },
          name: { type: 'string' },
        },
        required: ['role'],
        // OpenAI's tool and function turns say which call or function they answer.
        allOf: [
          { if: { properties: { role: { const: 'tool' } }, required: ['role'] }, then: { required: ['tool_call_id', 'content'] } },
          { if: { properties: { role: { const: 'function' } }, required: ['role'] }, then: { required: ['name', 'content'] } },
        ],
      },
    },
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
    n: { type: 'integer', minimum: 1, maximum: 128 },
    tools: { type: 'array', items: { type: 'object' } },
    functions: { type: 'array', items: { type: 'object' } },
    response_format: { type: 'object', properties: { type: { type: 'string', enum: ['text', 'json_object', 'json_schema'] } }, required: ['type'] },
    modalities: { type: 'array', items: { type: 'string' } },
    logprobs: { type: 'boolean' },
    top_logprobs: { type: 'integer', minimum: 0, maximum: 20 },
  },
  required: ['model', 'messages'],
};
const validateChatRequest = validator<ChatRequest>(CHAT_REQUEST_SCHEMA);
/** Top-level `null` means unset: removed before validation. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const record = body as Record<string, unknown>;
    for (const key of Object.keys(record)) if (record[key] === null) delete record[key];
  }
  return validateChatRequest(body);
}

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
export const RESPONSES_REQUEST_FIELDS: ReadonlySet<string> = new Set([
  'model', 'input', 'stream', 'stream_options', 'max_output_tokens', 'instructions', 'temperature', 'top_p', 'top_logprobs', 'metadata', 'store',
  'user', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_tool_calls', 'text', 'reasoning', 'include', 'truncation', 'previous_response_id',
  'prompt_cache_key', 'safety_identifier', 'service_tier', 'background', 'conversation', 'prompt', 'prompt_cache_retention',
]);

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
