import { defineModelType, TOKEN_PRICING_SCHEMA, type ModelEntry, type TokenPricing } from '../billing/catalog';

export type ChatPricing = TokenPricing;

export interface ChatCapabilities {
  readonly max_output_tokens: number;
  readonly context_window: number;
  /** Whether the channel serves the Responses interface (informational: the call is made either way). */
  readonly responses: boolean;
  /** The provider's name for the model, when it differs from the gateway's id. */
  readonly upstream_model?: string;
}

export const chatModelType = defineModelType<ChatPricing, ChatCapabilities>('chat', {
  pricing: TOKEN_PRICING_SCHEMA,
  capabilities: {
    type: 'object',
    properties: {
      max_output_tokens: { type: 'integer', minimum: 1 },
      context_window: { type: 'integer', minimum: 1 },
      responses: { type: 'boolean' },
      upstream_model: { type: 'string', minLength: 1 },
    },
    required: ['max_output_tokens', 'context_window', 'responses'],
    additionalProperties: false,
  },
});

/** Typed views of a chat model's data; the catalog schema above guarantees the members. */
export function chatPricing(model: ModelEntry): ChatPricing {
  return chatModelType.readPricing(model);
}

export function chatCapabilities(model: ModelEntry): ChatCapabilities {
  return chatModelType.readCapabilities(model);
}
