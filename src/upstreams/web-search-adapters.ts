/** The web-search adapters by the protocol a channel speaks (src/upstreams/web-search.ts): one line per protocol. */
import { bochaWebSearch } from './bocha/web-search';
import type { Channel } from './channel';
import { tavilyWebSearch } from './tavily/search';
import type { WebSearchAdapter } from './web-search';

const WEB_SEARCH_ADAPTERS: Readonly<Record<string, WebSearchAdapter>> = { tavily: tavilyWebSearch, bocha: bochaWebSearch };

/** The web-search adapter of a channel's protocol; a protocol without one cannot serve search (its `serves` says so). */
export function webSearchAdapterOf(channel: Channel): WebSearchAdapter {
  const adapter = WEB_SEARCH_ADAPTERS[channel.config.protocol];
  if (!adapter) throw new Error(`channel ${channel.name} speaks ${channel.config.protocol}, which has no web-search adapter`);
  return adapter;
}
