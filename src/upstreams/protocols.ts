import { arkProtocol } from './ark/protocol';
import { cozeProtocol } from './coze/protocol';
import { bochaProtocol } from './bocha/protocol';
import { minimaxProtocol } from './minimax/protocol';
import { openaiProtocol } from './openai/protocol';
import type { Protocol } from './protocol';
import { tavilyProtocol } from './tavily/protocol';
import { tingwuProtocol } from './tingwu/protocol';
import { volcengineOpenapiProtocol } from './volcengine-openapi/protocol';
import { volcengineSpeechProtocol } from './volcengine-speech/protocol';

/** Every provider protocol a channel may name (one line each; docs/providers.md). */
export const PROTOCOLS: ReadonlyMap<string, Protocol> = new Map(
  [openaiProtocol, arkProtocol, minimaxProtocol, volcengineOpenapiProtocol, cozeProtocol, tavilyProtocol, bochaProtocol, tingwuProtocol, volcengineSpeechProtocol].map((p) => [p.name, p]),
);

export function protocolNamed(name: string): Protocol {
  const protocol = PROTOCOLS.get(name);
  if (!protocol) throw new Error(`no provider protocol ${name}`);
  return protocol;
}
