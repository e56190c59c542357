/** Every simulated provider (one line each): mounted by all-routes.ts, listed by `npm run simulator`. */
import { arkProvider } from './ark';
import { cozeProvider } from './coze';
import { bochaProvider } from './bocha';
import { minimaxProvider } from './minimax';
import { openaiProvider } from './openai';
import { mountPath, mounted, type SimulatedProvider } from './provider';
import { tavilyProvider } from './tavily';
import { tingwuProvider } from './tingwu';
import { volcengineOpenapiProvider } from './volcengine-openapi';
import { volcengineSpeechProvider } from './volcengine-speech';
import type { ExtraRoute } from '../route';

export const SIMULATED_PROVIDERS: readonly SimulatedProvider[] = [openaiProvider, arkProvider, minimaxProvider, volcengineOpenapiProvider, cozeProvider, tavilyProvider, bochaProvider, tingwuProvider, volcengineSpeechProvider];

/** Every provider's routes at their full paths. */
export function providerRoutes(): ExtraRoute[] {
  return SIMULATED_PROVIDERS.flatMap(mounted);
}

/** Each provider's base URL on a simulator at `url` (`http://127.0.0.1:8090/ark/api/v3`). */
export function providerBaseUrls(url: string): { protocol: string; title: string; baseUrl: string }[] {
  return SIMULATED_PROVIDERS.map((p) => ({ protocol: p.protocol, title: p.title, baseUrl: `${url}${mountPath(p)}` }));
}
