/**
 * The OpenAI-shaped provider at `/v1`: chat completions and Responses (mounted by server.ts), and
 * the gateway's own OpenAI-shaped paths of the capabilities whose real protocol has not landed yet
 * (all-routes.ts; docs/simulator.md lists them). Its routes are registered at their full paths.
 */
import type { SimulatedProvider } from './provider';

export const openaiProvider: SimulatedProvider = {
  protocol: 'openai',
  title: 'OpenAI-shaped: chat completions, Responses, and the not-yet-moved capabilities',
  basePath: '/v1',
  routes: () => [],
};
