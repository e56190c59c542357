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
    // The capabilities below still speak the gateway's own OpenAI-shaped paths (the simulator's
    // invented wire, docs/providers.md). Each leaves this list when its models move to the
    // channel of their real protocol.
    'image',
    'podcast',
  ],
  auth: ['bearer', 'headers', 'none'],
  simulatorPrefix: '',
  errorOf: openaiErrorOf,
};
