/**
 * What a turn of a bot chat (the web Q&A agent) is to every provider protocol that runs one
 * (src/upstreams/<protocol>/): the gateway's typed ask, the gateway's reading of the provider's
 * answer (whole, or as events while it streams), and the adapter that turns one into the other over
 * a channel. Provider-neutral: no provider's field is named here. The web Q&A feature
 * (src/agents/webqa) picks the adapter by its channel's protocol (bot-adapters.ts) and keeps
 * validation, pricing, conversation ids and rendering.
 */
import type { WireEventTransport, WireTransport } from './wire';

/** The media a bot may be handed in a message: the provider fetches each from its URL. */
export type BotMediaKind = 'image' | 'file' | 'audio';

export type BotMessagePart = { readonly type: 'text'; readonly text: string } | { readonly type: BotMediaKind; readonly url: string };

export interface BotChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  /** Text, or parts (mixed media). */
  readonly content: string | readonly BotMessagePart[];
}

/** A turn as the gateway asks a provider for it. */
export interface BotChatAsk {
  /** The provider's id of the bot (the catalog's `upstream_model`, else the gateway's bot id). */
  readonly bot: string;
  /** The catalog model, for the channel's metrics. */
  readonly catalogModel: string;
  /** The end user as the provider is to know them (the account, and the client's user within it). */
  readonly user: string;
  /** The provider's conversation to continue; null starts one. Only for adapters that keep conversations. */
  readonly conversationId: string | null;
  /** The turn's messages, the last one the user's question; for an adapter that keeps no conversation, the earlier turns first. */
  readonly messages: readonly BotChatMessage[];
  /** The bot's most output tokens (what the gateway reserved for); a provider that takes a limit is sent it. */
  readonly maxOutputTokens: number;
  /** Whether the client wants cards (a Pro bot's); a provider with a switch for them is sent it. */
  readonly cards: boolean;
}

/** The tokens a turn used, as the provider reported them. */
export interface BotChatUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Why these were read from a fallback of the provider's report (its breakdown unreadable): the feature logs it. */
  readonly warning?: string;
}

/**
 * What a streamed turn yields, in order: `started` first, then the answer's text in pieces, the
 * follow-up suggestions and cards as they come, and `completed` once the provider says the turn
 * is over. A stream that ends without `completed` broke off. A failure is thrown.
 */
export type BotChatEvent =
  | { readonly type: 'started'; readonly chatId: string; readonly conversationId: string | null }
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'follow_up'; readonly text: string }
  | { readonly type: 'card'; readonly card: Readonly<Record<string, unknown>> }
  | { readonly type: 'completed'; readonly usage: BotChatUsage | null };

/** A finished turn, read whole. */
export interface BotChatResult {
  readonly chatId: string;
  /** The provider's conversation; null for a provider that keeps none. */
  readonly conversationId: string | null;
  readonly answer: string;
  readonly followUps: readonly string[];
  readonly cards: readonly Readonly<Record<string, unknown>>[];
  /** null when the provider reported none. */
  readonly usage: BotChatUsage | null;
}

export interface BotChatOptions {
  readonly signal?: AbortSignal;
  /** How long a turn may run at the provider before the gateway gives up on it (a provider that is polled). */
  readonly waitMs: number;
  /** Waits between polls; tests replace it. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * A protocol's bot-chat adapter. `chat` runs a turn to its end and reads it whole; `stream` opens a
 * streamed turn and resolves once the provider has accepted it (a refusal rejects, before any
 * event), its events then read as they come. Each throws the protocol's UpstreamError.
 */
export interface BotChatAdapter {
  /** Whether the provider keeps a conversation's earlier turns (else the gateway sends them with each turn). */
  readonly keepsConversations: boolean;
  /** The media kinds its bots take in a message. */
  readonly media: readonly BotMediaKind[];
  chat(transport: WireTransport, ask: BotChatAsk, options: BotChatOptions): Promise<BotChatResult>;
  stream(transport: WireEventTransport, ask: BotChatAsk, signal?: AbortSignal): Promise<AsyncGenerator<BotChatEvent>>;
}
