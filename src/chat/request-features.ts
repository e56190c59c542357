import type { ModelEntry } from '../billing/catalog';
import { contentPartKind } from '../billing/tokens';
import { ApiError } from '../http/errors';
import { chatCapabilities, type ChatCapabilities, type PartAllowances } from './model-type';
import type { ChatRequest, ChatRequestMessage } from './schemas';

/**
 * The checks chat completions and Responses share for what a request asks of its model beyond
 * text chat: one rule each, so both endpoints refuse the same things the same way. Every refusal
 * is 400 naming the field (`param`), thrown while the request is read, before anything is reserved.
 */

/** The capabilities that are a yes or no. */
export type ChatFeature = 'tools' | 'structured_outputs' | 'vision' | 'audio_input' | 'file_input' | 'audio_output' | 'reasoning' | 'logprobs';

/** A field the model cannot take. `param` is the field's path as the client wrote it (`tools[0]`, `input[1].content[0]`). */
export function unsupported(model: ModelEntry, param: string, what: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', `${param}: ${model.id} does not take ${what}`, { param });
}

/**
 * A provider object named by its id (an uploaded file, a stored item or prompt, a vector store, a
 * container): the provider resolves it under the gateway's one provider key, where no account of
 * the gateway owns it, so one account could name another's. Refused; the client sends the content.
 */
export function providerObjectRefused(param: string, what: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', `${param}: ${what} is resolved by id at the provider, under the gateway's account; the gateway does not relay provider ids, send the content itself`, { param });
}

/** Refuses a content part that names a provider file by `file_id` (`file_id` on the part, or in the part's `file`). */
export function refuseFileId(part: Readonly<Record<string, unknown>>, param: string): void {
  if (part.file_id !== undefined) throw providerObjectRefused(`${param}.file_id`, 'a file_id');
  const file = part.file;
  if (typeof file === 'object' && file !== null && 'file_id' in file && file.file_id !== undefined) throw providerObjectRefused(`${param}.file.file_id`, 'a file_id');
}

/** Refuses `param` unless the model's catalog entry grants `feature`. */
export function requireFeature(model: ModelEntry, feature: ChatFeature, param: string, what: string = feature.replace('_', ' ')): void {
  if (chatCapabilities(model)[feature] !== true) throw unsupported(model, param, what);
}

/** The kinds of non-text content part, each reserved at the model's allowance for it. */
export type PartKind = keyof PartAllowances;

const PART_FEATURE: Readonly<Record<PartKind, ChatFeature>> = { image: 'vision', audio: 'audio_input', file: 'file_input' };

/**
 * The tokens one part of `kind` reserves, after refusing it (naming `param`) when the model does
 * not take that kind. The catalog schema makes a model that takes a kind name its allowance.
 */
export function partAllowance(model: ModelEntry, kind: PartKind, param: string): number {
  requireFeature(model, PART_FEATURE[kind], param, `${kind} parts`);
  return chatCapabilities(model).part_allowances?.[kind] ?? 0;
}

/**
 * Refuses a top-level field OpenAI does not define (`known`), unless the model forwards it as a
 * provider extra (`capabilities.extra_params`, such as `top_k` or `thinking`). `known` is a set,
 * as the generated CHAT_REQUEST_FIELDS and RESPONSES_REQUEST_FIELDS are: one lookup a field.
 */
export function checkExtraFields(model: ModelEntry, body: object, known: ReadonlySet<string>): void {
  const extras: ChatCapabilities['extra_params'] = chatCapabilities(model).extra_params ?? [];
  for (const field in body) {
    if (!known.has(field) && !extras.includes(field)) {
      throw new ApiError(400, 'unknown_parameter', `${field} is not a field of this endpoint, nor one ${model.id} takes`, { param: field });
    }
  }
}

/**
 * The service tiers a request may name: the provider's default ones, which the catalog's prices
 * are. Another tier (`priority`, `flex`, `scale`) costs the provider's own price for it, which the
 * catalog does not hold, so it is refused rather than settled at the default price.
 */
const PRICED_SERVICE_TIERS: ReadonlySet<string> = new Set(['auto', 'default']);

/** Refuses a `service_tier` the catalog's prices are not for (chat completions and Responses alike). */
export function checkServiceTier(model: ModelEntry, tier: unknown): void {
  if (typeof tier === 'string' && !PRICED_SERVICE_TIERS.has(tier)) throw unsupported(model, 'service_tier', `service_tier ${tier} (its prices are the default tier's)`);
}

/** The tokens a JSON value (a tool's definition, a schema) adds to a prompt: its text, counted as the prompt is. */
export function jsonTokens(value: unknown, count: (text: string) => number): number {
  return value === undefined ? 0 : count(JSON.stringify(value));
}

/** The roles of the text chat the spec describes, and `developer` (a system turn by OpenAI's newer name). */
const PLAIN_ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'developer']);
const TOOL_FIELDS = ['tools', 'tool_choice', 'parallel_tool_calls', 'functions', 'function_call'] as const;

