/** The bot-chat adapters by the protocol a channel speaks (src/upstreams/bot-chat.ts): one line per protocol. */
import { arkBotChat } from './ark/bot-chat';
import type { BotChatAdapter } from './bot-chat';
import { cozeBotChat } from './coze/chat';

const BOT_CHAT_ADAPTERS: Readonly<Record<string, BotChatAdapter>> = { coze: cozeBotChat, ark: arkBotChat };

/**
 * The bot-chat adapter of a protocol, that of the bot's channels (Upstreams.protocolOf: a bot is
 * sold only while they speak one); a protocol without one cannot serve bots (its `serves` says so).
 */
export function botChatAdapterOf(protocol: string): BotChatAdapter {
  const adapter = Object.hasOwn(BOT_CHAT_ADAPTERS, protocol) ? BOT_CHAT_ADAPTERS[protocol] : undefined;
  if (!adapter) throw new Error(`protocol ${protocol} has no bot-chat adapter`);
  return adapter;
}
