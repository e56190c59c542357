/**
 * What a chat model takes beyond the text chat the spec describes, checked against what a request
 * uses: a feature the model's capabilities do not list is refused, 400 naming the field, before
 * anything is reserved. The checks of a request that uses nothing beyond the spec are a walk over
 * its top-level keys and its messages' roles and content types: no serialising, no allocation.
 * The part-kind and extra-field helpers are shared with Responses.
 */
import type { ModelEntry } from '../billing/catalog';
import { contentPartKind, type ContentPartKind } from '../billing/tokens';
import { ApiError } from '../http/errors';
import type { ChatCapabilities } from './model-type';
import type { ChatRequest, ChatRequestMessage } from './schemas';

export { contentPartKind, type ContentPartKind };

/** The capability each non-text part kind needs. */
export const PART_CAPABILITY: { readonly [kind in Exclude<ContentPartKind, 'text'>]: 'vision' | 'audio_input' | 'file_input' } = {
  image: 'vision',
  audio: 'audio_input',
  file: 'file_input',
};

/** The refusal of a feature `model` does not take, naming the field that asked for it. */
export function notTaken(model: ModelEntry, param: string, what: string): ApiError {
  return new ApiError(400, 'invalid_request', `${model.id} does not take ${what} (${param})`, { param });
}

/** Refuses the part unless the model takes its kind; text parts and types no kind names pass. */
export function checkPartKind(model: ModelEntry, caps: ChatCapabilities, type: unknown, param: string): void {
  const kind = contentPartKind(type);
  if (kind === undefined || kind === 'text') return;
  if (caps[PART_CAPABILITY[kind]] !== true) throw notTaken(model, param, `${kind} content parts`);
}

/**
 * Refuses every top-level field of `request` that OpenAI does not define (`known`) unless the
 * model's catalog entry lists it in `extra_params`: a provider extra (`thinking`, `top_k`) is
 * forwarded only to a model known to take it.
 */
export function checkExtraFields(model: ModelEntry, caps: ChatCapabilities, request: object, known: ReadonlySet<string>): void {
  for (const field in request) {
    if (known.has(field) || caps.extra_params?.includes(field)) continue;
    throw new ApiError(400, 'invalid_request', `${field} is not a recognised field for ${model.id}`, { param: field });
  }
}

/** The roles of the text chat the spec describes, and `developer` (a system turn by OpenAI's newer name). */
const PLAIN_ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'developer']);
const TOOL_FIELDS = ['tools', 'tool_choice', 'parallel_tool_calls', 'functions', 'function_call'] as const;

/** Refuses what `request` uses that `model` does not take; `known` is OpenAI's top-level field names. */
export function checkChatFeatures(model: ModelEntry, caps: ChatCapabilities, request: ChatRequest, known: ReadonlySet<string>): void {
  checkExtraFields(model, caps, request, known);
  if (caps.tools !== true) {
    for (const field of TOOL_FIELDS) if (request[field] !== undefined) throw notTaken(model, field, 'tools');
  }
  const format = request.response_format?.type;
  if ((format === 'json_object' || format === 'json_schema') && caps.structured_outputs !== true) throw notTaken(model, 'response_format', `response_format ${format}`);
  if (caps.audio_output !== true) {
    if (request.audio !== undefined) throw notTaken(model, 'audio', 'audio output');
    if (request.modalities?.includes('audio')) throw notTaken(model, 'modalities', 'audio output');
  }
  if (request.reasoning_effort !== undefined && caps.reasoning !== true) throw notTaken(model, 'reasoning_effort', 'reasoning_effort');
  if (caps.logprobs !== true) {
    if (request.logprobs === true) throw notTaken(model, 'logprobs', 'logprobs');
    if (request.top_logprobs !== undefined) throw notTaken(model, 'top_logprobs', 'logprobs');
  }
  const maxN = caps.max_n ?? 1;
  if (request.n !== undefined && request.n > maxN) throw new ApiError(400, 'invalid_request', `n must be at most ${maxN} for ${model.id}`, { param: 'n' });
  for (let i = 0; i < request.messages.length; i++) checkMessage(model, caps, request.messages[i]!, `messages[${i}]`);
}

function checkMessage(model: ModelEntry, caps: ChatCapabilities, message: ChatRequestMessage, param: string): void {
  if (typeof message.content !== 'string' && Array.isArray(message.content)) {
    for (let j = 0; j < message.content.length; j++) checkPartKind(model, caps, message.content[j]!.type, `${param}.content[${j}]`);
  }
  if (caps.tools === true) return;
  if (!PLAIN_ROLES.has(message.role)) throw notTaken(model, `${param}.role`, `${message.role} turns`);
  if (message.tool_calls !== undefined) throw notTaken(model, `${param}.tool_calls`, 'tool calls');
  if (message.function_call !== undefined) throw notTaken(model, `${param}.function_call`, 'function calls');
}
