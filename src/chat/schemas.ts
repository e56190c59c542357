import { validator, withComponents } from '../http/validation';
import { OPENAI_REQUEST_SCHEMAS } from '../openai/request-schemas.generated';

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

/** `stream_options` as OpenAI SDKs send it with streams; web Q&A takes it too. */
export const STREAM_OPTIONS_SCHEMA = { type: 'object', properties: { include_usage: { type: 'boolean' } }, additionalProperties: false } as const;

/** A content part of a chat message: text, or media the model reads (OpenAI's parts; their members as OpenAI defines them). */
export interface ChatContentPart {
  type: string;
  text?: string;
  refusal?: string;
  [member: string]: unknown;
}

/** A chat message of any of OpenAI's roles, as far as the gateway reads it. */
export interface ChatRequestMessage {
  role: MessageRole | 'developer' | 'tool' | 'function';
  /** Text or parts; null on an assistant turn that only calls tools. */
  content?: string | ChatContentPart[] | null;
  name?: string;
  tool_calls?: Record<string, unknown>[];
  function_call?: Record<string, unknown>;
  tool_call_id?: string;
  [member: string]: unknown;
}

/**
 * A chat completion request, as far as the gateway reads it. Every field OpenAI's
 * CreateChatCompletionRequest defines is accepted (parseChatRequest validates it); a field the
 * gateway forwards without reading it is not listed.
 */
export interface ChatRequest {
  model: string;
  messages: ChatRequestMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  n?: number;
  tools?: Record<string, unknown>[];
  functions?: Record<string, unknown>[];
  /** The fields below are read by the capability checks (request-features.ts). */
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  function_call?: unknown;
  response_format?: { type: string; json_schema?: Record<string, unknown> };
  modalities?: string[];
  audio?: Record<string, unknown>;
  reasoning_effort?: string;
  logprobs?: boolean;
  top_logprobs?: number;
  [field: string]: unknown;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * The interface spec's bounds, on top of OpenAI's schema (and checked first, so a request the spec
 * describes is refused in the words it always was): a model named, at least one message,
 * temperature in [0, 2], top_p in (0, 1], an output limit of at least one token.
 */
export const CHAT_BOUNDS = {
  type: 'object',
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: { type: 'array', minItems: 1 },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    max_tokens: { type: 'integer', minimum: 1 },
    max_completion_tokens: { type: 'integer', minimum: 1 },
  },
  required: ['model', 'messages'],
};

/**
 * The request body schema: the spec's bounds, then OpenAI's CreateChatCompletionRequest (generated
 * from OpenAI's document: src/openai/request-schemas.generated.ts). ajv enforces it and the OpenAPI
 * document publishes it, with OpenAI's schemas as its components. Fields OpenAI does not define
 * pass here; whether a model takes them is the handler's question.
 */
export const CHAT_REQUEST_SCHEMA = { allOf: [CHAT_BOUNDS, ref('CreateChatCompletionRequest')] };
const validateChatRequest = validator<ChatRequest>(withComponents(CHAT_REQUEST_SCHEMA, OPENAI_REQUEST_SCHEMAS));

/** A chat completion request, validated; its top-level nulls removed first (null means unset, and is not forwarded). */
export function parseChatRequest(body: unknown): ChatRequest {
  return validateChatRequest(withoutNullFields(body, CHAT_BOUNDS.required));
}

/** A Responses request, as far as the gateway reads it (every field OpenAI's CreateResponse defines is accepted). */
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
  [field: string]: unknown;
}

/** As CHAT_BOUNDS, for Responses: `input` (required by the spec) a string or at least one item. */
export const RESPONSES_BOUNDS = {
  type: 'object',
  properties: {
    model: { type: 'string', minLength: 1 },
    input: { anyOf: [{ type: 'string' }, { type: 'array', minItems: 1 }] },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    max_output_tokens: { type: 'integer', minimum: 1 },
  },
  required: ['model', 'input'],
};

/** As CHAT_REQUEST_SCHEMA, over OpenAI's CreateResponse. */
export const RESPONSES_REQUEST_SCHEMA = { allOf: [RESPONSES_BOUNDS, ref('CreateResponse')] };
const validateResponsesRequest = validator<ResponsesRequest>(withComponents(RESPONSES_REQUEST_SCHEMA, OPENAI_REQUEST_SCHEMAS));

/** A Responses request, validated; its top-level nulls removed first, as for chat. */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  return validateResponsesRequest(withoutNullFields(body, RESPONSES_BOUNDS.required));
}

/**
 * `body` without its top-level members that are null, except `required` ones (a null model is
 * refused as not a string, not as missing). Clients send an unset optional field as null; OpenAI's
 * schema allows null for some fields and not others, so the gateway reads every null as unset.
 * A copy only when there is a null to remove.
 */
function withoutNullFields(body: unknown, required: readonly string[]): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  let unset = false;
  for (const key in record) if (record[key] === null && !required.includes(key)) unset = true;
  if (!unset) return body;
  return Object.fromEntries(Object.entries(record).filter(([key, value]) => value !== null || required.includes(key)));
}

export { CHAT_REQUEST_FIELDS, OPENAI_REQUEST_SCHEMAS, RESPONSES_REQUEST_FIELDS } from '../openai/request-schemas.generated';
