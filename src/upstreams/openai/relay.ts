/**
 * The OpenAI protocol is a relay (https://platform.openai.com/docs/api-reference/chat,
 * https://platform.openai.com/docs/api-reference/responses): chat and Responses request bodies are
 * OpenAI's own, validated by the gateway and passed on, and their answers and streams are read in
 * OpenAI's shape. A relay feature sees its channel only as this: JSON calls and event streams
 * whose error statuses are already the OpenAI protocol's errors (errors.ts).
 */
import type { Channel } from '../channel';

export type OpenAiRelay = Pick<Channel, 'name' | 'json' | 'stream'>;
