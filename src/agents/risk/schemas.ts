import { validator } from '../../http/validation';

export interface RiskRequest {
  /** Accepted so that OpenAI-compatible clients can call the endpoint; only `risk-agent`. */
  model?: string;
  messages: { role: 'system' | 'user' | 'assistant'; content: string; name?: string }[];
  stream?: boolean;
  identify?: boolean;
}

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const RISK_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    model: { type: 'string', enum: ['risk-agent'] },
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      items: {
        type: 'object',
        properties: {
          role: { type: 'string', enum: ['system', 'user', 'assistant'] },
          content: { type: 'string', maxLength: 100_000 },
          name: { type: 'string' },
        },
        required: ['role', 'content'],
        additionalProperties: false,
      },
    },
    stream: { type: 'boolean' },
    identify: { type: 'boolean' },
  },
  required: ['messages'],
  additionalProperties: false,
};
export const parseRiskRequest = validator<RiskRequest>(RISK_REQUEST_SCHEMA);
