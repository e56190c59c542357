/**
 * The OpenAI protocol: https://platform.openai.com/docs/api-reference (a relay: chat and Responses
 * bodies are OpenAI's own, passed on after validation; docs/providers.md).
 */
import type { Protocol } from '../protocol';
import { openaiErrorOf } from './errors';

export const openaiProtocol: Protocol = {
  name: 'openai',
  reference: 'https://platform.openai.com/docs/api-reference',
  serves: [
    'chat',
    // OpenAI's images API (src/upstreams/openai/images.ts), for token-billed image models.
    'image',
  ],
  auth: ['bearer', 'headers', 'none'],
  simulatorPrefix: '',
  errorOf: openaiErrorOf,
};
