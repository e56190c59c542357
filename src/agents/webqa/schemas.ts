import { messagesSchema, STREAM_OPTIONS_SCHEMA, type ChatMessage } from '../../chat/schemas';
import { ApiError } from '../../http/errors';
import { validator } from '../../http/validation';

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }
  | { type: 'file_url'; file_url: { url: string } }
  | { type: 'audio_url'; audio_url: { url: string } };

export interface WebQaMessage extends Omit<ChatMessage, 'content'> {
  /** Text, or parts: text and media (mixed media needs a Pro bot). */
  content: string | ContentPart[];
}

export interface ExtensionOptions {
  /** Continue a conversation: the provider's, or the gateway's own where the provider keeps none. */
  conversation_id?: string;
  /** The end user, for the upstream's per-user memory; default: the caller's account. */
  user_id?: string;
  /** Follow-up suggestions (Pro bots: default true). */
  follow_ups?: boolean;
  /** Cards (Pro bots: default true). */
  cards?: boolean;
}

export interface WebQaRequest {
  bot_id: string;
  messages: WebQaMessage[];
  stream?: boolean;
  /** As for chat: `include_usage` adds `usage: null` to every chunk before the last (which always carries usage). */
  stream_options?: { include_usage?: boolean };
  model?: string;
  extension_options?: ExtensionOptions;
}

const URL_OBJECT = { type: 'object', properties: { url: { type: 'string', minLength: 1 } }, required: ['url'], additionalProperties: false };
const MEDIA = ['image_url', 'file_url', 'audio_url'] as const;

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const WEBQA_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    bot_id: { type: 'string', minLength: 1 },
    messages: messagesSchema({
      anyOf: [
        { type: 'string' },
        {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            properties: {
              type: { type: 'string', enum: ['text', ...MEDIA] },
              text: { type: 'string' },
              image_url: URL_OBJECT,
              file_url: URL_OBJECT,
              audio_url: URL_OBJECT,
            },
            required: ['type'],
            additionalProperties: false,
          },
        },
      ],
    }),
    stream: { type: 'boolean' },
    stream_options: STREAM_OPTIONS_SCHEMA,
    model: { type: 'string', minLength: 1 },
    extension_options: {
      type: 'object',
      properties: {
        conversation_id: { type: 'string', minLength: 1, maxLength: 256 },
        user_id: { type: 'string', minLength: 1, maxLength: 128 },
        follow_ups: { type: 'boolean' },
        cards: { type: 'boolean' },
      },
      additionalProperties: false,
    },
  },
  required: ['bot_id', 'messages'],
  additionalProperties: false,
};
const validate = validator<WebQaRequest>(WEBQA_REQUEST_SCHEMA);

/** Validates the body; a part must carry the member its type names (`text`, `image_url`…). */
export function parseWebQaRequest(body: unknown): WebQaRequest {
  const request = validate(body);
  request.messages.forEach((message, i) => {
    if (typeof message.content === 'string') return;
    message.content.forEach((part, j) => {
      const member = (part as Record<string, unknown>)[part.type];
      if (member === undefined) throw new ApiError(400, 'invalid_request', `messages[${i}].content[${j}].${part.type} is required`, { param: `messages[${i}].content[${j}].${part.type}` });
    });
  });
  return request;
}

/** The parts of the request that are not text: mixed media, each with the URL it hands the agent (named by `urlParam`). */
export function mediaParts(request: WebQaRequest): { type: Exclude<ContentPart['type'], 'text'>; param: string; url: string; urlParam: string }[] {
  return request.messages.flatMap((m, i) =>
    typeof m.content === 'string'
      ? []
      : m.content.flatMap((p, j) => {
          if (p.type === 'text') return [];
          const param = `messages[${i}].content[${j}]`;
          return [{ type: p.type, param, url: mediaUrlOf(p), urlParam: `${param}.${p.type}.url` }];
        }),
  );
}

/** The URL a media part names. */
export function mediaUrlOf(part: Exclude<ContentPart, { type: 'text' }>): string {
  switch (part.type) {
    case 'image_url':
      return part.image_url.url;
    case 'file_url':
      return part.file_url.url;
    case 'audio_url':
      return part.audio_url.url;
  }
}

/** The text of a message, for token counting: its text parts joined by newlines. */
export function messageText(message: WebQaMessage): string {
  return typeof message.content === 'string' ? message.content : message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
}
