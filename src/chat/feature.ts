import Router from '@koa/router';
import type { FeatureFactory } from '../feature-types';
import type { GatewayState } from '../http/context';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { ApiError } from '../http/errors';
import { PromptTokenMemo } from '../billing/prompt-token-memo';
import { handleChatCompletion, type ChatDeps } from './chat-completions';
import { getModel, listModels } from './models-route';
import { handleResponses } from './responses';

/** The model catalog, OpenAI-compatible chat completions and the Responses interface. */
export const chatFeature: FeatureFactory<Omit<ChatDeps, 'promptTokens'> & { readonly metrics: Pick<GatewayMetrics, 'watchCache'> }> = ({ metrics, ...shared }) => {
  const promptTokens = new PromptTokenMemo();
  metrics.watchCache('prompt_tokens', () => promptTokens.stats());
  const deps: ChatDeps = { ...shared, promptTokens };
  const router = new Router<GatewayState>({ sensitive: true });
  router.get('/v1/models', (ctx) => listModels(deps.catalog, ctx));
  router.get('/v1/models/:id', (ctx) => {
    if (!getModel(deps.catalog, ctx, ctx.params.id!)) throw new ApiError(404, 'model_not_found', `The model '${ctx.params.id}' does not exist`);
  });
  router.post('/v1/chat/completions', (ctx) => handleChatCompletion(deps, ctx));
  router.post('/v1/responses', (ctx) => handleResponses(deps, ctx));
  return { routers: [router] };
};