/**
 * Refuses what a chat completion request uses that its model does not take; `known` is OpenAI's
 * top-level field names. A request of the spec's text chat costs a walk over its top-level keys
 * and its messages' roles and content types: nothing is serialised or copied.
 */
export function checkChatFeatures(model: ModelEntry, request: ChatRequest, known: ReadonlySet<string>): void {
  checkExtraFields(model, request, known);
  const caps = chatCapabilities(model);
  if (caps.tools !== true) {
    for (const field of TOOL_FIELDS) if (request[field] !== undefined) throw unsupported(model, field, 'tools');
  }
  const format = request.response_format?.type;
  if (format === 'json_object' || format === 'json_schema') requireFeature(model, 'structured_outputs', 'response_format', `response_format ${format}`);
  if (request.audio !== undefined) requireFeature(model, 'audio_output', 'audio', 'audio output');
  if (request.modalities?.includes('audio')) requireFeature(model, 'audio_output', 'modalities', 'audio output');
  if (request.reasoning_effort !== undefined) requireFeature(model, 'reasoning', 'reasoning_effort');
  if (request.logprobs === true) requireFeature(model, 'logprobs', 'logprobs');
  if (request.top_logprobs !== undefined) requireFeature(model, 'logprobs', 'top_logprobs', 'logprobs');
  checkServiceTier(model, request.service_tier);
  // Chat's built-in web search runs searches the provider bills per call, which a chat completion
  // does not report: the settlement could not price them (Responses reports them as output items).
  if (request.web_search_options !== undefined) throw unsupported(model, 'web_search_options', 'web search in chat completions (use Responses with a priced web_search tool)');
  const maxN = caps.max_n ?? 1;
  if (request.n !== undefined && request.n > maxN) throw unsupported(model, 'n', `n above ${maxN}`);
  for (let i = 0; i < request.messages.length; i++) checkMessage(model, caps, request.messages[i]!, `messages[${i}]`);
}

function checkMessage(model: ModelEntry, caps: ChatCapabilities, message: ChatRequestMessage, param: string): void {
  if (typeof message.content !== 'string' && Array.isArray(message.content)) {
    for (let j = 0; j < message.content.length; j++) {
      const kind = contentPartKind(message.content[j]!.type);
      if (kind !== undefined && kind !== 'text') partAllowance(model, kind, `${param}.content[${j}]`);
      refuseFileId(message.content[j]!, `${param}.content[${j}]`);
    }
  }
  if (caps.tools === true) return;
  if (!PLAIN_ROLES.has(message.role)) throw unsupported(model, `${param}.role`, `${message.role} turns`);
  if (message.tool_calls !== undefined) throw unsupported(model, `${param}.tool_calls`, 'tool calls');
  if (message.function_call !== undefined) throw unsupported(model, `${param}.function_call`, 'function calls');
}
