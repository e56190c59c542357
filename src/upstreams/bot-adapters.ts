/** The bot-chat adapters by the protocol a channel speaks (src/upstreams/bot-chat.ts): one line per protocol. */
import { arkBotChat } from './ark/bot-chat';
import type { BotChatAdapter } from './bot-chat';
import type { Channel } from './channel';
import { cozeBotChat } from './coze/chat';

const BOT_CHAT_ADAPTERS: Readonly<Record<string, BotChatAdapter>> = { coze: cozeBotChat, ark: arkBotChat };

/** The bot-chat adapter of a channel's protocol; a protocol without one cannot serve bots (its `serves` says so). */
export function botChatAdapterOf(channel: Channel): BotChatAdapter {
  const adapter = BOT_CHAT_ADAPTERS[channel.config.protocol];
  if (!adapter) throw new Error(`channel ${channel.name} speaks ${channel.config.protocol}, which has no bot-chat adapter`);
  return adapter;
}
