import type { ModelEntry } from '../billing/catalog';
import { pricingOf, type Pricing } from '../billing/money';
import { chatPricing, chatTokenLine, toolCallLines } from './model-type';

/** A Response's usage as providers report it; the details are optional until completeUsage fills them. */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details?: { cached_tokens?: number; [more: string]: unknown } | null;
  output_tokens: number;
  output_tokens_details?: { reasoning_tokens?: number; [more: string]: unknown } | null;
  total_tokens: number;
  [more: string]: unknown;
}

/** Output items that are not a built-in tool's run, though their type ends in `_call`: the client runs these. */
const CLIENT_CALLS = new Set(['function_call', 'custom_tool_call']);

/**
 * The built-in tool calls among output items, by tool: an item `web_search_call` is one call of
 * `web_search`, `image_generation_call` one of `image_generation`, as the catalog's
 * `tool_call_prices` name them.
 */
export function builtInToolCalls(output: readonly { readonly type: string }[]): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const item of output) {
    if (!item.type.endsWith('_call') || CLIENT_CALLS.has(item.type)) continue;
    const tool = item.type.slice(0, -'_call'.length);
    calls[tool] = (calls[tool] ?? 0) + 1;
  }
  return calls;
}

/**
 * The one settlement of a Response: its tokens (cached input at the cached price) and one line per
 * built-in tool it ran. The details record the usage behind it; a request that used none of the
 * extensions is recorded exactly as before (tokens only).
 */
export function responsesSettlement(model: ModelEntry, usage: ResponsesUsage, output: readonly { readonly type: string }[]): { pricing: Pricing; details: Record<string, unknown> } {
  const pricing = chatPricing(model);
  const cachedInput = usage.input_tokens_details?.cached_tokens ?? 0;
  const reasoning = usage.output_tokens_details?.reasoning_tokens ?? 0;
  const calls = builtInToolCalls(output);
  return {
    pricing: pricingOf(chatTokenLine(pricing, { input: usage.input_tokens, cachedInput, output: usage.output_tokens }), ...toolCallLines(pricing, calls)),
    details: {
      model: model.id,
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      ...(cachedInput > 0 ? { cached_input_tokens: cachedInput } : {}),
      ...(reasoning > 0 ? { reasoning_tokens: reasoning } : {}),
      ...(Object.keys(calls).length > 0 ? { built_in_tool_calls: calls } : {}),
    },
  };
}
