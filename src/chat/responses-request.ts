import type { ModelEntry } from '../billing/catalog';
import { contentPartKind, countResponsesInputTokens, type TextTokenCounter } from '../billing/tokens';
import { ApiError } from '../http/errors';
import { chatCapabilities, chatPricing } from './model-type';
import { checkExtraFields, checkServiceTier, jsonTokens, partAllowance, providerObjectRefused, refuseFileId, requireFeature } from './request-features';
import { RESPONSES_REQUEST_FIELDS, type ResponsesRequest } from './schemas';

/**
 * What a Responses request asks of its model beyond text, checked before anything is reserved,
 * and what it adds to the reservation: the tokens of its tool definitions and its `text.format`
 * schema, its image, audio and file parts at their allowances and its function calls (the one
 * input rule of billing/tokens), and the money of the built-in tool calls it may run.
 */

/** Tool types the client's own code runs: the model only writes their calls. */
const CLIENT_TOOLS = new Set(['function', 'custom']);

/**
 * Built-in tool calls reserved per listed built-in tool when the request sets no
 * `max_tool_calls`. A model may call a built-in tool any number of times; calls beyond this are
 * charged at settlement all the same, as an overrun of the reservation (docs/auditing.md).
 */
export const DEFAULT_BUILT_IN_CALLS = 4;

export interface ResponsesAsk {
  /** The prompt's tokens as the reservation counts them (planTokens' prompt count). */
  readonly promptTokens: () => number;
  /** The money reserved for built-in tool calls, beside the tokens. */
  readonly builtInToolReserve: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The built-in tools listed, each priced; a tool the model has no price for is refused naming its type. */
function builtInToolPrices(model: ModelEntry, tools: readonly Record<string, unknown>[]): number[] {
  const prices: number[] = [];
  tools.forEach((tool, i) => {
    const type = String(tool.type);
    if (CLIENT_TOOLS.has(type)) {
      requireFeature(model, 'tools', `tools[${i}]`, `${type} tools`);
      return;
    }
    const price = chatPricing(model).tool_call_prices?.[type];
    if (price === undefined) throw new ApiError(400, 'unsupported_parameter', `tools[${i}].type: ${model.id} does not offer the built-in tool ${type}`, { param: `tools[${i}].type` });
    prices.push(price);
  });
  return prices;
}

/**
 * `max_tool_calls` caps the built-in calls of the whole response: that many at the dearest
 * listed tool is an upper bound. Without it, DEFAULT_BUILT_IN_CALLS of each listed tool.
 */
function toolReserve(prices: readonly number[], maxToolCalls: number | undefined): number {
  if (prices.length === 0) return 0;
  if (maxToolCalls !== undefined) return maxToolCalls * Math.max(...prices);
  return prices.reduce((sum, price) => sum + price * DEFAULT_BUILT_IN_CALLS, 0);
}

/**
 * Refuses the input's parts and tool calls the model cannot take, each naming its place
 * (`input[i].content[j]`, `input[i]`), and every item or part the provider would resolve by id
 * (see providerObjectRefused): an `item_reference`, a `reasoning` item without its
 * `encrypted_content`, a part's `file_id` (in a message's content or a tool output's). Full items
 * without ids, such as the AI SDK's `function_call` items of a multi-step tool flow, pass.
 */
function checkInput(model: ModelEntry, input: ResponsesRequest['input']): void {
  if (typeof input === 'string') return;
  input.forEach((item, i) => {
    // OpenAI's item reference may leave its type out: then it is the one item with neither type nor role.
    const reference = item.type === 'item_reference' || ((item.type === undefined || item.type === null) && item.role === undefined);
    if (reference) throw providerObjectRefused(`input[${i}]`, 'an item_reference');
    if (item.type === 'reasoning' && item.encrypted_content === undefined) throw providerObjectRefused(`input[${i}]`, 'a reasoning item without encrypted_content');
    if (item.type === 'function_call' || item.type === 'custom_tool_call') requireFeature(model, 'tools', `input[${i}]`, 'tool calls');
    if (Array.isArray(item.output)) {
      item.output.forEach((part: unknown, j) => {
        if (isRecord(part)) refuseFileId(part, `input[${i}].output[${j}]`);
      });
    }
    if (!Array.isArray(item.content)) return;
    item.content.forEach((part: unknown, j) => {
      if (!isRecord(part)) return;
      const kind = contentPartKind(part.type);
      if (kind !== undefined && kind !== 'text') partAllowance(model, kind, `input[${i}].content[${j}]`);
      refuseFileId(part, `input[${i}].content[${j}]`);
    });
  });
}

/** Refuses the tools that name provider resources by id: a file search's vector stores, a code interpreter's container or files. */
function checkToolResources(tools: readonly Record<string, unknown>[]): void {
  tools.forEach((tool, i) => {
    if (tool.vector_store_ids !== undefined) throw providerObjectRefused(`tools[${i}].vector_store_ids`, 'vector_store_ids');
    const container = tool.container;
    if (typeof container === 'string') throw providerObjectRefused(`tools[${i}].container`, 'a container id');
    if (isRecord(container) && container.file_ids !== undefined) throw providerObjectRefused(`tools[${i}].container.file_ids`, 'file_ids');
  });
}

/** Refuses what the model cannot take, each refusal naming its field; `text: {}` (LangChain's default) asks nothing. */
function checkFeatures(model: ModelEntry, request: ResponsesRequest): void {
  if (request.background === true) throw new ApiError(400, 'unsupported_parameter', 'background: the gateway answers Responses in the request; background responses are not offered', { param: 'background' });
  // A conversation lives at the provider under the gateway's credentials, where no account owns it.
  if (request.conversation !== undefined) throw new ApiError(400, 'unsupported_parameter', 'conversation: conversations are not offered; continue a response with previous_response_id', { param: 'conversation' });
  if (request.prompt !== undefined) throw providerObjectRefused('prompt', 'a stored prompt');
  checkExtraFields(model, request, RESPONSES_REQUEST_FIELDS);
  checkServiceTier(model, request.service_tier);
  if (request.tool_choice !== undefined) requireFeature(model, 'tools', 'tool_choice', 'tools');
  if (request.parallel_tool_calls !== undefined) requireFeature(model, 'tools', 'parallel_tool_calls', 'tools');
  const format = isRecord(request.text) && isRecord(request.text.format) ? request.text.format.type : undefined;
  if (format === 'json_schema' || format === 'json_object') requireFeature(model, 'structured_outputs', 'text.format', 'structured outputs');
  if (request.reasoning !== undefined) requireFeature(model, 'reasoning', 'reasoning');
  if (request.top_logprobs !== undefined) requireFeature(model, 'logprobs', 'top_logprobs', 'logprobs');
}

/** Checks a Responses request against its model, and says what it reserves beyond the output. */
export function askOfResponses(model: ModelEntry, request: ResponsesRequest, count: TextTokenCounter): ResponsesAsk {
  checkFeatures(model, request);
  const tools = request.tools ?? [];
  checkToolResources(tools);
  const builtInToolReserve = toolReserve(builtInToolPrices(model, tools), request.max_tool_calls);
  checkInput(model, request.input);
  const format = isRecord(request.text) ? request.text.format : undefined;
  const definitions = (): number => (tools.length > 0 ? jsonTokens(tools, count) : 0) + jsonTokens(format, count);
  const allowances = chatCapabilities(model).part_allowances;
  return {
    promptTokens: () => countResponsesInputTokens(request.input, count, allowances) + (request.instructions ? count(request.instructions) : 0) + definitions(),
    builtInToolReserve,
  };
}
