import { arkProtocol } from './ark/protocol';
import { minimaxProtocol } from './minimax/protocol';
import { openaiProtocol } from './openai/protocol';
import type { Protocol } from './protocol';
import { volcengineOpenapiProtocol } from './volcengine-openapi/protocol';
import { volcenginePodcastProtocol } from './volcengine-speech/podcast-protocol';

/** Every provider protocol a channel may name (one line each; docs/providers.md). */
export const PROTOCOLS: ReadonlyMap<string, Protocol> = new Map(
  [openaiProtocol, arkProtocol, minimaxProtocol, volcengineOpenapiProtocol, volcenginePodcastProtocol].map((p) => [p.name, p]),
);

export function protocolNamed(name: string): Protocol {
  const protocol = PROTOCOLS.get(name);
  if (!protocol) throw new Error(`no provider protocol ${name}`);
  return protocol;
}
