/**
 * The OpenAI protocol is a relay (https://platform.openai.com/docs/api-reference/chat,
 * https://platform.openai.com/docs/api-reference/responses): chat and Responses request bodies are
 * OpenAI's own, validated by the gateway and passed on, and their answers and streams are read in
 * OpenAI's shape. A relay feature sees its channel only as this: JSON calls and event streams
 * whose error statuses are already the OpenAI protocol's errors (errors.ts).
 */
import type { Channel } from '../channel';

export type OpenAiRelay = Pick<Channel, 'name' | 'json' | 'stream'>;

/** OpenAI's paths, relative to the channel's base URL (`…/v1`): the relay's, so no feature writes one. */
const CHAT_COMPLETIONS_PATH = '/chat/completions';
const RESPONSES_PATH = '/responses';

/** `POST /chat/completions` for a whole answer (the body's `stream` is the caller's): OpenAI's completion object. */
export function chatCompletion<T>(relay: OpenAiRelay, body: unknown, signal?: AbortSignal): Promise<T> {
  return relay.json<T>('POST', CHAT_COMPLETIONS_PATH, body, signal);
}

/** `POST /chat/completions` streamed: the chunks as server-sent events. */
export function chatCompletionStream(relay: OpenAiRelay, body: unknown, signal?: AbortSignal): ReturnType<OpenAiRelay['stream']> {
  return relay.stream(CHAT_COMPLETIONS_PATH, body, signal);
}

/** `POST /responses` for a whole answer: OpenAI's response object. */
export function createResponse<T>(relay: OpenAiRelay, body: unknown, signal?: AbortSignal): Promise<T> {
  return relay.json<T>('POST', RESPONSES_PATH, body, signal);
}

/** `POST /responses` streamed: the response's events as server-sent events. */
export function createResponseStream(relay: OpenAiRelay, body: unknown, signal?: AbortSignal): ReturnType<OpenAiRelay['stream']> {
  return relay.stream(RESPONSES_PATH, body, signal);
}
