import { defineModelType, MONEY_SCHEMA, TOKEN_PRICING_SCHEMA, type ModelEntry, type TokenPricing } from '../billing/catalog';
import { priceLine, type PricedLine } from '../billing/money';

export interface ChatPricing extends TokenPricing {
  /**
   * The price per million input tokens the provider served from its prompt cache. Without it,
   * cached input is priced as any input: the gateway never charges less than it pays.
   */
  readonly cached_input_per_million?: number;
  /** The price of one call of each built-in Responses tool the model may run (`web_search`, …); a tool not listed is refused. */
  readonly tool_call_prices?: Readonly<Record<string, number>>;
}

/** The tokens reserved for one non-text content part, priced as input: its size is unknown until the provider reads it. */
export interface PartAllowances {
  readonly image?: number;
  readonly audio?: number;
  readonly file?: number;
}

/**
 * What a chat model takes beyond the text chat the spec describes. Every member beyond the first
 * four is optional and absent means "not taken": a request that uses a feature the model does not
 * take is refused naming the field, before anything is reserved.
 */
export interface ChatCapabilities {
  readonly max_output_tokens: number;
  readonly context_window: number;
  /** Whether the channel serves the Responses interface (informational: the call is made either way). */
  readonly responses: boolean;
  /** The provider's name for the model, when it differs from the gateway's id. */
  readonly upstream_model?: string;
  /** Function (and custom) tools: `tools`, `tool_choice`, `parallel_tool_calls`, legacy `functions`, tool turns. */
  readonly tools?: boolean;
  /** `response_format` (chat) and `text.format` (Responses) of type `json_object` or `json_schema`. */
  readonly structured_outputs?: boolean;
  /** Image content parts. */
  readonly vision?: boolean;
  /** Audio content parts (`input_audio`). */
  readonly audio_input?: boolean;
  /** File content parts. */
  readonly file_input?: boolean;
  /** Audio output (`modalities` with `audio`, `audio`). */
  readonly audio_output?: boolean;
  /** `reasoning_effort` (chat) and `reasoning` (Responses). */
  readonly reasoning?: boolean;
  /** `logprobs` and `top_logprobs`. */
  readonly logprobs?: boolean;
  /** The largest `n` the model takes (1 when absent). */
  readonly max_n?: number;
  /** Request fields OpenAI does not define that are forwarded to the provider (`thinking`, `top_k`, …). */
  readonly extra_params?: readonly string[];
  /** Tokens reserved per non-text part; a model that takes a part kind must say what it reserves for it. */
  readonly part_allowances?: PartAllowances;
}

const ALLOWANCE = { type: 'integer', minimum: 1 } as const;

export const chatModelType = defineModelType<ChatPricing, ChatCapabilities>('chat', {
  pricing: {
    ...TOKEN_PRICING_SCHEMA,
    properties: {
      ...TOKEN_PRICING_SCHEMA.properties,
      cached_input_per_million: MONEY_SCHEMA,
      tool_call_prices: { type: 'object', additionalProperties: MONEY_SCHEMA },
    },
  },
  capabilities: {
    type: 'object',
    properties: {
      max_output_tokens: { type: 'integer', minimum: 1 },
      context_window: { type: 'integer', minimum: 1 },
      responses: { type: 'boolean' },
      upstream_model: { type: 'string', minLength: 1 },
      tools: { type: 'boolean' },
      structured_outputs: { type: 'boolean' },
      vision: { type: 'boolean' },
      audio_input: { type: 'boolean' },
      file_input: { type: 'boolean' },
      audio_output: { type: 'boolean' },
      reasoning: { type: 'boolean' },
      logprobs: { type: 'boolean' },
      max_n: { type: 'integer', minimum: 1, maximum: 128 },
      extra_params: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
      part_allowances: {
        type: 'object',
        properties: { image: ALLOWANCE, audio: ALLOWANCE, file: ALLOWANCE },
        additionalProperties: false,
      },
    },
    required: ['max_output_tokens', 'context_window', 'responses'],
    additionalProperties: false,
    // A model that takes a part kind says what one such part reserves.
    allOf: [
      { if: { properties: { vision: { const: true } }, required: ['vision'] }, then: { required: ['part_allowances'], properties: { part_allowances: { type: 'object', required: ['image'] } } } },
      { if: { properties: { audio_input: { const: true } }, required: ['audio_input'] }, then: { required: ['part_allowances'], properties: { part_allowances: { type: 'object', required: ['audio'] } } } },
      { if: { properties: { file_input: { const: true } }, required: ['file_input'] }, then: { required: ['part_allowances'], properties: { part_allowances: { type: 'object', required: ['file'] } } } },
    ],
  },
});

/** Typed views of a chat model's data; the catalog schema above guarantees the members. */
export function chatPricing(model: ModelEntry): ChatPricing {
  return chatModelType.readPricing(model);
}

export function chatCapabilities(model: ModelEntry): ChatCapabilities {
  return chatModelType.readCapabilities(model);
}

/** The tokens of a chat-like call, as a provider reports them. */
export interface TokenUsage {
  readonly input: number;
  /** Of `input`, those served from the provider's prompt cache. */
  readonly cachedInput: number;
  /** Every output token, reasoning tokens included (OpenAI counts them in the completion). */
  readonly output: number;
}

/**
 * The tokens of a chat-like call as one priced line. Without cached input the line is exactly the
 * `input_tokens`/`output_tokens` line of every earlier settlement, so a request the spec describes
 * is recorded as before; with it, cached tokens are a unit of their own at the cached price (or
 * the input price when the model has none).
 */
export function chatTokenLine(pricing: ChatPricing, usage: TokenUsage): PricedLine {
  const cached = Math.min(Math.max(0, usage.cachedInput), usage.input);
  if (cached === 0) {
    return priceLine({ input_tokens: usage.input, output_tokens: usage.output }, { input_tokens: pricing.input_per_million, output_tokens: pricing.output_per_million }, 1_000_000);
  }
  return priceLine(
    { input_tokens: usage.input - cached, cached_input_tokens: cached, output_tokens: usage.output },
    { input_tokens: pricing.input_per_million, cached_input_tokens: pricing.cached_input_per_million ?? pricing.input_per_million, output_tokens: pricing.output_per_million },
    1_000_000,
  );
}

/** One line per built-in tool the output ran, each at its per-call price; a tool without a price is not a line (it was refused before the call). */
export function toolCallLines(pricing: ChatPricing, calls: Readonly<Record<string, number>>): PricedLine[] {
  const lines: PricedLine[] = [];
  for (const [tool, count] of Object.entries(calls).sort(([a], [b]) => a.localeCompare(b))) {
    const price = pricing.tool_call_prices?.[tool];
    if (price !== undefined && count > 0) lines.push(priceLine({ [`${tool}_calls`]: count }, { [`${tool}_calls`]: price }));
  }
  return lines;
}
