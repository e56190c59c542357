import type { ModelEntry } from '../../billing/catalog';
import { botCapabilities } from '../model-types';
import { messageText, type ContentPart, type WebQaRequest } from './schemas';

/**
 * The upstream agent channel's protocol, shaped on the public bot-chat APIs (see the simulator,
 * simulator/bots.ts): `POST {channel}/bots/chat` with a bot id, an optional
 * conversation, `additional_messages` (text, or `object_string` parts for mixed media) and the
 * `suggestions` / `cards` switches; answered with the chat and its messages (`answer`,
 * `follow_up`, `card`) and usage, or streamed as `conversation.*` events.
 */
export interface UpstreamBotMessage {
  readonly type: 'answer' | 'follow_up' | 'card' | string;
  readonly content: string;
}

export interface UpstreamBotUsage {
  readonly input_count: number;
  readonly output_count: number;
  readonly token_count: number;
}

export interface UpstreamBotChat {
  readonly id: string;
  readonly conversation_id: string;
  readonly status: string;
  readonly messages?: readonly UpstreamBotMessage[];
  readonly usage?: UpstreamBotUsage;
  readonly last_error?: { code?: unknown; msg?: string };
}

export function upstreamBody(
  bot: ModelEntry,
  request: WebQaRequest,
  options: { accountId: string; conversationId: string | null; model: string | null; followUps: boolean; cards: boolean; stream: boolean },
): Record<string, unknown> {
  const ext = request.extension_options ?? {};
  return {
    bot_id: botCapabilities(bot).upstream_model ?? bot.id,
    // Every account's users share the gateway's provider account: keep them apart there.
    user_id: ext.user_id ? `${options.accountId}/${ext.user_id}` : options.accountId,
    ...(options.conversationId ? { conversation_id: options.conversationId } : {}),
    ...(options.model ? { model: options.model } : {}),
    stream: options.stream,
    max_tokens: botCapabilities(bot).max_output_tokens,
    suggestions: options.followUps,
    cards: options.cards,
    additional_messages: request.messages.map((m) =>
      typeof m.content === 'string'
        ? { role: m.role, content_type: 'text', content: m.content }
        : { role: m.role, content_type: 'object_string', content: JSON.stringify(m.content.map(upstreamPart)) },
    ),
  };
}

function upstreamPart(part: ContentPart): Record<string, string> {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image_url':
      return { type: 'image', file_url: part.image_url.url };
    case 'file_url':
      return { type: 'file', file_url: part.file_url.url };
    case 'audio_url':
      return { type: 'audio', file_url: part.audio_url.url };
  }
}

/** A card's content is a JSON object in a string; anything else is kept as text. */
export function parseCard(content: string): Record<string, unknown> {
  try {
    const card = JSON.parse(content) as unknown;
    if (typeof card === 'object' && card !== null && !Array.isArray(card)) return card as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { type: 'text', content };
}

export function textMessages(request: WebQaRequest): { role: string; content: string }[] {
  return request.messages.map((m) => ({ role: m.role, content: messageText(m) }));
}
